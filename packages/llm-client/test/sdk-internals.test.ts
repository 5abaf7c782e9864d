/**
 * The adapters read server-sent events through SDK entry points that are
 * not part of the SDKs' documented API (`_iterSSEMessages` of `openai`,
 * `Stream.rawEvents` of `@anthropic-ai/sdk`), and rely on `asResponse()`
 * of the request promise. The SDK versions are pinned exactly in
 * package.json for that reason; these checks make an upgrade that moves or
 * changes one of them fail here, naming the SDK and the symbol, instead of
 * at a user's first stream.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const packageDir = new URL("../", import.meta.url);
const manifest = JSON.parse(readFileSync(new URL("package.json", packageDir), "utf8")) as {
  dependencies: Record<string, string>;
};

function installedVersion(sdk: string): string {
  const json = readFileSync(new URL(`node_modules/${sdk}/package.json`, packageDir), "utf8");
  return (JSON.parse(json) as { version: string }).version;
}

const SSE = 'event: delta\ndata: {"a":1}\n\n: keep-alive\n\ndata: [DONE]\n\n';

async function readAll(iterable: AsyncIterable<{ event: string | null; data: string }>) {
  const out: { event: string | null; data: string }[] = [];
  for await (const item of iterable) out.push({ event: item.event, data: item.data });
  return out;
}

function mustBeFunction(value: unknown, sdk: string, symbol: string, users: string): void {
  if (typeof value !== "function") {
    throw new Error(
      `${sdk} ${installedVersion(sdk)}: ${symbol} is ${typeof value}, not a function. ` +
        `The ${users} adapter reads server-sent events through it; adapt the adapter to the new SDK ` +
        "(or keep the pinned version in packages/llm-client/package.json) before upgrading.",
    );
  }
}

describe("SDK versions are pinned exactly", () => {
  for (const sdk of ["openai", "@anthropic-ai/sdk", "@google/genai"]) {
    it(sdk, () => {
      const spec = manifest.dependencies[sdk];
      expect(spec, `${sdk} must be pinned to an exact version (see README "SDK versions")`).toMatch(
        /^\d+\.\d+\.\d+$/,
      );
      expect(installedVersion(sdk), `installed ${sdk} differs from package.json; run pnpm install`).toBe(
        spec,
      );
    });
  }
});

describe("SDK-internal entry points the adapters import", () => {
  it("openai: _iterSSEMessages from openai/core/streaming yields { event, data }", async () => {
    const streaming = (await import("openai/core/streaming")) as Record<string, unknown>;
    mustBeFunction(
      streaming._iterSSEMessages,
      "openai",
      "_iterSSEMessages (openai/core/streaming)",
      "openai-chat and openai-responses",
    );
    const iterate = streaming._iterSSEMessages as (
      response: Response,
      controller: AbortController,
    ) => AsyncIterable<{ event: string | null; data: string }>;
    expect(await readAll(iterate(new Response(SSE), new AbortController()))).toEqual([
      { event: "delta", data: '{"a":1}' },
      { event: null, data: "[DONE]" },
    ]);
  });

  it("@anthropic-ai/sdk: Stream.rawEvents from @anthropic-ai/sdk/core/streaming yields { event, data }", async () => {
    const streaming = (await import("@anthropic-ai/sdk/core/streaming")) as Record<string, unknown>;
    const Stream = streaming.Stream as { rawEvents?: unknown } | undefined;
    mustBeFunction(
      Stream?.rawEvents,
      "@anthropic-ai/sdk",
      "Stream.rawEvents (@anthropic-ai/sdk/core/streaming)",
      "anthropic",
    );
    const rawEvents = Stream!.rawEvents as (
      response: Response,
      controller?: AbortController,
    ) => AsyncIterable<{ event: string | null; data: string }>;
    expect(await readAll(rawEvents(new Response(SSE), new AbortController()))).toEqual([
      { event: "delta", data: '{"a":1}' },
      { event: null, data: "[DONE]" },
    ]);
  });

  it("both: the request promise still has asResponse()", async () => {
    const { default: OpenAI } = await import("openai");
    const { default: Anthropic } = await import("@anthropic-ai/sdk");
    const fetch = async () => new Response(SSE, { headers: { "content-type": "text/event-stream" } });
    const openai = new OpenAI({ apiKey: "k", baseURL: "http://127.0.0.1:9/v1", maxRetries: 0, fetch });
    const anthropic = new Anthropic({ apiKey: "k", baseURL: "http://127.0.0.1:9", maxRetries: 0, fetch });
    const promises: [string, unknown][] = [
      ["openai", openai.responses.create({ model: "m", input: "hi", stream: true })],
      [
        "@anthropic-ai/sdk",
        anthropic.messages.create({
          model: "m",
          max_tokens: 1,
          messages: [{ role: "user", content: "hi" }],
          stream: true,
        }),
      ],
    ];
    for (const [sdk, promise] of promises) {
      const asResponse = (promise as { asResponse?: unknown }).asResponse;
      mustBeFunction(asResponse, sdk, "APIPromise.asResponse", sdk === "openai" ? "openai" : "anthropic");
      const response = await (promise as { asResponse(): Promise<Response> }).asResponse();
      expect(response, `${sdk}: asResponse() must resolve to the fetch Response`).toBeInstanceOf(Response);
      await response.body?.cancel();
    }
  });
});
