import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { isCompactionMessage, RETAIN_HEADER } from "@yoi/compaction";
import { createClient, type Item, messageText } from "@yoi/llm-client";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { attachedFilePath } from "../src/context/auto-read.ts";
import type { PodEvent } from "../src/events/pod-events.ts";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const FILES = 7;
const AUTO_READ_MAX_FILES = 5;

function body(version: number, n: number): string {
  const lines = Array.from(
    { length: 40 },
    (_, i) => `// f${n} v${version} line ${i}: notes about the module`,
  );
  return `export const f${n} = ${version};\n${lines.join("\n")}\n`;
}

interface AnthropicBody {
  messages: { role: string; content: string | { type: string }[] }[];
}

/** A request's size as the usage a provider would report (bytes/4, the estimator's own measure). */
function usageOf(json: string) {
  return { inputTokens: Math.ceil(json.length / 4), outputTokens: 10 };
}

/** The fake model: each turn reads one file, then answers; summary calls get a summary. Usage is the request's size. */
function step(_index: number, raw: unknown): ScriptStep {
  const json = JSON.stringify(raw);
  if (json.includes("<summary></summary> tags")) {
    return {
      type: "reply",
      text: "<retain>the files f0..f6</retain><summary>Worked through the files one by one.</summary>",
      options: { usage: usageOf(json) },
    };
  }
  const last = (raw as AnthropicBody).messages.at(-1)!;
  const answered = Array.isArray(last.content) && last.content.some((b) => b.type === "tool_result");
  if (answered) return { type: "reply", text: "done", options: { usage: usageOf(json) } };
  const turn = (raw as AnthropicBody).messages.filter((m) => m.role === "user").length;
  return {
    type: "reply",
    toolCalls: [
      { id: `toolu_${turn}_${_index}`, name: "read_file", arguments: { path: `f${(turn + 3) % FILES}.ts` } },
    ],
    options: { usage: usageOf(json) },
  };
}

function fileMessages(history: readonly Item[]): string[] {
  return history.flatMap((item) => {
    const p = attachedFilePath(item);
    return p === undefined ? [] : [p];
  });
}

describe("compaction keeps exactly one current copy of each file body", () => {
  it("over ten compactions: file bodies bounded by the auto-read limit, current, unique, the retained message first", async () => {
    const root = await tempDir();
    for (let n = 0; n < FILES; n++) await writeFile(path.join(root, `f${n}.ts`), body(0, n));
    const s = await startScriptedServer({ provider: "anthropic", validate: true, script: step });
    servers.push(s);
    const pod = await Pod.create({
      cwd: root,
      dataDir: path.join(root, ".data"),
      fsync: "never",
      // Threshold 20k tokens: a turn adds ~11k (a 40 KB message, a file, a read), so every
      // second turn crosses it and a compaction brings it back to about one turn.
      contextWindow: 25_000,
      client: createClient({
        provider: "anthropic",
        model: "claude-haiku-4-5",
        apiKey: "k",
        baseURL: s.baseURL,
        retry: { maxAttempts: 1 },
      }),
    });
    const compactions: PodEvent[] = [];
    pod.subscribe((e) => {
      // A snapshot: the worker keeps appending to the array it adopted.
      if (e.type === "history_replaced" && e.reason === "compaction")
        compactions.push({ ...e, items: [...e.items] });
    });
    try {
      const padding = "Consider the design notes. ".repeat(1_500); // ~40 KB
      for (let turn = 0; compactions.length < 10; turn++) {
        expect(turn).toBeLessThan(30);
        // Every file changes each turn, so a stale copy would show an old version.
        for (let n = 0; n < FILES; n++) await writeFile(path.join(root, `f${n}.ts`), body(turn + 1, n));
        const result = await pod.run(`@f${turn % FILES}.ts look at this and the next file. ${padding}`);
        expect(result.status).toBe("completed");
        if (compactions.length === 0) continue;

        const history = pod.history;
        // The retain message comes first.
        expect(messageText(history[0] as Extract<Item, { type: "message" }>).startsWith(RETAIN_HEADER)).toBe(
          true,
        );
        expect(isCompactionMessage(history[1]!)).toBe(true);
        const files = fileMessages(history);
        expect(files.length).toBeGreaterThan(0);
        // The auto-read files plus at most the @refs of the two turns since the last compaction.
        expect(files.length).toBeLessThanOrEqual(AUTO_READ_MAX_FILES + 2);
        expect(new Set(files).size).toBe(files.length);
        for (const item of history) {
          const p = attachedFilePath(item);
          if (p === undefined) continue;
          const n = Number(p.slice(1, -3));
          expect(messageText(item as Extract<Item, { type: "message" }>)).toBe(
            `[File: ${p}]\n${body(turn + 1, n)}`,
          );
        }
      }
      expect(s.rejections).toEqual([]);
      // Right after each compaction: at most the auto-read limit of bodies, one per file, retain first.
      for (const event of compactions) {
        if (event.type !== "history_replaced") continue;
        const files = fileMessages(event.items);
        expect(files.length).toBeLessThanOrEqual(AUTO_READ_MAX_FILES);
        expect(new Set(files).size).toBe(files.length);
        expect(isCompactionMessage(event.items[0]!)).toBe(true);
      }
      // So no request ever carried more than that plus two turns' @refs (the system prompt not counted).
      for (const request of s.requests) {
        const count = JSON.stringify((request as AnthropicBody).messages).split("[File: ").length - 1;
        expect(count).toBeLessThanOrEqual(AUTO_READ_MAX_FILES + 2);
      }
    } finally {
      await pod.close();
    }
  }, 60_000);
});
