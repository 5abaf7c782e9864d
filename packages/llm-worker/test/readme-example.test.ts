// The embedding example of the root README, run as written against a fake
// Anthropic server on 127.0.0.1 (only the base URL and key are added).
import { createClient } from "@yoi/llm-client";
import { startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, expect, it } from "vitest";
import * as z from "zod";
import { defineTool, Worker } from "../src/index.ts";

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
});

it("the README's smallest loop calls the tool and prints the answer", async () => {
  const server = await startScriptedServer({
    provider: "anthropic",
    validate: true,
    script: [
      { type: "reply", toolCalls: [{ id: "toolu_1", name: "clock", arguments: {} }] },
      { type: "reply", text: "It is noon." },
    ],
  });
  close = server.close;
  const printed: string[] = [];

  const client = createClient({
    provider: "anthropic",
    model: "claude-haiku-4-5",
    baseURL: server.baseURL,
    apiKey: "test-key",
  });
  const clock = defineTool({
    name: "clock",
    description: "The current time as ISO 8601.",
    inputSchema: z.object({}),
    execute: () => new Date().toISOString(),
  });
  const worker = new Worker({ client, tools: [clock] });
  worker.subscribe((e) => e.type === "text_delta" && printed.push(e.text));
  const result = await worker.run("What time is it?");

  expect(result.status).toBe("completed");
  expect(printed.join("")).toBe("It is noon.");
  expect(server.rejections).toEqual([]);
  const second = server.requests[1] as { messages: { content: { type: string }[] }[] };
  expect(second.messages.at(-1)?.content[0]?.type).toBe("tool_result");
});
