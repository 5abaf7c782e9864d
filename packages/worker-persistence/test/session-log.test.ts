import { appendFileSync, mkdtempSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { mkdir, open, readdir, rm } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import type { Item } from "@yoi/llm-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createSession,
  FsBlobStore,
  latestSession,
  listSessions,
  loadSession,
  openSession,
  replayHistory,
  resumeSession,
  type SessionLog,
  SessionLogError,
  type SessionRecord,
  type SessionRecordInput,
  sessionBlobRefs,
  sessionPath,
} from "../src/index.ts";
import { spawnChild } from "./child-harness.ts";

const dirs: string[] = [];
const logs: SessionLog[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "yoi-session-"));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  for (const log of logs.splice(0)) await log.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  vi.restoreAllMocks();
});
async function create(
  dir: string,
  options: Partial<Parameters<typeof createSession>[0]> = {},
): Promise<SessionLog> {
  const log = await createSession({ dir, model: "claude-sonnet-4-5", cwd: "/repo", ...options });
  logs.push(log);
  return log;
}
async function rejection(promise: Promise<unknown>): Promise<SessionLogError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SessionLogError);
    return error as SessionLogError;
  }
  throw new Error("expected a rejection");
}

/** Every Item variant, with every optional field somewhere. */
const ITEMS: Item[] = [
  { type: "message", role: "system", content: [{ type: "text", text: "You are yoi." }] },
  {
    type: "message",
    role: "user",
    content: [
      { type: "text", text: 'what is in @src/a.ts? \u2028 "quotes" \\ back\nslash 🎉' },
      { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" },
      { type: "image", mediaType: "image/jpeg", url: "https://example.com/x.jpg" },
    ],
  },
  {
    type: "message",
    role: "assistant",
    content: [{ type: "text", text: "Let me look." }],
    providerData: { thoughtSignature: "sig==", nested: { a: [1, null] } },
  },
  {
    type: "reasoning",
    text: "thinking...",
    summary: ["s1", "s2"],
    signature: "EqQBCkYIBx",
    encryptedContent: "gAAAAAB",
    provider: "openai-responses" as Item extends { provider: infer P } ? P : never,
    providerData: { id: "rs_1" },
  },
  { type: "reasoning", text: "", redacted: true, encryptedContent: "opaque", provider: "anthropic" as never },
  {
    type: "tool_call",
    callId: "call_1",
    name: "read",
    arguments: '{"path":"src/a.ts"}',
    providerData: { x: 1 },
  },
  {
    type: "tool_call",
    callId: "call_2",
    name: "apply_patch",
    arguments: "*** Begin Patch\n",
    kind: "custom",
  },
  { type: "tool_call", callId: "call_3", name: "ls", arguments: "{}", kind: "function" },
  { type: "tool_result", callId: "call_1", name: "read", output: "export const a = 1;\n", isError: false },
  {
    type: "tool_result",
    callId: "call_2",
    output: "[blob:0190f4c4-1c2d-7a3b-8c4d-5e6f7a8b9c0d] text | 900 lines",
    isError: true,
    outputRef: { id: "0190f4c4-1c2d-7a3b-8c4d-5e6f7a8b9c0d", byteSize: 12345, lineCount: 900 },
  },
];

/** One of every record type. */
function allRecordInputs(): SessionRecordInput[] {
  return [
    {
      type: "user_input",
      text: "fix the bug in @src/a.ts\nplease",
      segments: [
        { type: "text", text: "fix the bug in " },
        { type: "file_ref", path: "src/a.ts" },
        { type: "text", text: "\nplease" },
      ],
      turn: 1,
    },
    ...ITEMS.map(
      (item, index): SessionRecordInput => ({
        type: "item",
        index,
        reason:
          (
            [
              "synthetic",
              "user",
              "assistant",
              "assistant",
              "assistant",
              "assistant",
              "assistant",
              "assistant",
              "tool_result",
              "tool_result",
            ] as const
          )[index] ?? "synthetic",
        item,
        turn: 1,
      }),
    ),
    {
      type: "usage",
      model: "claude-sonnet-4-5",
      usage: {
        inputTokens: 100,
        outputTokens: 20,
        cacheReadTokens: 50,
        cacheWriteTokens: 5,
        reasoningTokens: 7,
      },
      turn: 1,
      durationMs: 1234,
      responseId: "msg_1",
    },
    { type: "alert", level: "warn", source: "file_ref", message: "src/missing.ts not found" },
    { type: "turn_end", turn: 1, stopReason: "end_turn", durationMs: 2000 },
    { type: "config_change", changes: { "reasoning.effort": "high" }, model: "gpt-5" },
    { type: "cancel", reason: "user pressed Esc", turn: 2 },
    { type: "error", code: "rate_limit", message: "429 Too Many Requests", retryable: true, turn: 3 },
    {
      type: "history_replaced",
      reason: "compaction",
      history: [
        ITEMS[0] as Item,
        { type: "message", role: "user", content: [{ type: "text", text: "summary" }] },
      ],
      detail: { tokensBefore: 100000, tokensAfter: 2000 },
    },
    {
      type: "item",
      index: 2,
      reason: "interceptor",
      item: { type: "message", role: "system", content: [{ type: "text", text: "[File: b.ts]\n..." }] },
    },
    {
      type: "item",
      index: 3,
      reason: "file_ref",
      item: { type: "message", role: "system", content: [{ type: "text", text: "[File: c.ts]" }] },
    },
    { type: "title", title: "Fix the bug in a.ts" },
  ];
}

describe("session log round trip", () => {
  it("round-trips every record type and Item variant, and rebuilds history exactly", async () => {
    const dir = tempDir();
    const log = await create(dir, {
      config: { model: "claude-sonnet-4-5", tools: ["read"] },
      provider: "anthropic",
      appVersion: "0.1.0",
    });
    const written: SessionRecord[] = [];
    for (const input of allRecordInputs()) written.push(await log.append(input));
    await log.close();

    const loaded = await loadSession({ dir, id: log.id });
    expect(loaded.warnings).toEqual([]);
    const start = loaded.records[0];
    expect(start).toMatchObject({
      v: 1,
      type: "session_start",
      seq: 0,
      sessionId: log.id,
      model: "claude-sonnet-4-5",
      cwd: "/repo",
      provider: "anthropic",
      config: { tools: ["read"] },
    });
    expect(loaded.records.slice(1)).toEqual(written);
    expect(written.map((r) => r.seq)).toEqual(written.map((_, i) => i + 1));
    for (const r of loaded.records) expect(Number.isNaN(Date.parse(r.ts))).toBe(false);
    // one line per record, `v` first
    const lines = readFileSync(log.path, "utf8").split("\n");
    expect(lines.at(-1)).toBe("");
    expect(lines.slice(0, -1).every((l) => l.startsWith('{"v":1,'))).toBe(true);
    expect(lines).toHaveLength(loaded.records.length + 1);

    const expected: Item[] = [
      ITEMS[0] as Item,
      { type: "message", role: "user", content: [{ type: "text", text: "summary" }] },
      { type: "message", role: "system", content: [{ type: "text", text: "[File: b.ts]\n..." }] },
      { type: "message", role: "system", content: [{ type: "text", text: "[File: c.ts]" }] },
    ];
    expect(loaded.history).toEqual(expected);
    expect(replayHistory(loaded.records)).toEqual(expected);
    // before the compaction boundary, history was every item
    const cut = loaded.records.findIndex((r) => r.type === "history_replaced");
    expect(replayHistory(loaded.records.slice(0, cut))).toEqual(ITEMS);

    expect(loaded.meta).toMatchObject({
      id: log.id,
      title: "Fix the bug in a.ts",
      model: "gpt-5",
      cwd: "/repo",
      turns: 1,
      records: loaded.records.length,
      lastSeq: loaded.records.length - 1,
      usage: {
        inputTokens: 100,
        outputTokens: 20,
        cacheReadTokens: 50,
        cacheWriteTokens: 5,
        reasoningTokens: 7,
      },
    });
  });

  it("helpers track the history index across items and replacements; resume continues seq and history", async () => {
    const dir = tempDir();
    const log = await create(dir);
    await log.userInput("hello", [{ type: "text", text: "hello" }], 1);
    await log.item(ITEMS[1] as Item, "user");
    await log.item(ITEMS[2] as Item, "assistant");
    expect(log.historyLength).toBe(2);
    await log.usage({ inputTokens: 3 }, { model: "m" });
    await log.historyReplaced({ history: [ITEMS[0] as Item], reason: "trim" });
    expect(log.historyLength).toBe(1);
    const rec = await log.item(ITEMS[5] as Item, "assistant");
    expect(rec.index).toBe(1);
    await log.turnEnd({ turn: 1, stopReason: "tool_use" });
    await log.cancel("esc");
    await log.error({ code: "network", message: "reset" });
    await log.configChange({ effort: "low" });
    await log.alert("info", "pod", "hi");
    await log.subagent({
      callId: "c9",
      description: "scan",
      model: "anthropic/m",
      status: "completed",
      turns: 1,
      usage: { inputTokens: 3 },
      items: [ITEMS[0] as Item],
    });
    await log.title("Greeting");
    await log.close();
    await expect(log.item(ITEMS[0] as Item, "user")).rejects.toMatchObject({ code: "closed" });

    const opened = await openSession({ dir, id: log.id });
    logs.push(opened.log);
    expect(opened.history).toEqual([ITEMS[0], ITEMS[5]]);
    expect(opened.warnings).toEqual([]);
    expect(opened.truncatedBytes).toBe(0);
    expect(opened.log.nextSeq).toBe(opened.meta.lastSeq + 1);
    const next = await opened.log.item(ITEMS[8] as Item, "tool_result");
    expect(next.index).toBe(2);
    expect(next.seq).toBe(opened.meta.lastSeq + 1);
    await opened.log.close();
    expect((await loadSession({ dir, id: log.id })).history).toEqual([ITEMS[0], ITEMS[5], ITEMS[8]]);
  });

  it("serializes concurrent appends in call order (seq order = file order)", async () => {
    const dir = tempDir();
    const log = await create(dir, { fsync: "never" });
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => log.alert("info", "t", String(i))),
    );
    expect(results.map((r) => r.seq)).toEqual(results.map((_, i) => i + 1));
    await log.close();
    const loaded = await loadSession({ dir, id: log.id });
    expect(loaded.records.slice(1).map((r) => (r as { message: string }).message)).toEqual(
      results.map((_, i) => String(i)),
    );
  });

  it("refuses to create over an existing session and validates ids", async () => {
    const dir = tempDir();
    const log = await create(dir, { id: "my-session_1" });
    await log.close();
    expect((await rejection(createSession({ dir, id: "my-session_1" }))).code).toBe("exists");
    for (const bad of ["../x", "a/b", "", ".hidden", "a.b", "x".repeat(200), "a\0b"]) {
      expect((await rejection(openSession({ dir, id: bad }))).code).toBe("invalid_id");
      expect((await rejection(loadSession({ dir, id: bad }))).code).toBe("invalid_id");
    }
  });
});

