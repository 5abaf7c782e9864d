/**
 * Images inside tool results: which providers take them, what the others
 * get instead, and the capability strip for text-only models.
 */
import { describe, expect, it } from "vitest";
import { buildGeminiRequest } from "../src/adapters/gemini/request.ts";
import { buildOpenAIChatRequest } from "../src/adapters/openai-chat/request.ts";
import { applyCapabilities } from "../src/capabilities.ts";
import type { Item } from "../src/item.ts";
import { acceptsToolResultImages } from "../src/tool-result-images.ts";

const PNG = "iVBORw0KGgo=";
const items: Item[] = [
  { type: "message", role: "user", content: [{ type: "text", text: "look" }] },
  { type: "tool_call", callId: "c1", name: "read_file", arguments: '{"path":"a.png"}' },
  {
    type: "tool_result",
    callId: "c1",
    name: "read_file",
    output: "[Image: a.png]",
    isError: false,
    images: [{ type: "image", mediaType: "image/png", data: PNG }],
  },
];

describe("images in tool results", () => {
  it("are taken by Anthropic, OpenAI Responses and Gemini 3 only", () => {
    expect(acceptsToolResultImages("anthropic", "claude-haiku-4-5")).toBe(true);
    expect(acceptsToolResultImages("openai-responses", "gpt-4.1")).toBe(true);
    expect(acceptsToolResultImages("openai-chat", "gpt-4.1")).toBe(false);
    expect(acceptsToolResultImages("gemini", "gemini-3-pro-preview")).toBe(true);
    expect(acceptsToolResultImages("gemini", "models/gemini-3-flash")).toBe(true);
    expect(acceptsToolResultImages("gemini", "gemini-2.5-flash")).toBe(false);
  });

  it("become a note on OpenAI Chat and Gemini 2.5, never a silent drop", () => {
    const chat = buildOpenAIChatRequest("gpt-4.1", { items }, { openai: true });
    const tool = chat.params.messages.find((m) => m.role === "tool");
    expect(tool?.content).toBe(
      "[Image: a.png]\n[1 image omitted: openai-chat gpt-4.1 does not take images in tool results]",
    );
    const gemini = buildGeminiRequest({ items }, "gemini-2.5-flash");
    const response = gemini.contents.flatMap((c) => c.parts ?? []).find((p) => p.functionResponse);
    expect(response?.functionResponse?.parts).toBeUndefined();
    expect(JSON.stringify(response?.functionResponse?.response)).toContain("1 image omitted");
  });

  it("are replaced by a note for a text-only model", () => {
    const caps = {
      tools: true,
      parallelTools: true,
      reasoning: "none",
      vision: false,
      promptCaching: false,
    } as const;
    const { request, warnings } = applyCapabilities("anthropic", "m", caps, { items });
    const result = request.items[2];
    expect(result).toMatchObject({
      type: "tool_result",
      output: "[Image: a.png]\n[1 image(s) omitted: m does not accept images]",
    });
    expect(result && "images" in result).toBe(false);
    expect(warnings.map((w) => w.detail?.setting)).toEqual(["image"]);
  });
});
