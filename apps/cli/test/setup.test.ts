/**
 * `yoi setup` / `yoi logout` and the first run without a key, on the
 * shipped bundle against a scripted server: the key is typed without echo,
 * checked with one 1-token request, saved 0600 in ~/.yoi/credentials.json,
 * used when no variable is set (a variable still wins), never on screen or
 * in a session; a rejected key saves nothing; a damaged file is an error
 * naming it; logout removes it.
 */
import { execFileSync } from "node:child_process";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, runYoi, tempWorld, yoiArgv } from "./helpers.ts";
import { TmuxSession, waitForFile } from "./tmux.ts";

const sessions: TmuxSession[] = [];
const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  for (const s of servers.splice(0)) await s.close();
});

const KEY = "sk-ant-typed-secret-7f3a9c";
const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** yoi in a terminal with no key in its environment (unlike tmux.ts's yoiCommand). */
function bare(opts: { project: string; home: string; baseURL: string; args: string[]; out: string }): string {
  const env = [
    `HOME=${quote(opts.home)}`,
    `PATH=${quote(process.env.PATH ?? "/usr/bin:/bin")}`,
    "TERM=xterm-256color",
    "LANG=C.UTF-8",
    `ANTHROPIC_BASE_URL=${quote(opts.baseURL)}`,
  ].join(" ");
  const yoi = [...yoiArgv(), ...opts.args].map(quote).join(" ");
  return `cd ${quote(opts.project)} && env -i ${env} ${yoi}; echo "EXIT=$?" > ${quote(`${opts.out}.exit`)}; sleep 30`;
}

/** The key request `index` carried (the SDK sends it as x-api-key or as a bearer token). */
function sentKey(server: ScriptedServer, index: number): string | undefined {
  const headers = server.headers[index];
  const bearer = headers?.authorization?.replace(/^Bearer /, "");
  return (headers?.["x-api-key"] as string | undefined) ?? bearer;
}

/** Every file below `dir` as one string (the session logs, for a key that must not be there). */
function everything(dir: string): string {
  try {
    return execFileSync("grep", ["-r", "-a", "-h", "", dir], { encoding: "utf8", maxBuffer: 64 << 20 });
  } catch {
    return "";
  }
}

describe.skipIf(!TmuxSession.available())("yoi setup in a terminal (tmux)", () => {
  it("saves a checked key 0600; print mode uses it; the environment wins; logout removes it", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        { type: "reply", text: "O" },
        { type: "reply", text: "Using the saved key." },
        { type: "reply", text: "Using the variable." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const out = path.join(home, "setup");
    const tty = TmuxSession.start(bare({ project, home, baseURL: server.baseURL, args: ["setup"], out }));
    sessions.push(tty);
    await tty.waitFor("Which provider's key do you have?");
    await tty.waitFor("provider [1-3, default 1] ›");
    tty.type("7");
    tty.keys("Enter");
    await tty.waitFor('"7" is not one of them');
    tty.type("anthropic");
    tty.keys("Enter");
    await tty.waitFor("anthropic API key (typing is not shown; Enter ends):");
    tty.type(KEY);
    tty.keys("Enter");
    await tty.waitFor("✓ anthropic accepted the key; saved to");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
    expect(tty.screen()).not.toContain(KEY.slice(8));
    // One request of one token, with the typed key.
    expect(server.requests).toHaveLength(1);
    expect((server.requests[0] as { max_tokens: number }).max_tokens).toBe(1);
    expect(sentKey(server, 0)).toBe(KEY);
    const file = path.join(home, ".yoi", "credentials.json");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ keys: { ANTHROPIC_API_KEY: KEY } });

    // No variable set: the saved key is used (the model picked for it).
    const env = cleanEnv(home, { ANTHROPIC_BASE_URL: server.baseURL });
    const saved = await runYoi(["-p", "hi"], { cwd: project, env });
    expect(saved).toMatchObject({ code: 0, stdout: "Using the saved key.\n" });
    expect(saved.stderr).toContain("its key is saved (yoi setup)");
    expect(sentKey(server, 1)).toBe(KEY);
    // The variable wins.
    const fromEnv = await runYoi(["-p", "-m", "anthropic/claude-haiku-4-5", "hi"], {
      cwd: project,
      env: { ...env, ANTHROPIC_API_KEY: "env-key" },
    });
    expect(fromEnv).toMatchObject({ code: 0, stdout: "Using the variable.\n" });
    expect(sentKey(server, 2)).toBe("env-key");
    // Neither the session logs nor anything else under ~/.yoi but the credentials file holds the key.
    const logs = everything(path.join(home, ".yoi", "sessions"));
    expect(logs).toContain("Using the saved key.");
    expect(logs).not.toContain(KEY);

    const logout = await runYoi(["logout"], { cwd: project, env });
    expect(logout).toMatchObject({ code: 0 });
    expect(logout.stdout).toContain("removed the saved key ANTHROPIC_API_KEY");
    await expect(stat(file)).rejects.toThrow();
    const again = await runYoi(["logout"], { cwd: project, env });
    expect(again.stdout).toContain("no saved keys");
    const none = await runYoi(["-p", "hi"], { cwd: project, env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("Run yoi setup to save a key");
  }, 180_000);

  it("a rejected key is said and saves nothing", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "error", status: 401, message: "invalid x-api-key" }],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const out = path.join(home, "setup");
    // At 40 columns: what yoi says is laid out between words, not cut by the terminal.
    const tty = TmuxSession.start(
      bare({ project, home, baseURL: server.baseURL, args: ["setup", "--provider", "anthropic"], out }),
      { width: 40 },
    );
    sessions.push(tty);
    await tty.waitFor("anthropic API key");
    tty.type("sk-wrong-key-123456");
    tty.keys("Enter");
    await tty.waitFor("nothing saved;");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=1\n");
    const said = tty.screen().slice(tty.screen().indexOf("✗"));
    expect(said.replace(/\s+/g, " ")).toContain(
      "✗ anthropic rejected the API key (HTTP 401); check the key you typed",
    );
    const words = new Set(said.split(/\s+/));
    expect(said.replace(/\s+/g, " ")).toContain("nothing saved; run yoi setup to try again");
    for (const word of ["rejected", "(HTTP", "401);", "check", "typed", "nothing", "saved;", "again"])
      expect(words).toContain(word);
    for (const line of tty.screen({ joined: true }).split("\n"))
      expect([...line].length).toBeLessThanOrEqual(40);
    expect(tty.screen()).not.toContain("sk-wrong-key-123456");
    await expect(stat(path.join(home, ".yoi", "credentials.json"))).rejects.toThrow();
  }, 120_000);

  it("a first interactive run without a key offers the set-up and goes on with the saved key", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        { type: "reply", text: "O" },
        { type: "reply", text: "Hello from the first run." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const out = path.join(home, "run");
    const tty = TmuxSession.start(bare({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor("no API key is set up. Set one up now? (yoi setup) [Y/n]");
    tty.keys("Enter");
    await tty.waitFor("provider [1-3, default 1] ›");
    tty.keys("Enter");
    await tty.waitFor("anthropic API key (typing is not shown; Enter ends):");
    tty.type(KEY);
    tty.keys("Enter");
    await tty.waitFor("✓ anthropic accepted the key");
    await tty.waitFor(/^(?:\S+ )?›\s*$/m);
    tty.type("hello");
    tty.keys("Enter");
    await tty.waitFor("Hello from the first run.");
    expect(sentKey(server, 1)).toBe(KEY);
    expect(tty.screen()).not.toContain(KEY.slice(8));
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
    expect(everything(path.join(home, ".yoi", "sessions"))).not.toContain(KEY);
  }, 120_000);
});

describe("credentials: bad input", () => {
  it("a damaged credentials file is a clear error naming it; logout removes it", async () => {
    const { home, project } = await tempWorld();
    const file = path.join(home, ".yoi", "credentials.json");
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, '{ "keys": { "ANTHROPIC_API_KEY": 42 } }', { mode: 0o600 });
    const env = cleanEnv(home);
    const run = await runYoi(["-p", "hi"], { cwd: project, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `yoi: ${file} is damaged (the key of ANTHROPIC_API_KEY is not a string); run yoi logout to remove it and yoi setup to save a key again\n`,
    );
    await writeFile(file, "{ not json");
    const other = await runYoi(["-p", "-m", "anthropic/claude-haiku-4-5", "hi"], {
      cwd: project,
      env: { ...env, ANTHROPIC_API_KEY: "k" },
    });
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(`${file} is damaged (it is not valid JSON)`);
    expect(await readFile(file, "utf8")).toBe("{ not json");
    const logout = await runYoi(["logout"], { cwd: project, env });
    expect(logout.code).toBe(0);
    await expect(stat(file)).rejects.toThrow();
  });

  it("setup needs a terminal and a known provider", async () => {
    const { home, project } = await tempWorld();
    const piped = await runYoi(["setup"], { cwd: project, env: cleanEnv(home) });
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain("yoi setup asks for the key without showing it, so it needs a terminal");
    const wrong = await runYoi(["logout", "--provider", "acme"], { cwd: project, env: cleanEnv(home) });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--provider must be one of anthropic, openai, gemini; got "acme"');
  });
});
