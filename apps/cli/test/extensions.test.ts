/**
 * MCP servers, custom commands and hooks from the command line: `yoi mcp
 * list`, trust of a project's own servers and hooks, and in a real terminal
 * /help, /mcp, a custom command and an MCP prompt.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, runYoi, tempWorld, yoiArgv } from "./helpers.ts";
import { TmuxSession, waitForFile } from "./tmux.ts";

const EVERYTHING = fileURLToPath(
  new URL("../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url),
);
const everything = { command: process.execPath, args: [EVERYTHING, "stdio"] };

const servers: ScriptedServer[] = [];
const sessions: TmuxSession[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  for (const s of servers.splice(0)) await s.close();
});

async function userConfig(home: string, config: unknown): Promise<void> {
  await mkdir(path.join(home, ".yoi"), { recursive: true });
  await writeFile(path.join(home, ".yoi", "config.jsonc"), JSON.stringify(config));
}

describe("yoi mcp list", () => {
  it("lists each server with its state and tools, and says why one failed", async () => {
    const { home, project } = await tempWorld();
    await userConfig(home, {
      mcpServers: {
        ev: everything,
        gone: { command: "/nonexistent/mcp-server" },
        typo: { url: "not a url" },
      },
    });
    const r = await runYoi(["mcp", "list"], { cwd: project, env: cleanEnv(home) });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ev ready \(stdio\) · 13 tools · 4 prompts · resources$/m);
    expect(r.stdout).toContain("mcp__ev__echo");
    expect(r.stdout).toContain("/mcp__ev__args-prompt");
    expect(r.stdout).toMatch(
      /^gone failed \(stdio\)\n {2}could not start: the program "\/nonexistent\/mcp-server" was not found/m,
    );
    expect(r.stdout).toMatch(/^typo failed \(unknown\)\n {2}url: an http\(s\) URL/m);
  }, 90_000);

  it("says so when nothing is configured, and rejects unknown subcommands", async () => {
    const { home, project } = await tempWorld();
    const r = await runYoi(["mcp", "list"], { cwd: project, env: cleanEnv(home) });
    expect(r.stdout).toMatch(/^no MCP servers configured/);
    const bad = await runYoi(["mcp", "add"], { cwd: project, env: cleanEnv(home) });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('yoi: yoi mcp takes one subcommand: list (got "add")\n');
  }, 60_000);
});

describe("a project's MCP servers and hooks run commands, so they need trust", () => {
  it("an untrusted project's servers and hooks never start, in print mode and in yoi mcp list", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        { type: "reply", text: "hi" },
        { type: "reply", text: "hi" },
      ],
    });
    servers.push(server);
    const config = JSON.stringify({
      mcpServers: { evil: { command: "/bin/sh", args: ["-c", "touch pwned-by-mcp"] } },
      hooks: { UserPromptSubmit: [{ command: "touch pwned-by-hook" }] },
    });
    const { home, project } = await tempWorld({ ".yoi/config.jsonc": config });
    const env = cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL });
    const printed = await runYoi(["-p", "-m", "anthropic/claude-haiku-4-5", "hello"], { cwd: project, env });
    expect(printed.code).toBe(0);
    expect(printed.stderr).toContain("this project is not trusted yet");
    expect(printed.stderr).toContain("mcpServers.evil.command");
    const listed = await runYoi(["mcp", "list"], { cwd: project, env });
    expect(listed.stderr).toContain("this project is not trusted yet");
    expect(listed.stdout).toMatch(/^no MCP servers configured/);
    expect(existsSync(path.join(project, "pwned-by-mcp"))).toBe(false);
    expect(existsSync(path.join(project, "pwned-by-hook"))).toBe(false);

    // The control: trusted, both run.
    const trusted = await runYoi(["-p", "-m", "anthropic/claude-haiku-4-5", "hello"], {
      cwd: project,
      env: { ...env, YOI_TRUST_PROJECT: "1" },
    });
    expect(trusted.code).toBe(0);
    expect(existsSync(path.join(project, "pwned-by-hook"))).toBe(true);
    expect(existsSync(path.join(project, "pwned-by-mcp"))).toBe(true);
  }, 90_000);

  it("Claude Code's .mcp.json: its servers start once the project is trusted, and not before", async () => {
    const { home, project } = await tempWorld({
      ".mcp.json": JSON.stringify({ mcpServers: { ev: everything } }),
    });
    const env = cleanEnv(home);
    const untrusted = await runYoi(["mcp", "list"], { cwd: project, env });
    expect(untrusted.stderr).toContain(`ignoring what ${path.join(project, ".mcp.json")} sets`);
    expect(untrusted.stderr).toContain("mcpServers.ev.command");
    expect(untrusted.stdout).toMatch(/^no MCP servers configured/);
    const trusted = await runYoi(["mcp", "list"], { cwd: project, env: { ...env, YOI_TRUST_PROJECT: "1" } });
    expect(trusted.stderr).toBe("");
    expect(trusted.stdout).toMatch(/^ev ready \(stdio\) · 13 tools/m);
    const shown = await runYoi(["config"], { cwd: project, env: { ...env, YOI_TRUST_PROJECT: "1" } });
    expect(shown.stdout).toContain(`# config files read: ${path.join(project, ".mcp.json")}`);
    expect(shown.stdout).toMatch(/^mcpServers\.ev\.command\s+.*\.mcp\.json$/m);
  }, 90_000);
});

describe("custom commands in print mode", () => {
  it("yoi -p /name expands the command; an MCP prompt with a missing argument is a usage error; other /text is sent as is", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        { type: "reply", text: "hi there" },
        { type: "reply", text: "a path" },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ ".yoi/commands/greet.md": "Say hello to $1 in $2." });
    await userConfig(home, { mcpServers: { ev: everything } });
    const env = cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL });
    const args = ["-p", "-m", "anthropic/claude-haiku-4-5"];
    const ok = await runYoi([...args, "/greet Ann French"], { cwd: project, env });
    expect(ok.stdout).toBe("hi there\n");
    expect(JSON.stringify(server.requests[0])).toContain("Say hello to Ann in French.");
    const missing = await runYoi([...args, "/mcp__ev__args-prompt"], { cwd: project, env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      "/mcp__ev__args-prompt: missing city: usage /mcp__ev__args-prompt <city> [state] (or name=value) — nothing was sent",
    );
    const plain = await runYoi([...args, "/usr/bin/env: what is it?"], { cwd: project, env });
    expect(plain.stdout).toBe("a path\n");
    expect(JSON.stringify(server.requests[1])).toContain("/usr/bin/env: what is it?");
  }, 90_000);
});

describe("extensions with YAML front matter, through the shipped bundle", () => {
  // The bundle once skipped every file with front matter (its YAML parser came out of a chunk without its
  // named exports): /review went to the model as text, and no skill or agent loaded.
  const files = {
    "src/a.ts": "export const a = 1;\n",
    ".yoi/commands/review.md":
      "---\ndescription: Review a file for bugs\nargument-hint: <file>\n---\nReview $1 and list the bugs.\n",
    ".yoi/skills/pdf-forms/SKILL.md":
      "---\nname: pdf-forms\ndescription: Fill in PDF forms with this folder's script.\n---\nRun fill.py with the form.\n",
    ".yoi/skills/pdf-forms/fill.py": "print('filled')\n",
    ".yoi/agents/checker.md":
      "---\ndescription: Checks one file for mistakes.\ntools: read_file, grep\n---\nYou are the checker agent.\n",
  };
  const args = ["-p", "-m", "anthropic/claude-haiku-4-5"];

  it("a custom command expands; a skill is listed and loads; a named agent runs with its own prompt", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        { type: "reply", text: "reviewed" },
        { type: "reply", toolCalls: [{ id: "s1", name: "skill", arguments: { name: "pdf-forms" } }] },
        { type: "reply", text: "skill read" },
        {
          type: "reply",
          toolCalls: [
            {
              id: "t1",
              name: "task",
              arguments: { description: "check a.ts", prompt: "Check src/a.ts.", agent: "checker" },
            },
          ],
        },
        { type: "reply", text: "a.ts is fine" },
        { type: "reply", text: "checked" },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld(files);
    const env = cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL });

    const review = await runYoi([...args, "/review src/a.ts"], { cwd: project, env });
    expect(review.stderr).not.toContain("skipped");
    expect(review.stdout).toBe("reviewed\n");
    const sent = JSON.stringify(server.requests[0]);
    expect(sent).toContain("Review src/a.ts and list the bugs.");
    expect(sent).not.toContain("/review");

    const skill = await runYoi([...args, "fill in the form"], { cwd: project, env });
    expect(skill.stderr).not.toContain("skipped");
    expect(skill.stdout).toBe("skill read\n");
    expect(JSON.stringify(server.requests[1])).toContain("Fill in PDF forms with this folder's script.");
    const loaded = JSON.stringify(server.requests[2]);
    expect(loaded).toContain("[Skill: pdf-forms]");
    expect(loaded).toContain("Run fill.py with the form.");
    expect(loaded).toContain("- fill.py");

    const agent = await runYoi([...args, "check a.ts with the checker"], { cwd: project, env });
    expect(agent.stderr).not.toContain("skipped");
    expect(agent.code, agent.stderr).toBe(0);
    expect(agent.stdout).toBe("checked\n");
    expect(JSON.stringify(server.requests[3])).toContain("checker: Checks one file for mistakes.");
    // The subagent's own request: the agent file's body is its system prompt, its tools are the two it names
    // (and inspect, which every worker with a blob store has for reading stored outputs back).
    const sub = server.requests[4] as { system?: unknown; tools?: { name: string }[] };
    expect(JSON.stringify(sub.system)).toContain("You are the checker agent.");
    expect((sub.tools ?? []).map((t) => t.name).sort()).toEqual(["grep", "inspect", "read_file"]);
    expect(JSON.stringify(server.requests[5])).toContain("a.ts is fine");
  }, 90_000);
});

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

describe.skipIf(!TmuxSession.available())("extensions in a real terminal (tmux)", () => {
  it("/help lists custom commands and MCP prompts with their source; a command and a prompt submit their text; /mcp", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        { type: "reply", text: "Reviewed." },
        { type: "reply", text: "Weather noted." },
        {
          type: "reply",
          toolCalls: [{ id: "toolu_echo", name: "mcp__ev__echo", arguments: { message: "from tmux" } }],
        },
        { type: "reply", text: "Echoed." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({
      "src/a.ts": "export const a = 1;\n",
      ".yoi/commands/review.md":
        "---\ndescription: Review a file for bugs\nargument-hint: <file>\n---\nReview @$1 and list the bugs.\n",
    });
    await userConfig(home, { mcpServers: { ev: everything } });
    await mkdir(path.join(home, ".yoi", "commands"), { recursive: true });
    await writeFile(path.join(home, ".yoi", "commands", "standup.md"), "Summarize what changed today.\n");
    const out = path.join(home, "run");
    const env = [
      `HOME=${quote(home)}`,
      `PATH=${quote(process.env.PATH ?? "/usr/bin:/bin")}`,
      "TERM=xterm-256color",
      "LANG=C.UTF-8",
      "ANTHROPIC_API_KEY=test-key",
      `ANTHROPIC_BASE_URL=${quote(server.baseURL)}`,
    ].join(" ");
    const yoi = [...yoiArgv(), "-m", "anthropic/claude-haiku-4-5"].map(quote).join(" ");
    const tty = TmuxSession.start(
      `cd ${quote(project)} && env -i ${env} ${yoi}; echo "EXIT=$?" > ${quote(`${out}.exit`)}; sleep 30`,
    );
    sessions.push(tty);
    await tty.waitFor(/^›\s*$/m);

    tty.type("/review src/a.ts");
    tty.keys("Enter");
    // The first input waits for MCP servers still starting, so they are up after it.
    await tty.waitFor("Reviewed.");
    const first = JSON.stringify(server.requests[0]);
    expect(first).toMatch(/Review .*src\/a\.ts.* and list the bugs\./);
    expect(first).toContain("[File: src/a.ts]");
    expect(first).toContain("export const a = 1;");

    tty.type("/mcp");
    tty.keys("Enter");
    await tty.waitFor(/ev ready \(stdio\) · 13 tools/);

    tty.type("/help");
    tty.keys("Enter");
    // A line only /help prints (the /mcp answer above already names the prompt without its arguments).
    let screen = await tty.waitFor(/\/mcp__ev__args-prompt <city> \[state\]/);
    expect(screen).toMatch(
      /\/review <file>\s+Review a file for bugs \(project: \.yoi\/commands\/review\.md\)/,
    );
    expect(screen).toMatch(
      /\/standup\s+Summarize what changed today\. \(user: ~\/\.yoi\/commands\/standup\.md\)/,
    );
    expect(screen).toMatch(/\/mcp__ev__args-prompt <city> \[state\] {2}A prompt .*\(mcp: ev\)/);

    tty.type("/mcp__ev__args-prompt Tokyo");
    tty.keys("Enter");
    screen = await tty.waitFor("Weather noted.");
    expect(JSON.stringify(server.requests[1])).toContain("Tokyo");

    // An MCP tool is asked about, with its arguments shown.
    tty.type("echo something");
    tty.keys("Enter");
    screen = await tty.waitFor("[a]lways mcp__ev__echo this session");
    expect(screen).toContain("allow mcp__ev__echo");
    expect(screen).toContain('{"message":"from tmux"}');
    tty.type("y");
    tty.keys("Enter");
    await tty.waitFor("Echoed.");
    expect(JSON.stringify(server.requests[3])).toContain("Echo: from tmux");

    tty.type("/nosuch");
    tty.keys("Enter");
    await tty.waitFor("unknown command /nosuch (try /help)");
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 120_000);
});
