/**
 * Normalization overhead: the CPU time of `createClient(...).stream` against
 * iterating the raw SDK stream over the same bytes, from the same local
 * server, in the same run. Large synthetic streams are built with each
 * provider's wire format: thousands of text deltas, and many tool-argument
 * deltas. Target: client <= 1.3x raw SDK. A second set of rows shows the
 * cost per delta stays flat from 1k to 100k deltas.
 *
 * Adding a provider is one entry in PROVIDERS (its raw SDK iteration).
 */
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { compare, measure, median, report } from "../../../scripts/bench-kit.ts";
import { createClient, type ProviderKind, userMessage } from "../src/index.ts";
import { sdkBaseURL, WIRE_FORMATS } from "../src/testing/index.ts";
import { startWorkloadServer, workloadBytes } from "./workload.ts";

interface BenchProvider {
  provider: ProviderKind;
  /** The SDK itself is slow per payload (Gemini): one timed run at the largest size keeps the file under a minute. */
  slow?: boolean;
  /** Whether tool arguments stream as deltas (Gemini sends them whole). */
  toolDeltas: boolean;
  /** Builds a raw-SDK iteration over whatever the server sends; returns the number of payloads. */
  raw(baseURL: string): () => Promise<number>;
}

const MODEL = "bench-model";
/** Present with --expose-gc (as `pnpm bench` runs it). */
const gc = (globalThis as { gc?: () => void }).gc;

/**
 * `compare` (interleaved A B A B, CPU time, medians) with a full collection
 * before every timed run, outside the timing: a 20 MB stream leaves enough
 * garbage that otherwise whichever side runs next pays for the other's.
 * Without --expose-gc it is bench-kit's `compare`.
 */
async function compareCollected(
  subject: () => Promise<unknown>,
  baseline: () => Promise<unknown>,
  runs: number,
  warmup: number,
): Promise<{ subject: number; baseline: number }> {
  if (!gc) return compare(subject, baseline, { cpu: true, runs, warmup });
  for (let i = 0; i < warmup; i++) {
    await baseline();
    await subject();
  }
  const cpu = async (fn: () => Promise<unknown>) => {
    gc!();
    const start = process.cpuUsage();
    await fn();
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1000;
  };
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < runs; i++) {
    b.push(await cpu(baseline));
    a.push(await cpu(subject));
  }
  return { subject: median(a), baseline: median(b) };
}

const PROVIDERS: BenchProvider[] = [
  {
    provider: "anthropic",
    toolDeltas: true,
    raw: (baseURL) => {
      const sdk = new Anthropic({ apiKey: "k", baseURL, maxRetries: 0 });
      return async () => {
        const stream = await sdk.messages.create({
          model: MODEL,
          max_tokens: 16,
          messages: [{ role: "user", content: "hi" }],
          stream: true,
        });
        let n = 0;
        for await (const _ of stream) n++;
        return n;
      };
    },
  },
  {
    provider: "openai-chat",
    toolDeltas: true,
    raw: (baseURL) => {
      const sdk = new OpenAI({ apiKey: "k", baseURL, maxRetries: 0 });
      return async () => {
        const stream = await sdk.chat.completions.create({
          model: MODEL,
          messages: [{ role: "user", content: "hi" }],
          stream: true,
          stream_options: { include_usage: true },
        });
        let n = 0;
        for await (const _ of stream) n++;
        return n;
      };
    },
  },
  {
    provider: "openai-responses",
    toolDeltas: true,
    raw: (baseURL) => {
      const sdk = new OpenAI({ apiKey: "k", baseURL, maxRetries: 0 });
      return async () => {
        const stream = await sdk.responses.create({ model: MODEL, input: "hi", stream: true, store: false });
        let n = 0;
        for await (const _ of stream) n++;
        return n;
      };
    },
  },
  {
    provider: "gemini",
    slow: true,
    toolDeltas: false,
    raw: (baseURL) => {
      const sdk = new GoogleGenAI({ apiKey: "k", httpOptions: { baseUrl: baseURL } });
      return async () => {
        // The client turns the SDK's automatic stream continuation off (its own layer over the
        // chunks); the baseline does too, so both sides iterate the same SDK machinery.
        const stream = await sdk.models.generateContentStream({
          model: MODEL,
          contents: "hi",
          config: { automaticContinuation: false },
        });
        let n = 0;
        for await (const _ of stream) n++;
        return n;
      };
    },
  },
];

