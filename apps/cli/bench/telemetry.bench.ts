/**
 * What tracing costs a run: the shipped `yoi -p` with two tool calls and two
 * model calls against a scripted provider on 127.0.0.1, spawn to exit, with
 * OpenTelemetry on (OTLP/protobuf to a receiver on 127.0.0.1, spans and
 * metrics, flushed at exit) and off, interleaved in pairs; the ratio is the
 * median of the pairs' ratios. Target: within 3% of the wall time.
 *
 * Fair to both sides: the same model server and the same environment but
 * for the OTEL variable; each side has a home of its own (the same files),
 * so each runs with the code cache its kind of run writes, as a user who
 * always or never traces would (one shared cache was last written by a
 * traced run and held its SDK chunk, which the untraced runs then read);
 * and the receiver answers as soon as a batch is in, before it decodes it,
 * as a collector that queues does: the receiver's own decoding, in this
 * process, is not yoi's cost.
 *
 *   pnpm bench telemetry
 */
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import { startScriptedServer } from "@yoi/llm-client/testing";
import { median, pairedRatio, report } from "../../../scripts/bench-kit.ts";
import { freshBundle, launcherNodeArgs } from "../fresh-bundle.ts";
import { cleanEnv, runYoi, tempWorld, yoiArgv } from "../test/helpers.ts";
import { startOtlpReceiver } from "../test/otlp-receiver.ts";

const DIST = freshBundle((line) => process.stderr.write(`telemetry.bench: ${line}\n`));
// Node with the flags the installed `yoi` starts a print run with (its launcher line), as a user's run has them.
const NODE_ARGS = launcherNodeArgs(DIST, ["-p"]);

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
const receiver = await startOtlpReceiver({ ackFirst: true });
const files = { "notes/a.txt": "hello from a\n" };
const worlds = { on: await tempWorld(files), off: await tempWorld(files) };
const base = { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.baseURL };

async function run(traced: boolean): Promise<number> {
  const { home, project } = traced ? worlds.on : worlds.off;
  const env = cleanEnv(home, traced ? { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint } : base);
  const start = performance.now();
  const result = await runYoi(["-p", "--model", "anthropic/claude-haiku-4-5", "read notes/a.txt"], {
    cwd: project,
    env,
    nodeArgs: NODE_ARGS,
  });
  const ms = performance.now() - start;
  if (result.code !== 0 || result.stderr !== "")
    throw new Error(`yoi -p failed (${result.code}): ${result.stderr.slice(0, 500)}`);
  return ms;
}

/**
 * The same run's CPU time (user + system, ms), as bash's `time` reads it
 * from the kernel: a machine shared with other work stretches wall time far
 * more than CPU time, so this is the figure to read on a loaded machine
 * (the wall row stays free of the shell's start).
 */
function cpuOf(traced: boolean): Promise<number> {
  const { home, project } = traced ? worlds.on : worlds.off;
  const env = cleanEnv(home, traced ? { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint } : base);
  const command = ["-p", "--model", "anthropic/claude-haiku-4-5", "read notes/a.txt"];
  return new Promise((resolve, reject) => {
    const child = spawn(
      "bash",
      ["-c", 'TIMEFORMAT="@@cpu %3U %3S"; time "$@" >/dev/null', "bash", ...yoiArgv(NODE_ARGS), ...command],
      { cwd: project, env, stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const times = /^@@cpu ([\d.]+) ([\d.]+)$/m.exec(stderr);
      if (code !== 0 || times === null || stderr.replace(times[0], "").trim() !== "")
        reject(new Error(`yoi -p failed (${code}): ${stderr.slice(0, 500)}`));
      else resolve((Number(times[1]) + Number(times[2])) * 1000);
    });
  });
}

try {
  for (let i = 0; i < WARMUP; i++) {
    await run(false);
    await run(true);
  }
  const off: number[] = [];
  const on: number[] = [];
  const cpuOff: number[] = [];
  const cpuOn: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    // Alternate which goes first, so neither always runs on a warmer machine.
    if (i % 2 === 0) {
      off.push(await run(false));
      on.push(await run(true));
      cpuOff.push(await cpuOf(false));
      cpuOn.push(await cpuOf(true));
    } else {
      on.push(await run(true));
      off.push(await run(false));
      cpuOn.push(await cpuOf(true));
      cpuOff.push(await cpuOf(false));
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
    note: `${RUNS} pairs; ${Math.round(spans / (RUNS + WARMUP + RUNS))} spans per traced run; CPU time on ${median(cpuOn).toFixed(0)} ms vs off ${median(cpuOff).toFixed(0)} ms = ${pairedRatio(cpuOn, cpuOff).toFixed(3)}x`,
  });
} finally {
  await model.close();
  await receiver.close();
}
