/**
 * Lasting approvals on the shipped bundle: "always for this project" in one
 * process is in force in the next (tmux, then print mode), listed by
 * `/permissions` and `yoi permissions` with its source, removable there;
 * an approval of a compound line is stored per simple command; the file
 * lives in ~/.yoi, never in the repository; a damaged file is an error
 * naming it.
 */
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, jsonLines, runYoi, tempWorld } from "./helpers.ts";
import { TmuxSession, waitForFile, yoiCommand } from "./tmux.ts";

const sessions: TmuxSession[] = [];
const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  for (const s of servers.splice(0)) await s.close();
});

const PROMPT = /^(?:\S+ )?›\s*$/m;

function bashCall(id: string, command: string) {
  return { type: "reply" as const, toolCalls: [{ id, name: "bash", arguments: { command } }] };
}

describe.skipIf(!TmuxSession.available())("approvals that last (tmux, then print mode)", () => {
  it("always for this project: stored per simple command in ~/.yoi, in force in the next process, removable", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        bashCall("toolu_1", "echo 1 | head -1"),
        { type: "reply", text: "First done." },
        // The second process: the same commands in another line, no question.
        bashCall("toolu_2", "head -1 a.txt; echo 2"),
        { type: "reply", text: "Second done." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "a.txt": "alpha\n" });
    const out = path.join(home, "run1");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor(PROMPT);
    tty.type("run it");
    tty.keys("Enter");
    await tty.waitFor("[p]roject: always, here");
    tty.type("p");
    await tty.waitFor("always in this project (/permissions lists it)");
    await tty.waitFor("First done.");
    expect(tty.screen()).toContain("→ allowed: bash(echo *), bash(head *), always in this project");
    tty.type("/permissions");
    tty.keys("Enter");
    await tty.waitFor("/permissions remove <n> removes an approval");
    const listed = tty.screen();
    expect(listed).toMatch(/1 {2}allow bash\(echo \*\) {2}~\/\.yoi\/approvals\.json \(this project\)/);
    expect(listed).toMatch(/2 {2}allow bash\(head \*\) {2}~\/\.yoi\/approvals\.json \(this project\)/);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");

    // Stored in the user's ~/.yoi, keyed by the project's real path; the repository holds nothing new.
    const file = path.join(home, ".yoi", "approvals.json");
    const stored = JSON.parse(await readFile(file, "utf8"));
    expect(Object.keys(stored.projects)).toEqual([project]);
    expect(stored.projects[project].map((a: { match: string }) => a.match)).toEqual(["echo *", "head *"]);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(project)).toEqual(["a.txt"]);

    // A second process (print mode, which cannot ask): the approvals answer for it.
    const env = cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL });
    const second = await runYoi(
      ["-p", "--output", "stream-json", "-m", "anthropic/claude-haiku-4-5", "again"],
      {
        cwd: project,
        env,
      },
    );
    expect(second.code).toBe(0);
    const permission = jsonLines(second.stdout).find((e) => e.type === "permission");
    expect(permission).toMatchObject({ tool: "bash", action: "allow", by: "rule" });
    expect(jsonLines(second.stdout).find((e) => e.type === "tool_end")).toMatchObject({ is_error: false });

    // yoi permissions lists them with their source; remove takes one away.
    const list = await runYoi(["permissions"], { cwd: project, env });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(
      /2 {2}allow bash\(head \*\) {2}~\/\.yoi\/approvals\.json \(this project\), \d{4}-/,
    );
    const removed = await runYoi(["permissions", "remove", "2"], { cwd: project, env });
    expect(removed).toMatchObject({ code: 0, stdout: "removed bash(head *) (always in this project)\n" });
    const after = JSON.parse(await readFile(file, "utf8"));
    expect(after.projects[project].map((a: { match: string }) => a.match)).toEqual(["echo *"]);
  }, 240_000);
});

