/**
 * Every damaged variant of a real session log resumes and its next request
 * is one a provider accepts: the pod restores it, and a run against a
 * scripted Anthropic server that validates requests like the real API
 * (tool results answer calls, roles, content shapes) completes.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient } from "@yoi/llm-client";
import { startScriptedServer } from "@yoi/llm-client/testing";
import { ConfigSchema } from "@yoi/manifest";
import { sessionPath } from "@yoi/worker-persistence";
import { describe, expect, it } from "vitest";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

type Json = Record<string, unknown>;
type Edit = (lines: string[], i: number) => string[] | undefined;

const at = (lines: string[], i: number, line: string) => [...lines.slice(0, i), line, ...lines.slice(i + 1)];
const itemOf = (line: string): Json => ((JSON.parse(line) as Json).item ?? {}) as Json;
const retype =
  (type: string, change: (item: Json) => void): Edit =>
  (lines, i) => {
    const record = JSON.parse(lines[i]!) as Json;
    const item = (record.item ?? {}) as Json;
    if (item.type !== type) return undefined;
    change(item);
    return at(lines, i, JSON.stringify(record));
  };

const EDITS: Record<string, Edit> = {
  cut: (l, i) => at(l, i, l[i]!.slice(0, Math.floor(l[i]!.length / 2))),
  nul: (l, i) => at(l, i, `${l[i]!.slice(0, 12)}\0\0\0${l[i]!.slice(12)}`),
  "bad json": (l, i) => at(l, i, '{"v":1,"seq":'),
  "arguments not a string": retype("tool_call", (item) => {
    item.arguments = { path: 3 };
  }),
  "content not an array": retype("message", (item) => {
    item.content = "text";
  }),
  "isError missing": retype("tool_result", (item) => {
    delete item.isError;
  }),
  "result deleted": (l, i) =>
    itemOf(l[i]!).type === "tool_result" ? [...l.slice(0, i), ...l.slice(i + 1)] : undefined,
  "call deleted": (l, i) =>
    itemOf(l[i]!).type === "tool_call" ? [...l.slice(0, i), ...l.slice(i + 1)] : undefined,
};

describe("a damaged session log stays resumable, end to end", () => {
  it("each single-line damage: restore, then a run the validating server accepts", async () => {
    const base = await tempDir();
    const root = path.join(base, "project");
    const dataDir = path.join(base, "data");
    await mkdir(root, { recursive: true });
    await writeFile(path.join(root, "a.txt"), "alpha\n");
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: (index) =>
        index === 0
          ? {
              type: "reply",
              text: "Reading.",
              toolCalls: [{ id: "toolu_r", name: "read_file", arguments: { path: "a.txt" } }],
            }
          : { type: "reply", text: `answer ${index}` },
    });
    try {
      const options = {
        cwd: root,
        dataDir,
        fsync: "never" as const,
        config: ConfigSchema.parse({}),
        client: createClient({
          provider: "anthropic",
          model: "claude-haiku-4-5",
          apiKey: "k",
          baseURL: server.baseURL,
          retry: { maxAttempts: 1 },
        }),
      };
      const pod = await Pod.create(options);
      await pod.run("read a.txt");
      await pod.run("and then?");
      await pod.close();
      const file = sessionPath(dataDir, pod.id);
      const original = (await readFile(file, "utf8")).trimEnd().split("\n");
      let cases = 0;
      for (const [name, edit] of Object.entries(EDITS)) {
        for (let i = 0; i < original.length; i++) {
          const edited = edit(original, i);
          if (edited === undefined) continue;
          cases++;
          await writeFile(file, `${edited.join("\n")}\n`);
          const restored = await Pod.restore(pod.id, options);
          try {
            const result = await restored.run("still there?");
            expect(result.status, `${name} at line ${i + 1}: ${result.error?.message ?? ""}`).toBe(
              "completed",
            );
          } finally {
            await restored.close();
          }
        }
      }
      expect(cases).toBeGreaterThan(40);
      expect(server.rejections).toEqual([]);
    } finally {
      await server.close();
    }
  }, 120_000);
});
