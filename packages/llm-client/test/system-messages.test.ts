import { afterEach, describe, expect, it } from "vitest";
import { buildGeminiRequest } from "../src/adapters/gemini/request.ts";
import { buildOpenAIChatRequest } from "../src/adapters/openai-chat/request.ts";
import { buildResponsesRequest } from "../src/adapters/openai-responses/request.ts";
import { assistantMessage, systemMessage, userMessage } from "../src/item.ts";
import type { Request } from "../src/request.ts";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "../src/testing/scripted-server.ts";
import { clientFor, collect } from "./stream-helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const FILE = "[File: src/a.ts]\nexport const a = 1;";

/** A session as the pod builds it: an @path body as a system message after the user's words. */
const REQUEST: Request = {
  system: "You are yoi.",
  items: [
    systemMessage("Standing rule."),
    userMessage("look at @src/a.ts"),
    systemMessage(FILE),
    assistantMessage("It exports a."),
    userMessage("thanks"),
  ],
  settings: { maxTokens: 100 },
};

interface ChatMessage {
  role: string;
  content: unknown;
}

/**
 * A compatible server like llama.cpp with a Qwen/Llama/Mistral template:
 * a system message anywhere but first is a 400.
 */
function llamaCppLike(_index: number, body: unknown): ScriptStep {
  const messages = (body as { messages: ChatMessage[] }).messages;
  if (messages.some((m, i) => m.role === "system" && i > 0)) {
    return { type: "error", status: 400, message: "System message must be at the beginning." };
  }
  return { type: "reply", text: "fine" };
}

describe("system messages every server accepts", () => {
  it("a compatible server gets one leading system message and the rest as marked user text", async () => {
    const s = await startScriptedServer({ provider: "openai-chat", validate: true, script: llamaCppLike });
    servers.push(s);
    const { client } = clientFor("openai-chat", s.baseURL);
    const r = await collect(client.stream(REQUEST));
    expect(r.status).toBe("completed");
    const messages = (s.requests[0] as { messages: ChatMessage[] }).messages;
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(messages[0]!.content).toBe("You are yoi.\n\nStanding rule.");
    // Merged into the user's own message, so no two user turns in a row.
    expect(messages[1]!.content).toBe(`look at @src/a.ts\n\n<system-reminder>\n${FILE}\n</system-reminder>`);
  });

  it("the capability flag overrides the default: declared as accepted, the same server answers 400", async () => {
    const s = await startScriptedServer({ provider: "openai-chat", validate: true, script: llamaCppLike });
    servers.push(s);
    const { client } = clientFor("openai-chat", s.baseURL, {
      systemMessagesAnywhere: true,
      retry: { maxAttempts: 1 },
    });
    const r = await collect(client.stream(REQUEST));
    expect(r.status).toBe("failed");
    expect(JSON.stringify(r)).toContain("System message must be at the beginning.");
    const messages = (s.requests[0] as { messages: ChatMessage[] }).messages;
    expect(messages.filter((m) => m.role === "system")).toHaveLength(3);
  });

  it("OpenAI's own Chat API keeps system messages where they are; a flag of false converts them", () => {
    const own = buildOpenAIChatRequest("gpt-4.1", REQUEST, { openai: true }).params.messages;
    expect(own.map((m) => m.role)).toEqual(["system", "system", "user", "system", "assistant", "user"]);
    const strict = buildOpenAIChatRequest("gpt-4.1", REQUEST, {
      openai: true,
      systemMessagesAnywhere: false,
    }).params.messages;
    expect(strict.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
  });

  it("Responses: OpenAI keeps the system role; a compatible server gets marked user text", () => {
    const own = buildResponsesRequest("gpt-5", REQUEST).params.input as ChatMessage[];
    expect(own.map((m) => m.role)).toEqual(["system", "user", "system", "assistant", "user"]);
    const compat = buildResponsesRequest("gpt-5", REQUEST, undefined, { systemMessagesAnywhere: false })
      .params.input as ChatMessage[];
    expect(compat.map((m) => m.role)).toEqual(["system", "user", "user", "assistant", "user"]);
    expect(compat[2]!.content).toBe(`<system-reminder>\n${FILE}\n</system-reminder>`);
  });

  it("Gemini: only the leading system text goes to systemInstruction; a later one stays in place as marked user text", () => {
    const { contents, config } = buildGeminiRequest(REQUEST);
    expect(config.systemInstruction).toBe("You are yoi.\n\nStanding rule.");
    expect(contents.map((c) => c.role)).toEqual(["user", "model", "user"]);
    expect(contents[0]!.parts).toEqual([
      { text: "look at @src/a.ts" },
      { text: `<system-reminder>\n${FILE}\n</system-reminder>` },
    ]);
  });
});