const SIZES = [1_000, 10_000, 100_000];
const server = await startWorkloadServer();
const origin = server.origin;
const workload = (provider: ProviderKind, kind: "text" | "tool", deltas: number): Buffer =>
  workloadBytes(provider, kind, deltas);
let current: Buffer = Buffer.alloc(0);
const setBody = (body: Buffer) => {
  current = body;
  server.body = body;
};

// BENCH_PROVIDERS=anthropic,openai-chat limits the run (development).
const only = process.env.BENCH_PROVIDERS?.split(",");
for (const entry of PROVIDERS.filter((p) => !only || only.includes(p.provider))) {
  const baseURL = sdkBaseURL(entry.provider, origin);
  try {
    WIRE_FORMATS[entry.provider].response("probe", [], {});
  } catch (error) {
    process.stderr.write(`skipping ${entry.provider}: its wire format is not available (${String(error)})\n`);
    continue;
  }
  const client = createClient({ provider: entry.provider, model: MODEL, apiKey: "k", baseURL });
  const subject = async () => {
    let n = 0;
    let failed: string | undefined;
    for await (const event of client.stream({ items: [userMessage("hi")] })) {
      n++;
      if (event.type === "error") failed = event.message;
    }
    if (failed !== undefined) throw new Error(`${entry.provider}: ${failed}`);
    return n;
  };
  const raw = entry.raw(baseURL);

  // Warm both paths up (JIT) before anything is timed; a provider whose adapter fails is skipped, not fatal.
  setBody(workload(entry.provider, "text", 10_000));
  try {
    for (let i = 0; i < 3; i++) {
      await raw();
      await subject();
    }
  } catch (error) {
    process.stderr.write(`skipping ${entry.provider}: ${String(error)}\n`);
    continue;
  }

  for (const kind of ["text", "tool"] as const) {
    if (kind === "tool" && !entry.toolDeltas) continue;
    const label = kind === "text" ? "text deltas" : "tool-argument deltas";
    const perSize: { size: number; subject: number }[] = [];
    for (const size of SIZES) {
      setBody(workload(entry.provider, kind, size));
      const big = size >= 100_000;
      // Runs of a few ms are noisy on a shared machine: take more of them, they cost little.
      const runs = big ? (entry.slow ? 1 : 3) : size <= 1_000 ? 21 : entry.slow ? 5 : 9;
      const result = await compareCollected(subject, raw, runs, big ? 0 : 1);
      perSize.push({ size, subject: result.subject });
      report({
        group: "llm-client",
        name: `${entry.provider} ${size / 1000}k ${label}`,
        subject: result.subject,
        baseline: result.baseline,
        baselineName: "raw SDK iteration",
        unit: "ms",
        target: 1.3,
        note: `${(current.length / 1e6).toFixed(1)} MB, CPU time`,
      });
    }
    // The fixed cost of one request (connect, headers, start/stop events), for the marginal cost per delta.
    setBody(workload(entry.provider, kind, 0));
    const fixed = await measure(subject, { cpu: true, runs: 7, warmup: 2 });
    const marginal = perSize.map((p) => ({
      size: p.size,
      us: (Math.max(0, p.subject - fixed) * 1000) / p.size,
    }));
    const first = marginal[0]!;
    for (const m of marginal.slice(1)) {
      report({
        group: "llm-client",
        name: `${entry.provider} ${kind} cost/delta at ${m.size / 1000}k`,
        subject: m.us,
        baseline: first.us,
        baselineName: `cost/delta at ${first.size / 1000}k`,
        unit: "us",
        target: 1.25,
        note: `marginal: (time - ${fixed.toFixed(2)} ms fixed per request) / deltas`,
      });
    }
  }
}

await server.close();
