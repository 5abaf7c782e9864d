/**
 * OpenTelemetry of model calls: with an SDK registered (in-memory exporter
 * and metric reader), each `stream` call through the real SDKs against the
 * scripted server makes one `chat <model>` span with the GenAI attributes,
 * retries as span events, errors with `error.type`, the GenAI client
 * metrics; prompt text only with the opt-in variable, and then redacted.
 */
import { context, metrics, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { registerSecret } from "../src/redact.ts";
import { startScriptedServer } from "../src/testing/scripted-server.ts";
import { clientFor, collect, hello } from "./stream-helpers.ts";

const spans = new InMemorySpanExporter();
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({
  exporter: metricExporter,
  exportIntervalMillis: 3_600_000,
});
const servers: { close(): Promise<void> }[] = [];

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(
    new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] }),
  );
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
});
afterAll(() => {
  trace.disable();
  metrics.disable();
  context.disable();
});
afterEach(async () => {
  spans.reset();
  vi.unstubAllEnvs();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function chatSpans(): ReadableSpan[] {
  return spans.getFinishedSpans().filter((s) => s.name.startsWith("chat "));
}

async function metricPoints(
  name: string,
): Promise<{ attributes: Record<string, unknown>; value: unknown }[]> {
  const { resourceMetrics } = await reader.collect();
  const found = resourceMetrics.scopeMetrics
    .flatMap((s) => s.metrics)
    .find((m) => m.descriptor.name === name);
  return (found?.dataPoints ?? []).map((p) => ({ attributes: p.attributes, value: p.value }));
}

describe("model call spans", () => {
  it("one chat span per call with the GenAI attributes, under the caller's active span", async () => {
    const s = await startScriptedServer({
      provider: "anthropic",
      script: [
        {
          type: "reply",
          text: "Hi there",
          toolCalls: [{ id: "call_1", name: "read", arguments: { path: "a.txt" } }],
          options: { usage: { inputTokens: 120, outputTokens: 7 } },
        },
      ],
    });
    servers.push(s);
    const { client } = clientFor("anthropic", s.baseURL);
    const parent = trace.getTracer("test").startSpan("parent");
    const r = await context.with(trace.setSpan(context.active(), parent), () =>
      collect(client.stream({ ...hello(), settings: { maxTokens: 500 } })),
    );
    parent.end();
    expect(r.status).toBe("completed");
    const [span, ...more] = chatSpans();
    expect(more).toHaveLength(0);
    expect(span!.name).toBe("chat claude-test");
    expect(span!.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(span!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-test",
      "gen_ai.response.model": expect.any(String),
      "gen_ai.request.max_tokens": 500,
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 7,
      "gen_ai.response.finish_reasons": ["tool_use"],
      "server.address": "127.0.0.1",
    });
    // The SDK's own call span (an HTTP-level detail) hangs under the chat span, without content.
    const sdkSpans = spans.getFinishedSpans().filter((s) => s.name === "anthropic.messages.create");
    expect(sdkSpans).toHaveLength(1);
    expect(sdkSpans[0]!.parentSpanContext?.spanId).toBe(span!.spanContext().spanId);
    expect(JSON.stringify(sdkSpans[0]!.attributes)).not.toContain("hello");
    // No prompt or completion text without the opt-in.
    expect(span!.attributes["gen_ai.input.messages"]).toBeUndefined();
    expect(span!.attributes["gen_ai.output.messages"]).toBeUndefined();
    expect(JSON.stringify(span!.attributes)).not.toContain("hello");

    const tokens = await metricPoints("gen_ai.client.token.usage");
    expect(tokens.find((p) => p.attributes["gen_ai.token.type"] === "input")).toMatchObject({
      attributes: { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic" },
      value: expect.objectContaining({ sum: 120, count: 1 }),
    });
    const durations = await metricPoints("gen_ai.client.operation.duration");
    expect(durations.length).toBeGreaterThan(0);
  });

  it("retries become span events; a failed call carries error.type and an error status", async () => {
    const s = await startScriptedServer({
      provider: "openai-chat",
      script: [
        { type: "error", status: 503, message: "overloaded" },
        { type: "error", status: 400, message: "bad request" },
      ],
    });
    servers.push(s);
    const { client } = clientFor("openai-chat", s.baseURL);
    const r = await collect(client.stream(hello()));
    expect(r.status).toBe("failed");
    const [span] = chatSpans();
    expect(span!.attributes["gen_ai.provider.name"]).toBe("openai");
    expect(span!.events.map((e) => e.name)).toEqual(["yoi.retry"]);
    expect(span!.events[0]!.attributes).toMatchObject({
      "yoi.retry.attempt": 2,
      "http.response.status_code": 503,
    });
    expect(span!.attributes["error.type"]).toBe(r.errors[0]!.code);
    expect(span!.status.code).toBe(2); // ERROR
    expect(span!.attributes["gen_ai.response.finish_reasons"]).toBeUndefined();
  });

  it("with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, text is recorded with secrets redacted", async () => {
    vi.stubEnv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true");
    const secret = "tok-4b1d-92af-telemetry";
    registerSecret(secret);
    const s = await startScriptedServer({
      provider: "gemini",
      script: [{ type: "reply", text: `the key is ${secret}, done`, options: { chunkSize: 3 } }],
    });
    servers.push(s);
    const { client } = clientFor("gemini", s.baseURL);
    await collect(client.stream({ system: "be brief", items: hello().items }));
    const [span] = chatSpans();
    const input = String(span!.attributes["gen_ai.input.messages"]);
    const output = String(span!.attributes["gen_ai.output.messages"]);
    expect(JSON.parse(input)).toEqual([{ role: "user", parts: [{ type: "text", content: "hello" }] }]);
    expect(span!.attributes["gen_ai.system_instructions"]).toContain("be brief");
    expect(output).toContain("the key is <redacted>, done");
    expect(output).not.toContain(secret);
    expect(span!.attributes["gen_ai.provider.name"]).toBe("gcp.gemini");
  });

  it("a caller that stops reading still ends the span", async () => {
    const s = await startScriptedServer({
      provider: "openai-responses",
      script: [
        { type: "reply", text: "a long answer that is not read to its end", options: { chunkSize: 2 } },
      ],
    });
    servers.push(s);
    const { client } = clientFor("openai-responses", s.baseURL);
    for await (const event of client.stream(hello())) if (event.type === "block_delta") break;
    const [span] = chatSpans();
    expect(span).toBeDefined();
    expect(span!.ended).toBe(true);
    expect(span!.attributes["gen_ai.response.finish_reasons"]).toBeUndefined();
  });
});