describe("fsync policy", () => {
  async function countSyncs(policy: "always" | "turn" | "never"): Promise<number[]> {
    const dir = tempDir();
    const probe = await open(join(dir, "probe"), "w");
    const proto = Object.getPrototypeOf(probe) as { datasync: () => Promise<void> };
    await probe.close();
    const spy = vi.spyOn(proto, "datasync");
    const log = await createSession({ dir, fsync: policy });
    const after: number[] = [spy.mock.calls.length]; // after session_start
    await log.userInput("x");
    await log.item(ITEMS[1] as Item, "user");
    after.push(spy.mock.calls.length);
    await log.turnEnd({ turn: 1 });
    after.push(spy.mock.calls.length);
    await log.alert("info", "t", "m");
    await log.close();
    after.push(spy.mock.calls.length);
    spy.mockRestore();
    return after;
  }

  it("always: every record; turn: session_start, turn_end and close; never: none", async () => {
    expect(await countSyncs("always")).toEqual([1, 3, 4, 5]);
    expect(await countSyncs("turn")).toEqual([1, 1, 2, 3]);
    expect(await countSyncs("never")).toEqual([0, 0, 0, 0]);
  });
});

describe("a log over a write-behind blob store", () => {
  const blobResult = (id: string): Item => ({
    type: "tool_result",
    callId: "c1",
    output: `[blob:${id}] a tool output`,
    isError: false,
    outputRef: { id, byteSize: 13 },
  });
  async function setup() {
    const dir = tempDir();
    const blobs = await FsBlobStore.open({ dir, deferSync: true });
    const probe = await open(join(dir, "probe"), "w");
    const proto = Object.getPrototypeOf(probe) as { datasync: () => Promise<void> };
    await probe.close();
    const log = await create(dir, { blobs });
    return { blobs, proto, log };
  }

  it("syncs the blobs before each of its own fsyncs, so a synced record never points at a blob that is not", async () => {
    const { blobs, proto, log } = await setup();
    const events: string[] = [];
    const blobSync = blobs.sync.bind(blobs);
    vi.spyOn(blobs, "sync").mockImplementation(async () => {
      events.push("blobs.sync");
      await blobSync();
      events.push("blobs synced");
    });
    const datasync = vi.spyOn(proto, "datasync");
    const id = await blobs.store({ kind: "text", text: "a tool output" });
    await log.item(blobResult(id), "tool_result");
    expect(events).toEqual([]); // not a boundary: neither the log nor the blobs are synced
    const before = datasync.mock.calls.length;
    await log.turnEnd({ turn: 0 });
    expect(events).toEqual(["blobs.sync", "blobs synced"]);
    // the blob's own fsync came inside blobs.sync (or before it, in the background); the log's came last
    expect(datasync.mock.calls.length).toBeGreaterThan(before);
    const logSync = datasync.mock.invocationCallOrder.at(-1) ?? 0;
    expect(logSync).toBeGreaterThan(Math.max(...vi.mocked(blobs.sync).mock.invocationCallOrder));
  });

  it("a blob fsync that failed fails the boundary record with io and its errno; the records stay in the file", async () => {
    const { blobs, proto, log } = await setup();
    vi.spyOn(proto, "datasync").mockRejectedValue(
      Object.assign(new Error("EIO: i/o error"), { code: "EIO" }),
    );
    const id = await blobs.store({ kind: "text", text: "a tool output" });
    await log.item(blobResult(id), "tool_result");
    const error = await rejection(log.turnEnd({ turn: 0 }));
    expect(error.code).toBe("io");
    expect(error.errno).toBe("EIO");
    expect(error.message).toContain("blobs");
    expect(error.message).toContain(log.path);
    vi.restoreAllMocks();
    // the failure stays: closing says so too (and still releases the lock)
    expect((await rejection(log.close())).code).toBe("io");
    logs.splice(logs.indexOf(log), 1);
    const lines = readFileSync(log.path, "utf8").trim().split("\n");
    expect(lines.map((line) => (JSON.parse(line) as { type: string }).type)).toEqual([
      "session_start",
      "item",
      "turn_end",
    ]);
  });
});

