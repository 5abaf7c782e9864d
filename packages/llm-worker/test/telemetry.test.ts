/**
 * OpenTelemetry of the loop: a run through the real client against the
 * scripted provider makes the span tree invoke_agent -> chat, execute_tool
 * (one per call of the parallel batch, with its call id, batch id and
 * index) -> chat, with what a tool does hanging under its own call's span,
 * and records the tool-duration histogram.
 */
import { setTimeout as delay } from "node:timers/promises";
import { context, metrics, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
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
import { createClient } from "@yoi/llm-client";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import * as z from "zod";
import { defineTool } from "../src/tool.ts";
import { Worker } from "../src/worker.ts";

const exporter = new InMemorySpanExporter();
const reader = new PeriodicExportingMetricReader({
  exporter: new InMemoryMetricExporter(0),
  exportIntervalMillis: 3_600_000,
});
const servers: ScriptedServer[] = [];

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(
    new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
  );
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
});
afterAll(() => {
  trace.disable();
  metrics.disable();
  context.disable();
});
afterEach(async () => {
  exporter.reset();
  vi.unstubAllEnvs();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Waits `ms`, then makes a span of its own in whatever context is active. */
const slow = defineTool({
  name: "slow",
  description: "Wait, then answer.",
  inputSchema: z.object({ ms: z.number(), tag: z.string() }),
  execute: async ({ ms, tag }) => {
    await delay(ms);
    trace.getTracer("test-tool").startSpan(`inner ${tag}`).end();
    return `done ${tag} with secret-arg`;
  },
});

async function runWithBatch(): Promise<Worker> {
  const server = await startScriptedServer({
    provider: "anthropic",
    validate: true,
    script: [
      {
        type: "reply",
        toolCalls: [
          { id: "call_a", name: "slow", arguments: { ms: 60, tag: "a" } },
          { id: "call_b", name: "slow", arguments: { ms: 5, tag: "b" } },
        ],
      },
      { type: "reply", text: "all done", options: { usage: { inputTokens: 50, outputTokens: 3 } } },
    ],
  });
  servers.push(server);
  const client = createClient({
    provider: "anthropic",
    model: "claude-test",
    apiKey: "test-key-not-secret",
    baseURL: server.baseURL,
  });
  const worker = new Worker({ client, tools: [slow] });
  const result = await worker.run("run both", { agent: { name: "yoi", conversationId: "session-1" } });
  expect(result.status).toBe("completed");
  return worker;
}

function byName(spans: ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((s) => s.name === name);
}

describe("agent and tool spans", () => {
  it("invoke_agent holds the chat and execute_tool spans; a tool's own work hangs under its call", async () => {
    await runWithBatch();
    const spans = exporter.getFinishedSpans();
    const [agent, ...otherAgents] = byName(spans, "invoke_agent yoi");
    expect(otherAgents).toHaveLength(0);
    expect(agent!.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "yoi",
      "gen_ai.conversation.id": "session-1",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-test",
      "yoi.run.status": "completed",
      "yoi.run.turns": 2,
    });
    const agentId = agent!.spanContext().spanId;
    const chats = byName(spans, "chat claude-test");
    expect(chats).toHaveLength(2);
    for (const chat of chats) expect(chat.parentSpanContext?.spanId).toBe(agentId);

    const tools = byName(spans, "execute_tool slow");
    expect(tools).toHaveLength(2);
    const [a, b] = ["call_a", "call_b"].map(
      (id) => tools.find((t) => t.attributes["gen_ai.tool.call.id"] === id)!,
    );
    for (const [span, index] of [
      [a!, 0],
      [b!, 1],
    ] as const) {
      expect(span.parentSpanContext?.spanId).toBe(agentId);
      expect(span.attributes).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "slow",
        "yoi.tool.batch.index": index,
        "yoi.tool.batch.size": 2,
        "yoi.tool.outcome": "ok",
      });
      expect(span.attributes["gen_ai.tool.call.arguments"]).toBeUndefined();
      expect(span.attributes["gen_ai.tool.call.result"]).toBeUndefined();
    }
    expect(a!.attributes["yoi.tool.batch.id"]).toBe(b!.attributes["yoi.tool.batch.id"]);
    // The two calls overlapped (parallel batch), and each one's inner span is its own child.
    expect(a!.startTime[0] * 1e9 + a!.startTime[1]).toBeLessThan(b!.endTime[0] * 1e9 + b!.endTime[1]);
    expect(byName(spans, "inner a")[0]!.parentSpanContext?.spanId).toBe(a!.spanContext().spanId);
    expect(byName(spans, "inner b")[0]!.parentSpanContext?.spanId).toBe(b!.spanContext().spanId);
    // The batch runs between the two model calls.
    const [first, second] = [...chats].sort(
      (x, y) => x.startTime[0] - y.startTime[0] || x.startTime[1] - y.startTime[1],
    );
    // The SDK takes a span's start from Date.now() (whole ms) and its end from the performance clock:
    // compare to the millisecond.
    const ms = (t: readonly [number, number]) => t[0] * 1e3 + Math.floor(t[1] / 1e6);
    expect(ms(second!.startTime)).toBeGreaterThanOrEqual(ms(a!.endTime));
    expect(first!.attributes["gen_ai.response.finish_reasons"]).toEqual(["tool_use"]);

    const { resourceMetrics } = await reader.collect();
    const duration = resourceMetrics.scopeMetrics
      .flatMap((s) => s.metrics)
      .find((m) => m.descriptor.name === "yoi.tool.duration");
    expect(duration?.descriptor.unit).toBe("s");
    const point = duration?.dataPoints.find((p) => p.attributes["gen_ai.tool.name"] === "slow");
    expect(point?.value).toMatchObject({ count: 2 });
  });

  it("captures tool arguments and results only with the opt-in variable", async () => {
    vi.stubEnv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true");
    await runWithBatch();
    const [a] = exporter
      .getFinishedSpans()
      .filter((s) => s.name === "execute_tool slow" && s.attributes["gen_ai.tool.call.id"] === "call_a");
    expect(a!.attributes["gen_ai.tool.call.arguments"]).toBe(JSON.stringify({ ms: 60, tag: "a" }));
    expect(a!.attributes["gen_ai.tool.call.result"]).toBe("done a with secret-arg");
  });
});
