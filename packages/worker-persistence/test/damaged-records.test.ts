/**
 * A damaged record costs only itself: a log edited by hand, cut by a crash
 * or corrupted on disk still opens, each bad record skipped with a warning
 * naming its line, and the history it rebuilds is one every adapter accepts.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Item, pairToolResults } from "@yoi/llm-client";
import { errorMessage } from "@yoi/manifest/errors";
import { afterEach, describe, expect, it } from "vitest";
import { createSession, itemProblem, listSessions, openSession, sessionPath } from "../src/index.ts";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A two-turn session with a tool call, as the pod writes it. */
async function writeSession(): Promise<{ dir: string; id: string; path: string; lines: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), "yoi-damaged-"));
  dirs.push(dir);
  const log = await createSession({ dir, fsync: "never", model: "m", provider: "openai-chat", cwd: "/p" });
  const items: [Item, "user" | "assistant" | "tool_result"][] = [
    [{ type: "message", role: "user", content: [{ type: "text", text: "list files" }] }, "user"],
    [{ type: "tool_call", callId: "c1", name: "list_dir", arguments: '{"path":"."}' }, "assistant"],
    [{ type: "tool_result", callId: "c1", name: "list_dir", output: "a.txt", isError: false }, "tool_result"],
    [{ type: "message", role: "assistant", content: [{ type: "text", text: "One file." }] }, "assistant"],
    [{ type: "message", role: "user", content: [{ type: "text", text: "thanks" }] }, "user"],
    [
      { type: "message", role: "assistant", content: [{ type: "text", text: "You are welcome." }] },
      "assistant",
    ],
  ];
  await log.userInput("list files");
  for (const [item, reason] of items.slice(0, 4)) await log.item(item, reason);
  await log.usage({ inputTokens: 10, outputTokens: 5 });
  await log.turnEnd({ turn: 0, stopReason: "end_turn" });
  await log.userInput("thanks");
  for (const [item, reason] of items.slice(4)) await log.item(item, reason);
  await log.turnEnd({ turn: 1, stopReason: "end_turn" });
  const id = log.id;
  await log.close();
  const path = sessionPath(dir, id);
  return { dir, id, path, lines: readFileSync(path, "utf8").trimEnd().split("\n") };
}

type Mutation = { name: string; edit: (lines: string[], i: number) => string[] | undefined };

type Json = Record<string, unknown>;

/** Replaces line i with the record edited by `change` (a no-op when `applies` says it does not fit). */
const editRecord =
  (applies: (record: Json) => boolean, change: (record: Json) => void) =>
  (lines: string[], i: number): string[] | undefined => {
    const record = JSON.parse(lines[i]!) as Json;
    if (!applies(record)) return undefined;
    change(record);
    return replaceLine(lines, i, JSON.stringify(record));
  };

const itemOf = (record: Json): Json => (record.item ?? {}) as Json;
const isItem = (type: string) => (record: Json) => itemOf(record).type === type;

const replaceLine = (lines: string[], i: number, next: string): string[] => [
  ...lines.slice(0, i),
  next,
  ...lines.slice(i + 1),
];

const MUTATIONS: Mutation[] = [
  { name: "cut in half", edit: (l, i) => replaceLine(l, i, l[i]!.slice(0, Math.floor(l[i]!.length / 2))) },
  {
    name: "NUL bytes inside",
    edit: (l, i) =>
      replaceLine(l, i, `${l[i]!.slice(0, 10)}\0\0\0\0${l[i]!.slice(10, 30)}\0${l[i]!.slice(31)}`),
  },
  { name: "a NUL run instead of the line", edit: (l, i) => replaceLine(l, i, "\0".repeat(l[i]!.length)) },
  { name: "bad JSON", edit: (l, i) => replaceLine(l, i, `{"v":1,"type":"item","seq":${i},`) },
  { name: "not an object", edit: (l, i) => replaceLine(l, i, "[1,2,3]") },
  {
    name: "seq is a string",
    edit: editRecord(
      () => true,
      (r) => {
        r.seq = "x";
      },
    ),
  },
  {
    name: "tool call arguments is an object",
    edit: editRecord(isItem("tool_call"), (r) => {
      itemOf(r).arguments = { path: "." };
    }),
  },
  {
    name: "message content is a string",
    edit: editRecord(isItem("message"), (r) => {
      itemOf(r).content = "hi";
    }),
  },
  {
    name: "unknown role",
    edit: editRecord(isItem("message"), (r) => {
      itemOf(r).role = "robot";
    }),
  },
  {
    name: "tool result output is a number",
    edit: editRecord(isItem("tool_result"), (r) => {
      itemOf(r).output = 42;
    }),
  },
  {
    name: "usage tokens are strings",
    edit: editRecord(
      (r) => r.type === "usage",
      (r) => {
        (r.usage as Json).inputTokens = "10";
      },
    ),
  },
  {
    name: "user input text is a number",
    edit: editRecord(
      (r) => r.type === "user_input",
      (r) => {
        r.text = 7;
      },
    ),
  },
  {
    name: "session_start model is an object",
    edit: editRecord(
      (r) => r.type === "session_start",
      (r) => {
        r.model = { a: 1 };
      },
    ),
  },
  {
    name: "the tool result deleted (a call without a result)",
    edit: (l, i) =>
      isItem("tool_result")(JSON.parse(l[i]!)) ? [...l.slice(0, i), ...l.slice(i + 1)] : undefined,
  },
  { name: "line deleted", edit: (l, i) => [...l.slice(0, i), ...l.slice(i + 1)] },
  { name: "line duplicated", edit: (l, i) => [...l.slice(0, i + 1), l[i]!, ...l.slice(i + 1)] },
  { name: "empty line inserted", edit: (l, i) => [...l.slice(0, i), "", ...l.slice(i)] },
];