describe.skipIf(!TmuxSession.available())("/permissions in a session (tmux)", () => {
  it("lists this session's grant and removes it: the next call asks again; !cmd asks nothing, still sandboxed", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        bashCall("toolu_1", "ls -a"),
        { type: "reply", text: "Listed." },
        bashCall("toolu_2", "ls -l"),
        { type: "reply", text: "Listed again." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "a.txt": "alpha\n" });
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor(PROMPT);
    tty.type("list");
    tty.keys("Enter");
    await tty.waitFor('[a]lways "ls *" this session');
    tty.type("a");
    await tty.waitFor("Listed.");
    await tty.waitFor(PROMPT);
    tty.type("/permissions");
    tty.keys("Enter");
    await tty.waitFor(/1 {2}allow bash\(ls \*\) {2}this session/);
    tty.type("/permissions remove 1");
    tty.keys("Enter");
    await tty.waitFor("removed bash(ls *) (this session)");
    tty.type("/permissions remove 9");
    tty.keys("Enter");
    await tty.waitFor("there is nothing to remove");
    tty.type("list again");
    tty.keys("Enter");
    // The grant is gone: asked again.
    await tty.waitFor("allow bash: ls -l");
    tty.type("y");
    await tty.waitFor("Listed again.");
    await tty.waitFor(PROMPT);
    // The user's own command: no question; in the sandbox a write outside the project fails.
    const outside = path.join(path.dirname(project), "outside-marker");
    tty.type(`!touch ${outside}`);
    tty.keys("Enter");
    await tty.waitFor("the output goes to the model with your next message");
    expect(tty.screen()).not.toContain("allow bash: touch");
    if (await sandboxActive(tty)) {
      await expect(stat(outside)).rejects.toThrow();
    }
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 180_000);
});

/** Whether bash runs in the OS sandbox in this session (asked with /status). */
async function sandboxActive(tty: TmuxSession): Promise<boolean> {
  tty.type("/status");
  tty.keys("Enter");
  const screen = await tty.waitFor(/sandbox\s+(active|off|unavailable)/);
  return /sandbox\s+active/.test(screen);
}

describe("yoi permissions: bad input", () => {
  it("a number out of range, a config rule, a damaged approvals file: clear errors, nothing lost", async () => {
    const { home, project } = await tempWorld();
    await mkdir(path.join(home, ".yoi"), { recursive: true });
    await writeFile(
      path.join(home, ".yoi", "config.jsonc"),
      '{ "permissions": { "rules": [{ "tool": "bash", "match": "rm *", "action": "deny" }] } }',
    );
    const env = cleanEnv(home);
    const list = await runYoi(["permissions"], { cwd: project, env });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`1  deny  bash(rm *)  ${path.join(home, ".yoi", "config.jsonc")}`);
    const config = await runYoi(["permissions", "remove", "1"], { cwd: project, env });
    expect(config.code).toBe(2);
    expect(config.stderr).toContain("#1 (bash(rm *)) comes from");
    expect(config.stderr).toContain("edit it there");
    const range = await runYoi(["permissions", "remove", "7"], { cwd: project, env });
    expect(range.code).toBe(2);
    expect(range.stderr).toContain('remove takes a number from 1 to 1 (see yoi permissions); got "7"');
    const verb = await runYoi(["permissions", "drop", "1"], { cwd: project, env });
    expect(verb.code).toBe(2);
    expect(verb.stderr).toContain("yoi permissions remove <n>");

    const file = path.join(home, ".yoi", "approvals.json");
    await writeFile(file, '{ "projects": { "x": [ { "match": 3 } ] } }');
    const damaged = await runYoi(["permissions"], { cwd: project, env });
    expect(damaged.code).toBe(2);
    expect(damaged.stderr).toContain(`${file} cannot be read as approvals`);
    expect(damaged.stderr).toContain("fix it or delete it");
    await writeFile(file, "{ not json");
    const chat = await runYoi(["-p", "-m", "anthropic/claude-haiku-4-5", "hi"], {
      cwd: project,
      env: { ...env, ANTHROPIC_API_KEY: "k" },
    });
    expect(chat.code).toBe(2);
    expect(chat.stderr).toContain(`${file} cannot be read as approvals (it is not valid JSON)`);
    // The damaged file is left as it was for the user to fix.
    expect(await readFile(file, "utf8")).toBe("{ not json");
  });
});
