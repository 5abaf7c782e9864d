/**
 * Sessions a user can trust, through the real `yoi` binary against a
 * scripted OpenAI-compatible server on 127.0.0.1: resume remembers the
 * model and server, ids by prefix, failed runs hidden, rewind from the
 * shell, fork, and a damaged log that still resumes.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, runYoi, tempWorld } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function server(script: ScriptStep[]): Promise<ScriptedServer> {
  const s = await startScriptedServer({ provider: "openai-chat", script, validate: true });
  servers.push(s);
  return s;
}

const say = (text: string): ScriptStep => ({ type: "reply", text });
const MODEL = "openai-chat/gpt-4.1-mini";

async function sessionIds(home: string): Promise<string[]> {
  const names = await readdir(path.join(home, ".yoi", "sessions")).catch(() => [] as string[]);
  return names.filter((n) => n.endsWith(".jsonl")).map((n) => n.slice(0, -6));
}

describe("resume remembers", () => {
  it("yoi -c and --resume <prefix> reuse the session's model and base URL; a wrong prefix says so", async () => {
    const s = await server([say("first answer"), say("second answer"), say("third answer")]);
    const { home, project } = await tempWorld();
    const env = cleanEnv(home);
    const first = await runYoi(["-p", "--model", MODEL, "--base-url", s.baseURL, "hi"], {
      cwd: project,
      env,
    });
    expect(first.stderr).not.toContain("error");
    expect(first.code).toBe(0);
    const again = await runYoi(["-c", "-p", "again"], { cwd: project, env });
    expect(again.stderr).toBe("");
    expect(again.stdout).toBe("second answer\n");
    const [id] = await sessionIds(home);
    const third = await runYoi(["--resume", id!.slice(0, 10), "-p", "once more"], { cwd: project, env });
    expect(third.code).toBe(0);
    expect(third.stdout).toBe("third answer\n");
    expect(await sessionIds(home)).toHaveLength(1);
    // the model saw the whole conversation on each resume
    const last = s.requests[2] as { messages: { role: string; content: unknown }[] };
    expect(JSON.stringify(last.messages)).toContain("second answer");

    const none = await runYoi(["--resume", "ffff", "-p", "x"], { cwd: project, env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no session "ffff"');
    const picked = await runYoi(["-r", "-p", "x"], { cwd: project, env });
    expect(picked.code).toBe(2);
    expect(picked.stderr).toContain("-r without an id needs a terminal");
  });

  it("the permission mode is part of the session: -c resumes in it, a flag overrides it", async () => {
    const s = await server([say("planned"), say("still planning"), say("back to normal")]);
    const { home, project } = await tempWorld();
    const env = cleanEnv(home);
    const base = ["--model", MODEL, "--base-url", s.baseURL];
    expect(
      (await runYoi(["-p", ...base, "--permission-mode", "plan", "plan it"], { cwd: project, env })).code,
    ).toBe(0);
    expect((await runYoi(["-c", "-p", "more"], { cwd: project, env })).code).toBe(0);
    expect(
      (await runYoi(["-c", "-p", "--permission-mode", "default", "go"], { cwd: project, env })).code,
    ).toBe(0);
    const notes = (i: number) => JSON.stringify(s.requests[i]).split("[Plan mode]").length - 1;
    expect(notes(0)).toBe(1);
    expect(notes(1)).toBe(2); // resumed in plan mode: the note again
    expect(notes(2)).toBe(2); // the flag's mode wins: no new note
  });

  it("a run that failed before any answer is hidden from yoi sessions, shown with --all", async () => {
    const s = await server([say("hello"), { type: "error", status: 400, message: "bad model" }]);
    const { home, project } = await tempWorld();
    const env = cleanEnv(home);
    const ok = await runYoi(["-p", "--model", MODEL, "--base-url", s.baseURL, "a good one"], {
      cwd: project,
      env,
    });
    expect(ok.code).toBe(0);
    const failed = await runYoi(["-p", "--model", MODEL, "--base-url", s.baseURL, "a failing one"], {
      cwd: project,
      env,
    });
    expect(failed.code).toBe(1);
    const listed = await runYoi(["sessions"], { cwd: project, env });
    expect(listed.stdout).toContain("a good one");
    expect(listed.stdout).not.toContain("a failing one");
    const all = await runYoi(["sessions", "--all"], { cwd: project, env });
    expect(all.stdout).toContain("a failing one");
    // short, distinct ids that --resume accepts
    const row = listed.stdout.trim().split("\n")[1]!;
    const shortId = row.split(/\s+/)[0]!;
    expect(shortId.length).toBeLessThan(36);
    expect(shortId.length).toBeGreaterThanOrEqual(8);
  });
});

describe("yoi rewind and fork", () => {
  it("puts files and conversation back to before the last turn, refusing to overwrite outside changes without --force", async () => {
    const s = await server([
      {
        type: "reply",
        toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "a.txt", content: "v1\n" } }],
      },
      say("wrote v1"),
      { type: "reply", toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "a.txt" } }] },
      {
        type: "reply",
        toolCalls: [
          { id: "e1", name: "edit_file", arguments: { path: "a.txt", old_string: "v1", new_string: "v2" } },
        ],
      },
      say("edited to v2"),
      say("forked answer"),
    ]);
    const { home, project } = await tempWorld({
      ".yoi/config.jsonc":
        '{ "permissions": { "default": { "write_file": "allow", "edit_file": "allow" } } }',
    });
    const env = cleanEnv(home, { YOI_TRUST_PROJECT: "1" });
    const base = ["--model", MODEL, "--base-url", s.baseURL];
    expect((await runYoi(["-p", ...base, "write v1"], { cwd: project, env })).code).toBe(0);
    expect((await runYoi(["-c", "-p", "make it v2"], { cwd: project, env })).code).toBe(0);
    const file = path.join(project, "a.txt");
    expect(await readFile(file, "utf8")).toBe("v2\n");

    const listed = await runYoi(["rewind", "--list"], { cwd: project, env });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(" 1  before turn 1: write v1");
    expect(listed.stdout).toContain(" 2  before turn 2: make it v2");
    expect(await readFile(file, "utf8")).toBe("v2\n"); // listing changes nothing

    await writeFile(file, "mine\n");
    const refused = await runYoi(["rewind"], { cwd: project, env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("a.txt (changed outside yoi since): not overwritten");
    expect(refused.stderr).toContain("--force");
    expect(await readFile(file, "utf8")).toBe("mine\n");

    const forced = await runYoi(["rewind", "--force"], { cwd: project, env });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain("rewound session");
    expect(forced.stdout).toContain("before turn 2");
    expect(await readFile(file, "utf8")).toBe("v1\n");

    const bad = await runYoi(["rewind", "--turn", "0"], { cwd: project, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--turn must be a turn number from 1");
    const missing = await runYoi(["rewind", "--turn", "7", "--files"], { cwd: project, env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("no turn 7 in this session");

    // fork the session before turn 2: the child starts from turn 1's conversation
    const [parent] = await sessionIds(home);
    const fork = await runYoi(["--fork", parent!.slice(0, 12), "--turn", "2", "-p", "another way"], {
      cwd: project,
      env,
    });
    expect(fork.code).toBe(0);
    expect(fork.stdout).toBe("forked answer\n");
    const request = JSON.stringify((s.requests[5] as { messages: unknown[] }).messages);
    expect(request).toContain("wrote v1");
    expect(request).not.toContain("edited to v2");
    const tree = await runYoi(["sessions"], { cwd: project, env });
    const lines = tree.stdout.trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatch(/└ write v1/);
  });
});

describe("a damaged record costs only itself", () => {
  it("a malformed tool-call record is skipped with a warning naming its line; the session resumes", async () => {
    const s = await server([
      { type: "reply", toolCalls: [{ id: "l1", name: "list_dir", arguments: { path: "." } }] },
      say("listed"),
      say("still here"),
      say("forked"),
      say("clean"),
    ]);
    const { home, project } = await tempWorld({ "x.txt": "x\n" });
    const env = cleanEnv(home);
    expect(
      (await runYoi(["-p", "--model", MODEL, "--base-url", s.baseURL, "list"], { cwd: project, env })).code,
    ).toBe(0);
    const [id] = await sessionIds(home);
    const logPath = path.join(home, ".yoi", "sessions", `${id}.jsonl`);
    const lines = (await readFile(logPath, "utf8")).trimEnd().split("\n");
    const at = lines.findIndex((l) => l.includes('"tool_call"'));
    const record = JSON.parse(lines[at]!) as { item: { arguments: unknown } };
    record.item.arguments = { path: 1 };
    lines[at] = JSON.stringify(record);
    await writeFile(logPath, `${lines.join("\n")}\n`);
    const resumed = await runYoi(["-c", "-p", "are you there"], { cwd: project, env });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe("still here\n");
    expect(resumed.stderr).toContain(`line ${at + 1}: skipped: item record: tool call l1`);
    expect(resumed.stderr).not.toContain("cannot reach");
    // Skipped again at every resume, so the warning says what ends it: a fork copies what was read.
    expect(resumed.stderr).toContain(
      `a fork continues it without the skipped lines (yoi --fork ${id!.slice(0, 8)}`,
    );
    const forked = await runYoi(["--fork", id!.slice(0, 8), "-p", "again"], { cwd: project, env });
    expect(forked.code).toBe(0);
    const clean = await runYoi(["-c", "-p", "and now"], { cwd: project, env });
    expect(clean.code).toBe(0);
    expect(clean.stderr).not.toContain("skipped");
  });
});

describe("bad input for sessions", () => {
  it("says what was wrong and what to do", async () => {
    const { home, project } = await tempWorld();
    const env = cleanEnv(home);
    const cases: [string[], string][] = [
      [["--fork", "nope", "-p", "x"], 'no session "nope"'],
      [["--turn", "2", "-p", "x"], "--turn applies to --fork <id>"],
      [["--fork", "a", "-c", "-p", "x"], "does not combine with -c or --resume"],
      [["rewind", "--files", "--conversation"], "leave both out to restore both"],
      [["rewind", "--session", "nope"], 'no session "nope"'],
      [["rewind", "--session", "../x"], "invalid session id"],
      [["rewind"], "no session in"],
      [
        ["rewind", "--turn", "two"],
        '--turn must be a turn number from 1 (see /rewind or yoi rewind\'s list); got "two"',
      ],
      [["sessions", "--turn", "1"], "--turn does not apply to yoi sessions"],
    ];
    for (const [args, message] of cases) {
      const run = await runYoi(args, { cwd: project, env });
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr, args.join(" ")).toContain(message);
    }
  });
});
