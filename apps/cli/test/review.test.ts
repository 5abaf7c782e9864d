/**
 * `/review` in print mode (`yoi -p "/review"`, `yoi -p "/review main"`) as
 * it ships: a real repository, a scripted provider for the reviewer.
 */
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, jsonLines, runYoi, tempWorld } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

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

const FINDINGS =
  'The division can fail.\n```json\n{"findings":[{"file":"src/calc.js","line":2,"severity":"high","text":"divides by b without checking for 0"},{"file":"src/calc.js","line":null,"severity":"low","text":"no tests"}]}\n```';

async function world(script: ScriptStep[]) {
  const server = await startScriptedServer({ provider: "anthropic", script, validate: true });
  servers.push(server);
  const { home, project } = await tempWorld({ "src/calc.js": "export const div = (a, b) => a;\n" });
  git(project, "init", "-q", "-b", "main");
  git(project, "add", ".");
  git(project, "commit", "-q", "-m", "base");
  const env = cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.baseURL });
  const run = (...args: string[]) =>
    runYoi(["-p", "--model", "anthropic/claude-haiku-4-5", ...args], { cwd: project, env });
  return { server, project, run };
}

describe('yoi -p "/review"', () => {
  it("prints the findings, most severe first; the reviewer got the diff and read-only tools", async () => {
    const { server, project, run } = await world([{ type: "reply", text: FINDINGS }]);
    await writeFile(path.join(project, "src/calc.js"), "export const div = (a, b) =>\n  a / b;\n");
    const r = await run("/review");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        "review of 1 changed file against HEAD",
        "The division can fail.",
        "high src/calc.js:2 divides by b without checking for 0",
        "low src/calc.js no tests",
        "",
      ].join("\n"),
    );
    const request = server.requests[0] as {
      tools: { name: string }[];
      messages: { content: { text: string }[] }[];
    };
    expect(request.tools.map((t) => t.name).sort()).toEqual([
      "glob",
      "grep",
      "inspect",
      "list_dir",
      "read_file",
    ]);
    expect(request.messages[0]?.content[0]?.text).toContain("+  a / b;");
  }, 60_000);

  it("--output json: structured findings against a base; a bad answer keeps its words and says why", async () => {
    const { project, run } = await world([
      { type: "reply", text: FINDINGS },
      { type: "reply", text: "Looks fine to me, nothing to add." },
    ]);
    git(project, "checkout", "-q", "-b", "feature");
    await writeFile(path.join(project, "src/calc.js"), "export const div = (a, b) => a / b;\n");
    git(project, "commit", "-q", "-am", "divide");
    const r = await run("--output", "json", "/review main");
    expect(r.code).toBe(0);
    const [result] = jsonLines(r.stdout);
    expect(result).toMatchObject({
      type: "result",
      status: "completed",
      text: "The division can fail.",
      review: {
        against: expect.stringMatching(/^main\.\.\.HEAD \(merge base [0-9a-f]{7}\)$/),
        files: 1,
        findings: [
          { file: "src/calc.js", line: 2, severity: "high", text: "divides by b without checking for 0" },
          { file: "src/calc.js", line: null, severity: "low", text: "no tests" },
        ],
      },
    });
    const bad = await run("--output", "json", "/review main");
    expect(bad.code).toBe(0);
    expect(jsonLines(bad.stdout)[0]).toMatchObject({
      text: "Looks fine to me, nothing to add.",
      review: { findings: null, parse_error: "the reviewer's answer has no JSON block of findings" },
    });
    expect(bad.stderr).toContain("the review's findings could not be read");
  }, 60_000);

  it("nothing to review, a base git does not know, no repository: said plainly, no model call", async () => {
    const { server, project, run } = await world([]);
    const clean = await run("/review");
    expect(clean.code).toBe(0);
    expect(clean.stdout).toBe("nothing to review: no changes against HEAD\n");
    const bad = await run("/review nosuchbranch");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('/review: "nosuchbranch" is not a branch, tag or commit in this repository');
    await import("node:fs/promises").then((fs) => fs.rm(path.join(project, ".git"), { recursive: true }));
    const none = await run("/review");
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("is not in a git repository");
    expect(server.requests).toHaveLength(0);
  }, 60_000);
});
