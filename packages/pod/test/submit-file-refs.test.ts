/**
 * What the submit-time `@path` resolver promises (docs/design/file-refs.md), each
 * as a test, through a real Pod and the real Anthropic adapter against the
 * scripted server.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient, type Item, messageText } from "@yoi/llm-client";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import type { Hook, Interceptor, PromptAction } from "@yoi/llm-worker";
import { TOOL_OUTPUT_MAX_BYTES } from "@yoi/manifest";
import { loadSession } from "@yoi/worker-persistence";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Alert } from "../src/events/alerts.ts";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

let base: string;
let root: string;
let dataDir: string;
let s: ScriptedServer;
let pod: Pod;
let alerts: Alert[];

function textOf(item: Item | undefined): string {
  return item?.type === "message" ? messageText(item) : "";
}

beforeEach(async () => {
  base = await tempDir();
  root = path.join(base, "project");
  dataDir = path.join(base, "data");
  await mkdir(path.join(root, "src"), { recursive: true });
  await writeFile(path.join(base, "secret.txt"), "OUTSIDE-SECRET");
  s = await startScriptedServer({
    provider: "anthropic",
    validate: true,
    script: (i) => ({ type: "reply", text: `answer ${i + 1}` }),
  });
  pod = await Pod.create({
    cwd: root,
    dataDir,
    fsync: "never",
    client: createClient({
      provider: "anthropic",
      model: "claude-haiku-4-5",
      apiKey: "test-key",
      baseURL: s.baseURL,
      retry: { maxAttempts: 1 },
    }),
  });
  alerts = [];
  pod.alerts.subscribe((a) => alerts.push(a));
});

afterEach(async () => {
  await pod.close();
  await s.close();
});

describe("@path refs at submit", () => {
  it("1. a submit with @<path> stays in history as the user message plus one system message per resolved ref, in order", async () => {
    await writeFile(path.join(root, "src", "a.ts"), "export const a = 1;\n");
    await writeFile(path.join(root, "notes v2.md"), "# Notes\n");
    await pod.run('compare @src/a.ts with @"notes v2.md".');
    const h = pod.history;
    expect(h.slice(0, 3).map((i) => (i.type === "message" ? i.role : i.type))).toEqual([
      "user",
      "system",
      "system",
    ]);
    expect(textOf(h[0])).toBe(
      "compare [unresolved file ref: src/a.ts] with [unresolved file ref: notes v2.md].",
    );
    expect(textOf(h[1])).toBe("[File: src/a.ts]\nexport const a = 1;\n");
    expect(textOf(h[2])).toBe("[File: notes v2.md]\n# Notes\n");
    // Still visible to the model on the next turn.
    await pod.run("and now?");
    const second = JSON.stringify(s.requests[1]);
    expect(second).toContain("[File: src/a.ts]");
    expect(second).toContain("[File: notes v2.md]");
    // And in the session log, with their reason.
    const log = await loadSession({ dir: dataDir, id: pod.id });
    const reasons = log.records.flatMap((r) => (r.type === "item" ? [r.reason] : []));
    expect(reasons.slice(0, 4)).toEqual(["user", "file_ref", "file_ref", "assistant"]);
  });

  it("2. a file over 16 KiB is truncated, and the model is told so", async () => {
    const line = "0123456789abcdef".repeat(4) + "\n"; // 65 bytes
    const body = line.repeat(700); // 45,500 bytes
    await writeFile(path.join(root, "big.log"), body);
    await pod.run("summarize @big.log");
    const attached = textOf(pod.history[1]);
    const note = `[...truncated, ${body.length} bytes total — use read_file for the rest]`;
    expect(attached.endsWith(note)).toBe(true);
    const kept = attached.slice("[File: big.log]\n".length, -note.length);
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(TOOL_OUTPUT_MAX_BYTES + 1);
    expect(body.startsWith(kept.trimEnd())).toBe(true);
    expect(JSON.stringify(s.requests[0])).toContain(note);
  });

  it("3. out of scope, not found, binary and directory refs raise warn alerts; the model sees only the placeholders", async () => {
    await writeFile(
      path.join(root, "logo.png"),
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2]),
    );
    await symlink(path.join(base, "secret.txt"), path.join(root, "sneaky.txt"));
    await mkdir(path.join(root, "docs"), { recursive: true });
    await pod.run("look at @../secret.txt @sneaky.txt @nope.ts @logo.png @docs");
    expect(alerts.map((a) => [a.level, a.source])).toEqual([
      ["warn", "file_ref"],
      ["warn", "file_ref"],
      ["warn", "file_ref"],
      ["warn", "file_ref"],
      ["warn", "file_ref"],
    ]);
    expect(alerts.map((a) => a.message)).toEqual([
      expect.stringMatching(/^@\.\.\/secret\.txt was not attached: \.\.\/secret\.txt is outside the scope/),
      expect.stringMatching(
        /^@sneaky\.txt was not attached: sneaky\.txt leads outside the scope through a symbolic link/,
      ),
      "@nope.ts was not attached: nope.ts: no such file or directory; to send it as text, write \\@nope.ts",
      "@logo.png was not attached: logo.png is a damaged PNG image (the file is cut off); to send it as text, write \\@logo.png",
      "@docs was not attached: docs is a directory; only a file can be attached; to send it as text, write \\@docs",
    ]);
    expect(pod.history.filter((i) => i.type === "message" && i.role === "system")).toEqual([]);
    const request = JSON.stringify((s.requests[0] as { messages: unknown }).messages);
    expect(request).not.toContain("[File:");
    expect(request).not.toContain("OUTSIDE-SECRET");
    for (const p of ["../secret.txt", "sneaky.txt", "nope.ts", "logo.png", "docs"]) {
      expect(request).toContain(`[unresolved file ref: ${p}]`);
    }
    const log = await loadSession({ dir: dataDir, id: pod.id });
    expect(log.records.filter((r) => r.type === "alert")).toHaveLength(5);
  });

  it("4. Hook return types stay as they were; only an Interceptor may return ContinueWith", () => {
    const interceptorAction: PromptAction = { action: "continue_with", items: [] };
    const interceptor: Interceptor = { onPromptSubmit: () => interceptorAction };
    const hook: Hook = {
      // @ts-expect-error a Hook cannot add items: its prompt action has no continue_with
      onPromptSubmit: () => ({ action: "continue_with", items: [] }),
    };
    expect(interceptor.onPromptSubmit).toBeTypeOf("function");
    expect(hook.onPromptSubmit).toBeTypeOf("function");
  });
});
