/**
 * /diff and /review below the CLI: the changes git reports in real
 * repositories, the changes a session's tools made, and a review by a
 * read-only subagent against a scripted provider.
 */
import { execFileSync } from "node:child_process";
import { mkdir, symlink, unlink, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient } from "@yoi/llm-client";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { Pod } from "../src/pod.ts";
import { GitChangesError, gitChanges } from "../src/review/git-changes.ts";
import { parseReview } from "../src/review/review.ts";
import { tempDir } from "./helpers.ts";

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.invalid",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.invalid",
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

async function repo(): Promise<string> {
  const root = await tempDir("yoi-review-");
  git(root, "init", "-q", "-b", "main");
  await writeFile(path.join(root, "a.txt"), "one\ntwo\nthree\n");
  await writeFile(path.join(root, "c.txt"), "gone soon\n");
  git(root, "add", ".");
  git(root, "commit", "-q", "-m", "base");
  return root;
}

const servers: ScriptedServer[] = [];
const pods: Pod[] = [];
afterEach(async () => {
  await Promise.all(pods.splice(0).map((p) => p.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("gitChanges", () => {
  it("against HEAD: modified, deleted and untracked files with their texts and one patch", async () => {
    const root = await repo();
    await writeFile(path.join(root, "a.txt"), "one\nTWO\nthree\n");
    await unlink(path.join(root, "c.txt"));
    await writeFile(path.join(root, "b.txt"), "new\n");
    const changes = await gitChanges(root, { env: GIT_ENV });
    expect(changes.against).toBe("HEAD");
    expect(changes.files).toEqual([
      {
        path: "a.txt",
        status: "modified",
        before: "one\ntwo\nthree\n",
        after: "one\nTWO\nthree\n",
        binary: false,
      },
      { path: "b.txt", status: "untracked", after: "new\n", binary: false },
      { path: "c.txt", status: "deleted", before: "gone soon\n", binary: false },
    ]);
    expect(changes.patch).toContain("-two\n+TWO\n");
    expect(changes.patch).toContain("deleted file mode");
    expect(changes.patch).toContain(
      "diff --git a/b.txt b/b.txt\nnew file (untracked)\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1,1 @@\n+new\n",
    );
  });

  it("with a base: what the branch committed since the merge base plus what is not committed", async () => {
    const root = await repo();
    git(root, "checkout", "-q", "-b", "feature");
    await writeFile(path.join(root, "a.txt"), "one\ntwo\nthree\nfour\n");
    git(root, "commit", "-q", "-am", "four");
    await writeFile(path.join(root, "c.txt"), "changed\n");
    const changes = await gitChanges(root, { base: "main", env: GIT_ENV });
    expect(changes.against).toMatch(/^main\.\.\.HEAD \(merge base [0-9a-f]{7}\)$/);
    expect(changes.files.map((f) => `${f.status} ${f.path}`)).toEqual(["modified a.txt", "modified c.txt"]);
    expect(changes.patch).toContain("+four");
    expect(changes.patch).toContain("+changed");
    expect((await gitChanges(root, { env: GIT_ENV })).files.map((f) => f.path)).toEqual(["c.txt"]);
  });

  it("only under the scope root, paths relative to it; a link is never followed", async () => {
    const root = await repo();
    await mkdir(path.join(root, "sub"));
    await writeFile(path.join(root, "sub", "x.txt"), "x\n");
    await writeFile(path.join(root, "a.txt"), "changed\n");
    const outside = await tempDir("yoi-outside-");
    await writeFile(path.join(outside, "secret"), "s3cret\n");
    await symlink(path.join(outside, "secret"), path.join(root, "sub", "link"));
    const changes = await gitChanges(path.join(root, "sub"), { env: GIT_ENV });
    expect(changes.files).toEqual([
      { path: "link", status: "untracked", binary: false },
      { path: "x.txt", status: "untracked", after: "x\n", binary: false },
    ]);
    expect(changes.patch).not.toContain("s3cret");
  });

  it("says what is wrong: a base git does not know, an option for a base, no repository", async () => {
    const root = await repo();
    await expect(gitChanges(root, { base: "nope", env: GIT_ENV })).rejects.toMatchObject({
      code: "bad_base",
      message:
        '"nope" is not a branch, tag or commit in this repository (try a branch name like main, or a commit hash)',
    });
    await expect(gitChanges(root, { base: "--output=/tmp/x", env: GIT_ENV })).rejects.toMatchObject({
      code: "bad_base",
    });
    const plain = await tempDir("yoi-plain-");
    const error = await gitChanges(plain, { env: GIT_ENV }).catch((e: unknown) => e);
    expect(GitChangesError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "not_a_repository" });
  });

  it("before the first commit, everything is added", async () => {
    const root = await tempDir("yoi-review-");
    git(root, "init", "-q", "-b", "main");
    await writeFile(path.join(root, "a.txt"), "a\n");
    git(root, "add", "a.txt");
    const changes = await gitChanges(root, { env: GIT_ENV });
    expect(changes.against).toBe("an empty repository (no commits yet)");
    expect(changes.files).toEqual([{ path: "a.txt", status: "added", after: "a\n", binary: false }]);
  });
});

describe("parseReview", () => {
  it("reads the findings of the last JSON block and keeps the words", () => {
    const answer =
      'Looks mostly fine.\n\n```json\n{"findings":[{"file":"a.ts","line":3,"severity":"high","text":"off by one"}]}\n```';
    expect(parseReview(answer)).toEqual({
      summary: "Looks mostly fine.",
      findings: [{ file: "a.ts", line: 3, severity: "high", text: "off by one" }],
    });
  });

  it("says why when the answer has no block, bad JSON or the wrong shape", () => {
    expect(parseReview("All good.")).toEqual({
      summary: "All good.",
      parseError: "the reviewer's answer has no JSON block of findings",
    });
    expect(parseReview("x\n```json\n{findings: []}\n```").parseError).toMatch(
      /^the findings block is not valid JSON: /,
    );
    expect(
      parseReview('x\n```json\n{"findings":[{"file":"a","line":0,"severity":"bad","text":"t"}]}\n```')
        .parseError,
    ).toMatch(/^the findings block does not have the expected shape: findings\.0\.line: /);
  });
});

describe("in a session", () => {
  async function open(root: string, script: Parameters<typeof startScriptedServer>[0]["script"]) {
    const s = await startScriptedServer({ provider: "anthropic", validate: true, script });
    servers.push(s);
    const pod = await Pod.create({
      cwd: root,
      dataDir: path.join(root, "..", `${path.basename(root)}-data`),
      fsync: "never",
      instructions: false,
      environment: false,
      sandbox: false,
      lsp: false,
      permissionMode: "acceptEdits",
      client: createClient({
        provider: "anthropic",
        model: "claude-haiku-4-5",
        apiKey: "k",
        baseURL: s.baseURL,
      }),
    });
    pods.push(pod);
    return { s, pod };
  }

  it("review: a read-only subagent gets the diff and its findings come back validated", async () => {
    const root = await repo();
    await writeFile(path.join(root, "a.txt"), "one\nTWO\nthree\n");
    const { s, pod } = await open(root, [
      { type: "reply", toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "a.txt" } }] },
      {
        type: "reply",
        text: 'One problem.\n```json\n{"findings":[{"file":"a.txt","line":2,"severity":"medium","text":"TWO is shouting"}]}\n```',
      },
    ]);
    const result = await pod.review();
    expect(result).toEqual({
      against: "HEAD",
      files: 1,
      summary: "One problem.",
      findings: [{ file: "a.txt", line: 2, severity: "medium", text: "TWO is shouting" }],
      answer: expect.stringContaining("One problem."),
      // Both of the reviewer's model calls.
      usage: expect.objectContaining({ inputTokens: 20, outputTokens: 10 }),
    });
    const first = s.requests[0] as { tools: { name: string }[]; messages: { content: { text: string }[] }[] };
    expect(first.tools.map((t) => t.name).sort()).toEqual([
      "glob",
      "grep",
      "inspect",
      "list_dir",
      "read_file",
    ]);
    expect(first.messages[0]?.content[0]?.text).toContain("-two\n+TWO");
    expect(JSON.stringify(s.requests[1])).toContain("three");
  });

  it("review: nothing to review is undefined, with no model call; an answer without findings keeps its words", async () => {
    const root = await repo();
    const { s, pod } = await open(root, [{ type: "reply", text: "I could not decide." }]);
    expect(await pod.review()).toBeUndefined();
    expect(s.requests).toHaveLength(0);
    await writeFile(path.join(root, "a.txt"), "changed\n");
    expect(await pod.review()).toMatchObject({
      summary: "I could not decide.",
      parseError: "the reviewer's answer has no JSON block of findings",
    });
    expect(await pod.review({ base: "nope" }).catch((e: unknown) => e)).toMatchObject({ code: "bad_base" });
  });

  it("sessionChanges: each file the tools changed, as before the first change and now", async () => {
    const root = await tempDir("yoi-review-");
    await writeFile(path.join(root, "old.txt"), "before\n");
    const { pod } = await open(root, [
      {
        type: "reply",
        toolCalls: [{ id: "c1", name: "write_file", arguments: { path: "new.txt", content: "n1\n" } }],
      },
      { type: "reply", toolCalls: [{ id: "c2", name: "read_file", arguments: { path: "old.txt" } }] },
      {
        type: "reply",
        toolCalls: [
          {
            id: "c3",
            name: "edit_file",
            arguments: { path: "old.txt", old_string: "before", new_string: "after" },
          },
        ],
      },
      {
        type: "reply",
        toolCalls: [{ id: "c4", name: "write_file", arguments: { path: "new.txt", content: "n2\n" } }],
      },
      { type: "reply", text: "done" },
    ]);
    expect(await pod.sessionChanges()).toEqual([]);
    await pod.run("change things");
    expect(await pod.sessionChanges()).toEqual([
      { path: "new.txt", status: "added", after: "n2\n", binary: false },
      { path: "old.txt", status: "modified", before: "before\n", after: "after\n", binary: false },
    ]);
  });
});
