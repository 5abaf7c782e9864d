import * as path from "node:path";
import { createClient } from "@yoi/llm-client";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { defineTool, type ToolCallEndEvent } from "@yoi/llm-worker";
import { ConfigSchema } from "@yoi/manifest";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

const servers: ScriptedServer[] = [];
const pods: Pod[] = [];
afterEach(async () => {
  for (const p of pods.splice(0)) await p.close();
  for (const s of servers.splice(0)) await s.close();
});

/** `seq 1 20000`, as a tool: 108,894 bytes. */
const SEQ = `${Array.from({ length: 20_000 }, (_, i) => String(i + 1)).join("\n")}\n`;
const seq = defineTool({
  name: "seq",
  description: "prints 1..20000",
  inputSchema: z.object({}),
  execute: async () => SEQ,
});

interface AnthropicBody {
  messages: { role: string; content: string | { type: string; content?: unknown }[] }[];
}

/** The text of the tool_result block the model received. */
function receivedResult(body: unknown): string {
  for (const message of (body as AnthropicBody).messages) {
    if (typeof message.content === "string") continue;
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      const content = block.content;
      if (typeof content === "string") return content;
      return (content as { text: string }[]).map((p) => p.text).join("");
    }
  }
  throw new Error("no tool_result in the request");
}

async function run(storedView?: "summary" | "view") {
  const s = await startScriptedServer({
    provider: "anthropic",
    validate: true,
    script: [
      { type: "reply", toolCalls: [{ id: "toolu_seq", name: "seq", arguments: {} }] },
      { type: "reply", text: "counted" },
    ],
  });
  servers.push(s);
  const root = await tempDir();
  const pod = await Pod.create({
    cwd: root,
    dataDir: path.join(root, ".data"),
    fsync: "never",
    tools: [seq],
    ask: async () => "allow",
    config: ConfigSchema.parse(storedView ? { toolOutputCache: { storedView } } : {}),
    client: createClient({
      provider: "anthropic",
      model: "claude-haiku-4-5",
      apiKey: "k",
      baseURL: s.baseURL,
    }),
  });
  pods.push(pod);
  const ends: ToolCallEndEvent[] = [];
  pod.subscribe((e) => {
    if (e.type === "tool_call_end") ends.push(e);
  });
  expect((await pod.run("count")).status).toBe("completed");
  const [end] = ends;
  return { end: end!, received: receivedResult(s.requests[1]) };
}

describe("one truth about tool output size", () => {
  it("by default the model gets the worker's summary, and tool_call_end reports exactly its bytes and the full size", async () => {
    const { end, received } = await run();
    expect(received).toMatch(/^\[blob:[0-9a-f-]{36}\] text \| 20000 lines\n── head ──\n1\n/);
    expect(Buffer.byteLength(received)).toBeLessThanOrEqual(400);
    expect(end.outputBytes).toBe(Buffer.byteLength(received));
    expect(end.fullBytes).toBe(Buffer.byteLength(SEQ));
    expect(received).toContain(end.blobId!);
  });

  it('with storedView "view" the model gets the in-context view, and the event says so', async () => {
    const { end, received } = await run("view");
    expect(Buffer.byteLength(received)).toBeGreaterThan(40_000);
    expect(Buffer.byteLength(received)).toBeLessThanOrEqual(50 * 1024);
    expect(end.outputBytes).toBe(Buffer.byteLength(received));
    expect(end.fullBytes).toBe(108_894);
  });
});
