/**
 * `@path` refs never block (docs/design/file-refs.md#failures-become-alerts),
 * on the shipped bundle: a ref that cannot be attached (not found, outside
 * the scope, binary, a directory) is a warning that says why and how to
 * write a literal `@`, and the message is still sent with the
 * `[unresolved file ref: <path>]` placeholder. Print mode says it on stderr
 * and exits 0; the interactive screen lists what was attached and what was not.
 */
import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, jsonLines, runYoi, tempWorld } from "./helpers.ts";
import { TmuxSession, waitForFile, yoiCommand } from "./tmux.ts";

const servers: ScriptedServer[] = [];
const terminals: TmuxSession[] = [];
afterEach(async () => {
  for (const t of terminals.splice(0)) t.kill();
  for (const s of servers.splice(0)) await s.close();
});

async function replying(text: string): Promise<ScriptedServer> {
  const server = await startScriptedServer({
    provider: "anthropic",
    validate: true,
    script: [{ type: "reply", text }],
  });
  servers.push(server);
  return server;
}

/** A project with one text file, a binary one and a directory; a file beside it, outside the scope. */
async function world() {
  const w = await tempWorld({ "a.txt": "alpha\n", "blob.bin": "\u0000\u0001binary", "src/index.ts": "x\n" });
  await writeFile(path.join(w.project, "..", "outside.txt"), "OUTSIDE-SECRET\n");
  return w;
}

const BAD = {
  Injectable: "Injectable: no such file or directory",
  "types/node": "types/node: no such file or directory",
  src: "src is a directory; only a file can be attached",
  "../outside.txt": "../outside.txt is outside the scope",
  "blob.bin": "blob.bin is binary",
};

describe("@ refs that cannot be attached do not block", () => {
  it("print mode: each bad ref is a sanitised warning on stderr, the request carries its placeholder, exit 0", async () => {
    const { home, project } = await world();
    const server = await replying("Decorators mark classes.");
    const prompt =
      "decorators like @Injectable are used; see @types/node, @src, @../outside.txt, @blob.bin, " +
      "@evil\u001b[2J.txt and @a.txt. Mail \\@someone about it.";
    const r = await runYoi(["-p", "-m", "anthropic/claude-haiku-4-5", prompt], {
      cwd: project,
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL }),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Decorators mark classes.");
    const lines = r.stderr.split("\n").filter((l) => l !== "");
    for (const line of lines) expect(line).toMatch(/^yoi: /);
    // What a terminal would act on never reaches it: the escape in the ref is shown, not sent.
    expect(r.stderr).not.toContain("\u001b");
    for (const [ref, why] of Object.entries(BAD)) {
      const line = lines.find((l) => l.startsWith(`yoi: warn: @${ref} was not attached: `));
      expect(line, `${ref} in ${r.stderr}`).toBeDefined();
      expect(line).toContain(why);
      expect(line).toContain(`to send it as text, write \\@${ref}`);
    }
    expect(lines.some((l) => l.includes("@evil") && l.includes("was not attached"))).toBe(true);
    expect(r.stderr).not.toContain("nothing was sent");
    expect(r.stderr).not.toContain("a.txt was not attached");
    expect(r.stderr).not.toContain("someone");

    expect(server.requests).toHaveLength(1);
    const sent = JSON.stringify(server.requests[0]);
    for (const ref of Object.keys(BAD)) expect(sent).toContain(`[unresolved file ref: ${ref}]`);
    expect(sent).toContain("[File: a.txt]");
    expect(sent).toContain("Mail @someone about it.");
    expect(sent).not.toContain("OUTSIDE-SECRET");
    expect(server.rejections).toEqual([]);
  }, 120_000);

  it("stream-json: the warning is an alert event and the run completes", async () => {
    const { home, project } = await world();
    const server = await replying("ok");
    const r = await runYoi(
      ["-p", "--output", "stream-json", "-m", "anthropic/claude-haiku-4-5", "what does @Injectable do?"],
      {
        cwd: project,
        env: cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL }),
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const events = jsonLines(r.stdout);
    expect(events).toContainEqual({
      type: "alert",
      level: "warn",
      source: "file_ref",
      message:
        "@Injectable was not attached: Injectable: no such file or directory; to send it as text, write \\@Injectable",
    });
    expect(events.at(-1)).toMatchObject({ type: "result", status: "completed" });
    expect(JSON.stringify(server.requests[0])).toContain("what does [unresolved file ref: Injectable] do?");
  }, 120_000);

  it("interactive: the screen lists the attached refs with their size and the ones that were not", async () => {
    const { home, project } = await world();
    const server = await replying("Both read.");
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }), {
      width: 160,
    });
    terminals.push(tty);
    await tty.waitFor(/^›\s*$/m);
    tty.type("compare @a.txt with @nope.txt and @src");
    tty.keys("Enter");
    const screen = await tty.waitFor("Both read.");
    expect(screen).toContain("+ @a.txt (6 B)");
    expect(screen).toMatch(
      /! file_ref: @nope\.txt was not attached: nope\.txt: no such file or directory; to send it as text, write \\@nope\.txt/,
    );
    expect(screen).toMatch(/! file_ref: @src was not attached: src is a directory/);
    expect(screen).not.toContain("nothing was sent");
    expect(screen).not.toContain("+ @nope.txt");
    const sent = JSON.stringify(server.requests[0]);
    expect(sent).toContain("[File: a.txt]");
    expect(sent).toContain("[unresolved file ref: nope.txt]");
    await tty.waitFor(/^›\s*$/m);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 180_000);
});