describe("single-writer lock", () => {
  it("a second opener in this process gets a clear error; after close it can open", async () => {
    const dir = tempDir();
    const log = await create(dir);
    const err = await rejection(openSession({ dir, id: log.id }));
    expect(err.code).toBe("locked");
    expect(err.pid).toBe(process.pid);
    expect(err.path).toBe(join(dir, "sessions", `${log.id}.lock`));
    expect(err.message).toContain("already open for writing in this process");
    await log.close();
    const opened = await openSession({ dir, id: log.id });
    logs.push(opened.log);
  });

  it("another live process gets `locked` naming the pid and the lock file", async () => {
    const dir = tempDir();
    const log = await create(dir);
    await log.close();
    const holder = spawnChild(["hold", dir, log.id]);
    try {
      await holder.waitForLines(1);
      const err = await rejection(openSession({ dir, id: log.id }));
      expect(err.code).toBe("locked");
      expect(err.pid).toBe(holder.proc.pid);
      expect(err.message).toContain(`pid ${holder.proc.pid}`);
      expect(err.message).toContain(`${log.id}.lock`);
      // and another process is refused the same way
      const other = spawnChild(["try-open", dir, log.id]);
      await other.exited;
      expect(other.lines[0]).toBe(
        `error locked ${holder.proc.pid} ${join(dir, "sessions", `${log.id}.lock`)}`,
      );
    } finally {
      await holder.kill();
    }
    // the holder died without releasing: its lock is taken over
    const opened = await openSession({ dir, id: log.id });
    logs.push(opened.log);
  });

  it("takes over locks of dead owners and of an earlier process with our pid; respects other hosts and fresh unreadable locks", async () => {
    const dir = tempDir();
    const log = await create(dir);
    await log.close();
    const lock = join(dir, "sessions", `${log.id}.lock`);
    const dead = { pid: 999_999_999, host: hostname(), nonce: "n1", since: "" };
    writeFileSync(lock, JSON.stringify(dead));
    let opened = await openSession({ dir, id: log.id });
    expect(JSON.parse(readFileSync(lock, "utf8")).pid).toBe(process.pid);
    await opened.log.close();
    expect(() => statSync(lock)).toThrow(); // released on close

    writeFileSync(lock, JSON.stringify({ ...dead, pid: process.pid, nonce: "old-incarnation" }));
    opened = await openSession({ dir, id: log.id });
    await opened.log.close();

    writeFileSync(lock, JSON.stringify({ ...dead, host: "other-host" }));
    const remote = await rejection(openSession({ dir, id: log.id }));
    expect(remote.code).toBe("locked");
    expect(remote.message).toContain("on host other-host");
    expect(remote.message).toContain("delete the lock file");

    writeFileSync(lock, "");
    expect((await rejection(openSession({ dir, id: log.id }))).code).toBe("locked");
    const past = new Date(Date.now() - 60_000);
    utimesSync(lock, past, past);
    opened = await openSession({ dir, id: log.id });
    await opened.log.close();
  });
});

