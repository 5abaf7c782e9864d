/**
 * OpenTelemetry at the pod's layer: the session's run is `invoke_agent yoi`
 * with the session id as the conversation, a subagent's run nests under the
 * `execute_tool task` call that started it, and `yoi.cost` adds what the
 * catalog's prices say each call cost (the main agent's and the child's).
 */
import { mkdir } from "node:fs/promises";
import * as path from "node:path";
import { context, metrics, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { createClient } from "@yoi/llm-client";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { ConfigSchema } from "@yoi/manifest";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

const exporter = new InMemorySpanExporter();
const reader = new PeriodicExportingMetricReader({
  exporter: new InMemoryMetricExporter(0),
  exportIntervalMillis: 3_600_000,
});
const servers: ScriptedServer[] = [];
const pods: Pod[] = [];

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
  for (const pod of pods.splice(0)) await pod.close().catch(() => {});
  for (const s of servers.splice(0)) await s.close();
});

interface Body {
  system?: string | { text: string }[];
  messages: { role: string }[];
}
const isChild = (b: Body) =>
  (typeof b.system === "string" ? b.system : (b.system ?? []).map((p) => p.text).join("")).includes(
    "You are a subagent",
  );

describe("pod telemetry", () => {
  it("names the run's agent and session, nests a subagent under its task call, counts the cost", async () => {
    const base = await tempDir();
    const root = path.join(base, "project");
    await mkdir(root, { recursive: true });
    const s = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: (_i, raw) => {
        const body = raw as Body;
        const answered = body.messages.some((m) => m.role === "assistant");
        if (isChild(body))
          return {
            type: "reply",
            text: "child done",
            options: { usage: { inputTokens: 1000, outputTokens: 0 } },
          };
        if (!answered)
          return {
            type: "reply",
            toolCalls: [
              { id: "toolu_t1", name: "task", arguments: { description: "look", prompt: "Look around" } },
            ],
            options: { usage: { inputTokens: 1_000_000, outputTokens: 0 } },
          };
        return {
          type: "reply",
          text: "all done",
          options: { usage: { inputTokens: 0, outputTokens: 1000 } },
        };
      },
    });
    servers.push(s);
    const client = createClient({
      provider: "anthropic",
      model: "claude-haiku-4-5",
      apiKey: "k",
      baseURL: s.baseURL,
      retry: { maxAttempts: 1 },
    });
    const pod = await Pod.create({
      cwd: root,
      dataDir: path.join(base, "data"),
      fsync: "never",
      client,
      config: ConfigSchema.parse({ task: { maxDepth: 1 } }),
    });
    pods.push(pod);
    expect((await pod.run("delegate it")).status).toBe("completed");

    const spans = exporter.getFinishedSpans();
    const main = spans.find((x) => x.name === "invoke_agent yoi");
    expect(main?.attributes).toMatchObject({
      "gen_ai.agent.name": "yoi",
      "gen_ai.conversation.id": pod.id,
      "yoi.run.status": "completed",
    });
    const task = spans.find((x) => x.name === "execute_tool task");
    expect(task?.parentSpanContext?.spanId).toBe(main!.spanContext().spanId);
    const child = spans.find((x) => x.name === "invoke_agent task");
    expect(child?.parentSpanContext?.spanId).toBe(task!.spanContext().spanId);
    const childChat = spans.find(
      (x) => x.name.startsWith("chat ") && x.parentSpanContext?.spanId === child!.spanContext().spanId,
    );
    expect(childChat).toBeDefined();

    const { resourceMetrics } = await reader.collect();
    const cost = resourceMetrics.scopeMetrics
      .flatMap((m) => m.metrics)
      .find((m) => m.descriptor.name === "yoi.cost");
    expect(cost?.descriptor.unit).toBe("USD");
    const byAgent = Object.fromEntries(
      cost!.dataPoints.map((p) => [String(p.attributes["yoi.agent"]), p.value]),
    );
    // claude-haiku-4-5 lists $1 per million input tokens and $5 per million output tokens.
    expect(byAgent.main).toBeCloseTo(1 + 0.005, 9);
    expect(byAgent.subagent).toBeCloseTo(0.001, 9);
  });
});