describe("a damaged record costs only itself", () => {
  it("every single-line edit of a log leaves it resumable, the bad line named", async () => {
    const { dir, id, path, lines } = await writeSession();
    let cases = 0;
    for (const mutation of MUTATIONS) {
      for (let i = 0; i < lines.length; i++) {
        const edited = mutation.edit(lines, i);
        if (edited === undefined) continue;
        cases++;
        const label = `${mutation.name} at line ${i + 1}`;
        writeFileSync(path, `${edited.join("\n")}\n`);
        const opened = await openSession({ dir, id, fsync: "never" }).catch((error: unknown) => {
          throw new Error(`${label}: ${errorMessage(error)}`);
        });
        try {
          // every item is one an adapter can send, and tool calls pair up
          for (const item of opened.history) expect(itemProblem(item), label).toBeUndefined();
          expect(() => pairToolResults(opened.history), label).not.toThrow();
          // a changed line is reported by its number (deletions leave nothing to name)
          const changedLine = edited[i] !== lines[i] && edited.length === lines.length;
          if (changedLine) {
            expect(
              opened.warnings.some((w) => w.line === i + 1 || w.line === edited.length),
              `${label}: ${JSON.stringify(opened.warnings)}`,
            ).toBe(true);
          }
          // the session goes on: a new record appends and the log reopens
          await opened.log.userInput("after the damage");
        } finally {
          await opened.log.close();
        }
        const again = await openSession({ dir, id, fsync: "never" });
        await again.log.close();
        expect(again.meta.lastSeq, label).toBeGreaterThanOrEqual(0);
      }
    }
    expect(cases).toBeGreaterThan(100);
  });

  it("a tool call whose arguments are not a string is skipped with a warning about the log", async () => {
    const { dir, id, path, lines } = await writeSession();
    const callLine = lines.findIndex((l) => l.includes('"tool_call"'));
    const broken = JSON.parse(lines[callLine]!) as { item: { arguments: unknown } };
    broken.item.arguments = { path: "." };
    lines[callLine] = JSON.stringify(broken);
    writeFileSync(path, `${lines.join("\n")}\n`);
    const opened = await openSession({ dir, id, fsync: "never" });
    await opened.log.close();
    const warning = opened.warnings.find((w) => w.line === callLine + 1);
    expect(warning?.message).toMatch(/tool call c1 whose `arguments` is not a JSON string/);
    expect(opened.history.some((item) => item.type === "tool_call")).toBe(false);
    // the orphaned result is repaired for the provider, not sent as is
    const repaired = pairToolResults(opened.history);
    expect(repaired.repairs.map((r) => r.kind)).toContain("orphan_result");
  });
});

describe("only real sessions are listed", () => {
  it("marks a session whose run failed before any model output", async () => {
    const dir = mkdtempSync(join(tmpdir(), "yoi-listed-"));
    dirs.push(dir);
    const failed = await createSession({ dir, fsync: "never", model: "m" });
    await failed.userInput("hello");
    await failed.item({ type: "message", role: "user", content: [{ type: "text", text: "hello" }] }, "user");
    await failed.error({ code: "network", message: "connection refused" });
    await failed.close();
    const real = await createSession({ dir, fsync: "never", model: "m" });
    await real.userInput("hello");
    await real.item(
      { type: "message", role: "assistant", content: [{ type: "text", text: "hi" }] },
      "assistant",
    );
    await real.error({ code: "network", message: "connection reset" });
    await real.close();
    const quiet = await createSession({ dir, fsync: "never", model: "m" });
    await quiet.userInput("nothing failed yet");
    await quiet.close();
    const rows = await listSessions({ dir });
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(failed.id)?.failedBeforeOutput).toBe(true);
    expect(byId.get(real.id)?.failedBeforeOutput).toBe(false);
    expect(byId.get(quiet.id)?.failedBeforeOutput).toBe(false);
    expect(byId.get(failed.id)?.firstPrompt).toBe("hello");
  });
});