describe("recovery and bad data", () => {
  async function sessionWith(
    records = 4,
  ): Promise<{ dir: string; id: string; path: string; lines: string[] }> {
    const dir = tempDir();
    const log = await create(dir, { fsync: "never" });
    for (let i = 1; i < records; i++) await log.alert("info", "t", `record ${i}`);
    await log.close();
    const lines = readFileSync(log.path, "utf8").split("\n").slice(0, -1);
    return { dir, id: log.id, path: log.path, lines };
  }
  const messages = (records: SessionRecord[]): string[] =>
    records.flatMap((r) => (r.type === "alert" ? [r.message] : []));

  it("a torn last line is ignored by readers and truncated before the next append", async () => {
    const { dir, id, path, lines } = await sessionWith();
    const torn = (lines[1] as string).slice(0, 25);
    appendFileSync(path, torn);
    const loaded = await loadSession({ dir, id });
    expect(messages(loaded.records)).toEqual(["record 1", "record 2", "record 3"]);
    expect(loaded.warnings).toHaveLength(1);
    expect(loaded.warnings[0]?.message).toMatch(/^torn tail: 25 byte\(s\)/);
    expect(loaded.warnings[0]?.line).toBe(5);
    expect(readFileSync(path, "utf8").endsWith(torn)).toBe(true); // a reader never writes

    const opened = await openSession({ dir, id });
    expect(opened.truncatedBytes).toBe(25);
    await opened.log.alert("info", "t", "after recovery");
    await opened.log.close();
    const again = await loadSession({ dir, id });
    expect(again.warnings).toEqual([]);
    expect(messages(again.records)).toEqual(["record 1", "record 2", "record 3", "after recovery"]);
    expect(again.records.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4]);
  });

  it("a complete-looking last line without its newline is still a torn tail", async () => {
    const { dir, id, path, lines } = await sessionWith(2);
    const fake = (lines[1] as string).replace("record 1", "never returned").replace('"seq":1', '"seq":2');
    appendFileSync(path, fake);
    const opened = await openSession({ dir, id });
    expect(opened.truncatedBytes).toBe(Buffer.byteLength(fake));
    expect(opened.log.nextSeq).toBe(2);
    await opened.log.close();
  });

  it("NUL runs: a NUL line is skipped, NULs before a record are dropped, NULs at EOF are truncated", async () => {
    const { dir, id, path, lines } = await sessionWith(4);
    const [l0, l1, l2, l3] = lines as [string, string, string, string];
    writeFileSync(
      path,
      `${l0}\n${"\0".repeat(4096)}\n${l1}\n${"\0".repeat(100)}${l2}\n${l3}\n${"\0".repeat(512)}`,
    );
    const loaded = await loadSession({ dir, id });
    expect(messages(loaded.records)).toEqual(["record 1", "record 2", "record 3"]);
    expect(loaded.warnings.map((w) => [w.line, w.message.slice(0, 40)])).toEqual([
      [2, "skipped: not a valid record (NUL bytes):"],
      [4, "recovered 1 record(s): NUL bytes removed"],
      [6, "torn tail: 512 byte(s) at the end of the"],
    ]);
    expect(loaded.warnings[0]?.offset).toBe(Buffer.byteLength(l0) + 1);
    const opened = await openSession({ dir, id });
    expect(opened.truncatedBytes).toBe(512);
    await opened.log.close();
  });

  it("two records glued on one line (a torn line followed by an append) are split", async () => {
    const { dir, id, path, lines } = await sessionWith(4);
    const [l0, l1, l2, l3] = lines as [string, string, string, string];
    // whole + whole, and torn fragment + whole
    writeFileSync(path, `${l0}\n${l1}${l2}\n${l3.slice(0, 30)}${l3}\n`);
    const loaded = await loadSession({ dir, id });
    expect(messages(loaded.records)).toEqual(["record 1", "record 2", "record 3"]);
    expect(loaded.warnings.map((w) => w.message)).toEqual([
      "recovered 2 record(s): 2 records glued on one line were split",
      "recovered 1 record(s): 30 character(s) of damaged data skipped",
    ]);
  });

  it('glued records whose items contain nested {"v": objects are still split correctly', async () => {
    const dir = tempDir();
    const log = await create(dir, { fsync: "never" });
    const item: Item = {
      type: "tool_call",
      callId: "c",
      name: "x",
      arguments: "{}",
      providerData: { v: 1, inner: { v: 2 } },
    };
    await log.item(item, "assistant");
    await log.item(item, "assistant");
    await log.close();
    const [l0, l1, l2] = readFileSync(log.path, "utf8").split("\n") as [string, string, string];
    writeFileSync(log.path, `${l0}\n${l1}${l2}\n`);
    const loaded = await loadSession({ dir, id: log.id });
    expect(loaded.history).toEqual([item, item]);
  });

  it("a raw newline inside a record skips that record with warnings; everything after loads", async () => {
    const { dir, id, path, lines } = await sessionWith(4);
    const [l0, l1, l2, l3] = lines as [string, string, string, string];
    const broken = l2.replace("record 2", "rec\nord 2");
    writeFileSync(path, `${l0}\n${l1}\n${broken}\n${l3}\n`);
    const loaded = await loadSession({ dir, id });
    expect(messages(loaded.records)).toEqual(["record 1", "record 3"]);
    expect(loaded.warnings.map((w) => w.line)).toEqual([3, 4]);
    for (const w of loaded.warnings) expect(w.message).toMatch(/^skipped: not a valid record/);
    // a mid-file problem is not truncated away by an opener
    const opened = await openSession({ dir, id });
    expect(opened.truncatedBytes).toBe(0);
    await opened.log.close();
  });

  it("skips records of unknown type or a newer version, and records that fail shape checks", async () => {
    const { dir, id, path, lines } = await sessionWith(2);
    const [l0, l1] = lines as [string, string];
    const extra = [
      '{"v":2,"seq":5,"ts":"x","type":"alert"}',
      '{"v":1,"seq":6,"ts":"x","type":"teleport"}',
      '{"v":1,"seq":7,"ts":"x","type":"item","index":-1,"item":{}}',
      '{"v":1,"seq":8,"ts":"x","type":"history_replaced","reason":"x","history":[1]}',
      "[1,2,3]",
      "",
    ];
    writeFileSync(path, `${l0}\n${extra.join("\n")}\n${l1}\n`);
    const loaded = await loadSession({ dir, id });
    expect(messages(loaded.records)).toEqual(["record 1"]);
    expect(loaded.warnings.map((w) => w.message)).toEqual([
      "skipped: written by a newer format (v2; this reader knows v1)",
      'skipped: unknown record type "teleport"',
      "skipped: item record without a valid `index`",
      "skipped: history_replaced record: history[0]: the item is not an object",
      "skipped: not a JSON object",
      "empty line",
    ]);
  });

  it("never truncates valid records it cannot apply (a newer format) at the end of the log", async () => {
    const { dir, id, path } = await sessionWith(2);
    const newer = '{"v":2,"seq":2,"ts":"x","type":"hologram"}\n';
    appendFileSync(path, newer);
    const opened = await openSession({ dir, id });
    expect(opened.truncatedBytes).toBe(0);
    expect(opened.warnings.map((w) => w.message)).toEqual([
      "skipped: written by a newer format (v2; this reader knows v1)",
    ]);
    await opened.log.close();
    expect(readFileSync(path, "utf8").endsWith(newer)).toBe(true);
  });

  it("an empty file loads as an empty session with a warning, and can be opened and appended to", async () => {
    const dir = tempDir();
    await mkdir(join(dir, "sessions"));
    writeFileSync(join(dir, "sessions", "empty.jsonl"), "");
    const loaded = await loadSession({ dir, id: "empty" });
    expect(loaded.records).toEqual([]);
    expect(loaded.history).toEqual([]);
    expect(loaded.warnings[0]?.message).toMatch(/no records/);
    const opened = await openSession({ dir, id: "empty" });
    const r = await opened.log.alert("warn", "t", "first");
    expect(r.seq).toBe(0);
    await opened.log.close();
    expect((await loadSession({ dir, id: "empty" })).warnings[0]?.message).toMatch(/no session_start/);
    const [summary] = await listSessions({ dir });
    expect(summary?.id).toBe("empty");
    expect(summary?.title).toBeUndefined();
  });

  it("a missing directory: load/open say not_found, list is empty, create makes it", async () => {
    const dir = join(tempDir(), "does", "not", "exist");
    const err = await rejection(loadSession({ dir, id: "nope" }));
    expect(err.code).toBe("not_found");
    expect(err.path).toBe(sessionPath(dir, "nope"));
    expect((await rejection(openSession({ dir, id: "nope" }))).code).toBe("not_found");
    expect((await rejection(resumeSession({ dir }))).code).toBe("not_found");
    expect(await listSessions({ dir })).toEqual([]);
    expect(await latestSession({ dir })).toBeUndefined();
    const log = await create(dir);
    expect(statSync(join(dir, "sessions")).mode & 0o777).toBe(0o700);
    expect(statSync(log.path).mode & 0o777).toBe(0o600);
  });

  it("an unusable directory surfaces `io` with path and errno (ENOTDIR: works as root too)", async () => {
    const root = tempDir();
    writeFileSync(join(root, "file"), "");
    const err = await rejection(createSession({ dir: join(root, "file") }));
    expect(err.code).toBe("io");
    expect(err.errno).toBe("ENOTDIR");
    expect(err.path).toBe(join(root, "file", "sessions"));
    expect(err.message).toContain("not a directory");
  });

  it("permission denied surfaces EACCES (as root: checked in a child running as nobody)", async () => {
    const dir = tempDir();
    const log = await create(dir);
    await log.close();
    const { chmod } = await import("node:fs/promises");
    await chmod(dir, 0o755);
    await chmod(join(dir, "sessions"), 0o700); // only the owner (root here) may enter
    const asRoot = process.getuid?.() === 0;
    if (!asRoot) await chmod(join(dir, "sessions"), 0o000);
    const child = spawnChild(["try-open", dir, log.id], asRoot ? { uid: 65534, gid: 65534 } : {});
    await child.exited;
    if (!asRoot) await chmod(join(dir, "sessions"), 0o700);
    expect(child.stderr()).toBe("");
    expect(child.lines[0]).toMatch(/^error io EACCES /);
    expect(child.lines[0]).toContain(join(dir, "sessions"));
  });
});

