/**
 * What tracing costs a run: the shipped `yoi -p` with two tool calls and two
 * model calls against a scripted provider on 127.0.0.1, spawn to exit, with
 * OpenTelemetry on (OTLP/protobuf to a receiver on 127.0.0.1, spans and
 * metrics, flushed at exit) and off, interleaved in pairs; the ratio is the
 * median of the pairs' ratios. Target: within 3% of the wall time.
 *
 *   pnpm bench telemetry
 */
import { performance } from "node:perf_hooks";
import { startScriptedServer } from "@yoi/llm-client/testing";
import { median, pairedRatio, report } from "../../../scripts/bench-kit.ts";
import { freshBundle } from "../fresh-bundle.ts";
import { cleanEnv, runYoi, tempWorld } from "../test/helpers.ts";
import { startOtlpReceiver } from "../test/otlp-receiver.ts";

freshBundle((line) => process.stderr.write(`telemetry.bench: ${line}\n`));

const RUNS = 15;
const WARMUP = 2;
const TARGET = 1.03;

const model = await startScriptedServer({
  provider: "anthropic",
  script: (_i, body) => {
    const answered = (body as { messages: { role: string }[] }).messages.some((m) => m.role === "assistant");
    return answered
      ? {
          type: "reply",
          text: "The note says hello.",
          options: { usage: { inputTokens: 900, outputTokens: 12 } },
        }
      : {
          type: "reply",
          text: "Let me look.",
          toolCalls: [
            { id: "call_read", name: "read_file", arguments: { path: "notes/a.txt" } },
            { id: "call_list", name: "list_dir", arguments: { path: "." } },
          ],
        };
  },
});
const receiver = await startOtlpReceiver();
const { home, project } = await tempWorld({ "notes/a.txt": "hello from a\n" });
const base = { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.baseURL };

async function run(traced: boolean): Promise<number> {
  const env = cleanEnv(home, traced ? { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint } : base);
  const start = performance.now();
  const result = await runYoi(["-p", "--model", "anthropic/claude-haiku-4-5", "read notes/a.txt"], {
    cwd: project,
    env,
  });
  const ms = performance.now() - start;
  if (result.code !== 0 || result.stderr !== "")
    throw new Error(`yoi -p failed (${result.code}): ${result.stderr.slice(0, 500)}`);
  return ms;
}

try {
  for (let i = 0; i < WARMUP; i++) {
    await run(false);
    await run(true);
  }
  const off: number[] = [];
  const on: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    // Alternate which goes first, so neither always runs on a warmer machine.
    if (i % 2 === 0) {
      off.push(await run(false));
      on.push(await run(true));
    } else {
      on.push(await run(true));
      off.push(await run(false));
    }
  }
  const spans = receiver.spans.length;
  if (spans === 0) throw new Error("the receiver got no spans: tracing was not on");
  report({
    group: "cli",
    name: "yoi -p with 2 tool calls, tracing on (OTLP to 127.0.0.1) vs off, wall time",
    subject: median(on),
    baseline: median(off),
    baselineName: "same run, no OTEL variables",
    ratio: pairedRatio(on, off),
    unit: "ms",
    target: TARGET,
    note: `${RUNS} pairs; ${Math.round(spans / (RUNS + WARMUP))} spans per traced run`,
  });
} finally {
  await model.close();
  await receiver.close();
}
