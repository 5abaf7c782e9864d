/**
 * Worker benchmarks.
 *
 * 1. A 500-turn session (one tool call and ~1 KB of new history per turn)
 *    with an in-memory client: the worker's own per-turn cost (build the
 *    request, stream it through the Timeline, commit, run and commit the tool
 *    result) measured at turns 50, 250 and 500, against JSON.stringify of the
 *    same history (the least any adapter does with the bytes it sends). If
 *    the loop did quadratic work, its cost per KB would grow with the turn.
 * 2. A batch of 16 tools that each wait 100 ms: a whole worker run vs
 *    Promise.all over the same functions.
 *
 * Run: pnpm exec node --conditions=@yoi/source --expose-gc packages/llm-worker/bench/worker.bench.ts
 */
import { performance } from "node:perf_hooks";
import type { Event, LlmClient, Request } from "@yoi/llm-client";
import * as z from "zod";
import { compare, median, report } from "../../../scripts/bench-kit.ts";
import { defineTool, Worker } from "../src/index.ts";
import { responseEvents } from "../src/testing/index.ts";

const TURNS = 500;
const CHECKPOINTS = [50, 250, 500];
const WINDOW = 10;
const SESSIONS = 5;

const output = "x".repeat(700); // under the 800-byte inline threshold: stays in history as is

interface TurnSample {
  /** Time from the end of the previous stream() call to this one, minus nothing of the baseline. */
  worker: number;
  baseline: number;
  bytes: number;
}

async function session(): Promise<TurnSample[]> {
  const samples: TurnSample[] = [];
  let lastEnd = 0;
  let turn = 0;
  const client: LlmClient = {
    provider: "anthropic",
    model: "bench",
    stream(request: Request): AsyncIterable<Event> {
      const entered = performance.now();
      // Baseline: serializing exactly what is sent this turn.
      const b0 = performance.now();
      const json = JSON.stringify(request.items);
      const b1 = performance.now();
      if (turn > 0) samples.push({ worker: entered - lastEnd, baseline: b1 - b0, bytes: json.length });
      turn++;
      const events =
        turn < TURNS
          ? responseEvents({
              text: `turn ${turn}`,
              toolCalls: [{ id: `c${turn}`, name: "fetch", args: { n: turn } }],
              usage: { inputTokens: 1, outputTokens: 1 },
            })
          : responseEvents({ text: "done" });
      lastEnd = performance.now();
      return (async function* () {
        for (const e of events) yield e;
      })();
    },
  };
  const tool = defineTool({
    name: "fetch",
    description: "returns a fixed page",
    inputSchema: z.object({ n: z.number() }),
    execute: () => output,
  });
  const worker = new Worker({ client, tools: [tool], maxTurns: TURNS + 1 });
  const result = await worker.run("start");
  if (result.status !== "completed" || result.turns !== TURNS)
    throw new Error(`session ended ${result.status} after ${result.turns}`);
  return samples;
}

async function sessionBench(): Promise<void> {
  await session(); // warm-up
  const runs: TurnSample[][] = [];
  for (let i = 0; i < SESSIONS; i++) {
    (globalThis as { gc?: () => void }).gc?.();
    runs.push(await session());
  }
  const at = (turn: number) => {
    const worker: number[] = [];
    const baseline: number[] = [];
    let bytes = 0;
    for (const samples of runs) {
      // samples[k] is the request of turn k+2 (turn 1 has no predecessor)
      const slice = samples.slice(Math.max(0, turn - WINDOW - 1), turn - 1);
      for (const s of slice) {
        worker.push(s.worker);
        baseline.push(s.baseline);
      }
      bytes = slice.at(-1)?.bytes ?? 0;
    }
    return { worker: median(worker) * 1000, baseline: median(baseline) * 1000, kb: bytes / 1024 };
  };
  const points = CHECKPOINTS.map((turn) => ({ turn, ...at(turn) }));
  for (const p of points) {
    report({
      group: "llm-worker",
      name: `500-turn session: per-turn loop cost at turn ${p.turn}`,
      subject: round(p.worker),
      baseline: round(p.baseline),
      baselineName: "JSON.stringify of the history sent that turn",
      unit: "us",
      // No target: a fixed per-turn cost (Timeline, events, tool run) dominates small histories; the growth row below is the check.
      note: `${p.kb.toFixed(0)} KB sent; worker ${(p.worker / p.kb).toFixed(3)} us/KB, stringify ${(p.baseline / p.kb).toFixed(3)} us/KB`,
    });
  }
  const first = points[0]!;
  const last = points.at(-1)!;
  report({
    group: "llm-worker",
    name: "500-turn session: loop cost per KB sent, turn 500 vs turn 50",
    subject: round(last.worker / last.kb),
    baseline: round(first.worker / first.kb),
    baselineName: "the same at turn 50",
    unit: "us",
    target: 1,
    note: "must not grow: no quadratic work per turn",
  });
}

async function batchBench(): Promise<void> {
  const N = 16;
  const WAIT = 100;
  const wait = () => new Promise<string>((resolve) => setTimeout(() => resolve("ok"), WAIT));
  const tool = defineTool({
    name: "wait",
    description: "waits",
    inputSchema: z.object({ i: z.number() }),
    execute: wait,
  });
  const calls = Array.from({ length: N }, (_, i) => ({ id: `w${i}`, name: "wait", args: { i } }));
  const subject = async () => {
    let turn = 0;
    const client: LlmClient = {
      provider: "anthropic",
      model: "bench",
      stream: () => {
        const events = turn++ === 0 ? responseEvents({ toolCalls: calls }) : responseEvents({ text: "done" });
        return (async function* () {
          for (const e of events) yield e;
        })();
      },
    };
    const result = await new Worker({ client, tools: [tool] }).run("go");
    if (result.status !== "completed") throw new Error(result.status);
  };
  const baseline = async () => {
    await Promise.all(Array.from({ length: N }, () => wait()));
  };
  const r = await compare(subject, baseline, { runs: 9, warmup: 2 });
  report({
    group: "llm-worker",
    name: "16 tools x 100 ms in one batch (whole run incl. 2 model calls)",
    subject: round(r.subject),
    baseline: round(r.baseline),
    baselineName: "Promise.all over the same functions",
    unit: "ms",
    target: 1.05,
  });
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

await sessionBench();
await batchBench();