describe("listing", () => {
  it("lists id, title, times, model and size, newest first, reading only head and tail", async () => {
    const dir = tempDir();
    const a = await create(dir, { model: "model-a" });
    await a.userInput("\n\n  First line of A  \nsecond line");
    await a.close();
    const b = await create(dir, { model: "model-b" });
    await b.userInput("x".repeat(300));
    // a large middle that listing must not read
    for (let i = 0; i < 40; i++) await b.alert("info", "t", "y".repeat(100_000));
    await b.configChange({ model: "model-c" }, "model-c");
    await b.title("Named later");
    await b.close();
    const c = await create(dir, { model: "model-d" });
    await c.close();
    const past = new Date(Date.now() - 60_000);
    utimesSync(a.path, past, past);

    const handle = await open(a.path, "r");
    await handle.close();
    const proto = Object.getPrototypeOf(handle) as {
      read: (...args: unknown[]) => Promise<{ bytesRead: number }>;
    };
    const original = proto.read;
    let bytesRead = 0;
    const spy = vi.spyOn(proto, "read").mockImplementation(async function (
      this: unknown,
      ...args: unknown[]
    ) {
      const result = await original.apply(this, args);
      bytesRead += result.bytesRead;
      return result;
    });
    const list = await listSessions({ dir });
    spy.mockRestore();
    expect(bytesRead).toBeLessThan(300_000);
    expect(statSync(b.path).size).toBeGreaterThan(4_000_000);

    expect(list.map((s) => s.id)).toEqual([c.id, b.id, a.id]);
    const byId = new Map(list.map((s) => [s.id, s]));
    expect(byId.get(a.id)).toMatchObject({
      title: "First line of A",
      model: "model-a",
      cwd: "/repo",
      sizeBytes: statSync(a.path).size,
    });
    expect(byId.get(a.id)?.updatedAt).toBe(past.toISOString());
    expect(byId.get(b.id)).toMatchObject({ title: "Named later", model: "model-c" });
    expect(byId.get(c.id)?.title).toBeUndefined();
    expect(Date.parse(byId.get(a.id)?.createdAt ?? "")).not.toBeNaN();
    expect((await listSessions({ dir, limit: 1 })).length).toBe(1);
    expect((await latestSession({ dir }))?.id).toBe(list[0]?.id);
    expect(`${byId.get(b.id)?.title}`.length).toBeLessThan(101);

    const resumed = await resumeSession({ dir });
    logs.push(resumed.log);
    expect(resumed.log.id).toBe(list[0]?.id);
  });

  it("long first lines become a shortened title", async () => {
    const dir = tempDir();
    const log = await create(dir);
    await log.userInput("z".repeat(300));
    await log.close();
    const [s] = await listSessions({ dir });
    expect(s?.title).toBe(`${"z".repeat(99)}…`);
    expect((await loadSession({ dir, id: log.id })).meta.title).toBe(s?.title);
  });
});

describe("blob refs and gc across sessions", () => {
  it("collects refs from items and compaction boundaries; gc keeps them", async () => {
    const dir = tempDir();
    const store = await FsBlobStore.open({ dir });
    const referenced = await store.store({ kind: "text", text: "full output" });
    const marker = await store.store({ kind: "text", text: "in a summary" });
    const compacted = await store.store({ kind: "structured", value: [1] });
    const orphan = await store.store({ kind: "text", text: "nobody" });
    const log = await create(dir);
    await log.item(
      { type: "tool_result", callId: "c", output: "summary", isError: false, outputRef: { id: referenced } },
      "tool_result",
    );
    await log.item(
      {
        type: "tool_result",
        callId: "d",
        output: `[blob:${marker.toUpperCase()}] text | 3 lines`,
        isError: false,
      },
      "tool_result",
    );
    await log.historyReplaced({
      reason: "compaction",
      history: [
        { type: "message", role: "user", content: [{ type: "text", text: `see [blob:${compacted}]` }] },
      ],
    });
    await log.close();
    const refs = await sessionBlobRefs({ dir });
    expect([...refs].sort()).toEqual([referenced, marker, compacted].sort());
    const result = await store.gc({ liveRefs: refs, graceMs: 0, now: Date.now() + 1000 });
    expect(result.deleted.map((b) => b.id)).toEqual([orphan]);
    expect((await readdir(join(dir, "blobs"))).length).toBe(3);
  });
});
