/**
 * Normalization overhead: the CPU time of `createClient(...).stream` against
 * iterating the raw SDK stream over the same bytes, from the same local
 * server. Large synthetic streams are built with each provider's wire
 * format: thousands of text deltas, and many tool-argument deltas. Target:
 * client <= 1.3x raw SDK. A second set of rows shows the cost per delta
 * stays flat from 1k to 100k deltas.
 *
 * Each side runs in its own Node process (a round is one raw process and
 * one client process, in alternating order; the rows are medians over
 * rounds of each process's median). Both sides in one heap measured each
 * other's garbage: V8 sizes its heap from whatever ran before, so the same
 * code measured 0.75x or 1.7x the other depending on what it followed, and
 * a forced collection before each run only moved the cost into regrowing
 * the heap. In separate processes each side pays for exactly its own work.
 *
 * Adding a provider is one entry in PROVIDERS (its raw SDK iteration).
 *
 *   BENCH_PROVIDERS=anthropic,openai-chat   limits the providers (development)
 *   BENCH_ROUNDS=5                          rounds per provider (default 5, Gemini 3)
 */
import { spawnSync } from "node:child_process";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import { errorMessage } from "@yoi/manifest/errors";
import OpenAI from "openai";
import { median, report } from "../../../scripts/bench-kit.ts";
import { createClient, type ProviderKind, userMessage } from "../src/index.ts";
import { sdkBaseURL, WIRE_FORMATS } from "../src/testing/index.ts";
import { startWorkloadServer, workloadBytes } from "./workload.ts";

interface BenchProvider {
  provider: ProviderKind;
  /** The SDK itself is slow per payload (Gemini): fewer runs and rounds keep the file under a few minutes. */
  slow?: boolean;
  /** Whether tool arguments stream as deltas (Gemini sends them whole). */
  toolDeltas: boolean;
  /** Builds a raw-SDK iteration over whatever the server sends; returns the number of payloads. */
  raw(baseURL: string): () => Promise<number>;
}

type Side = "raw" | "client";
type Kind = "text" | "tool";
/** One process's result: the median CPU ms per workload, keyed `kind:size`. */
type SideResult = Record<string, number>;

const MODEL = "bench-model";
/** Present with --expose-gc (as `pnpm bench` runs it). */
const gc = (globalThis as { gc?: () => void }).gc;

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
const KINDS: Kind[] = ["text", "tool"];
const key = (kind: Kind, size: number) => `${kind}:${size}`;

/** CPU milliseconds of one run, after a full collection outside the timing (when --expose-gc). */
async function cpu(fn: () => Promise<unknown>): Promise<number> {
  gc?.();
  const start = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** Child: times one side over every workload of one provider; prints a JSON SideResult. */
async function runSide(entry: BenchProvider, side: Side): Promise<SideResult> {
  const server = await startWorkloadServer();
  const baseURL = sdkBaseURL(entry.provider, server.origin);
  let run: () => Promise<number>;
  if (side === "raw") run = entry.raw(baseURL);
  else {
    const client = createClient({ provider: entry.provider, model: MODEL, apiKey: "k", baseURL });
    run = async () => {
      let n = 0;
      let failed: string | undefined;
      for await (const event of client.stream({ items: [userMessage("hi")] })) {
        n++;
        if (event.type === "error") failed = event.message;
      }
      if (failed !== undefined) throw new Error(`${entry.provider}: ${failed}`);
      return n;
    };
  }
  const result: SideResult = {};
  try {
    // Warm the path up (JIT) before anything is timed.
    server.body = workloadBytes(entry.provider, "text", 10_000);
    for (let i = 0; i < 5; i++) await run();
    for (const kind of KINDS) {
      if (kind === "tool" && !entry.toolDeltas) continue;
      for (const size of [0, ...SIZES]) {
        server.body = workloadBytes(entry.provider, kind, size);
        // Runs of a few ms are noisy on a shared machine: take more of them, they cost little.
        const runs = size >= 100_000 ? (entry.slow ? 1 : 3) : size <= 1_000 ? 21 : entry.slow ? 5 : 9;
        if (size < 100_000) await run();
        const samples: number[] = [];
        for (let i = 0; i < runs; i++) samples.push(await cpu(run));
        result[key(kind, size)] = median(samples);
      }
    }
  } finally {
    await server.close();
  }
  return result;
}

const childArgs = process.argv.indexOf("--side");
if (childArgs >= 0) {
  const side = process.argv[childArgs + 1] as Side;
  const provider = process.argv[childArgs + 2] as ProviderKind;
  const entry = PROVIDERS.find((p) => p.provider === provider)!;
  process.stdout.write(`@@side ${JSON.stringify(await runSide(entry, side))}\n`);
  process.exit(0);
}

/** Parent: rounds of one raw and one client process per provider, then the rows. */
function spawnSide(side: Side, provider: ProviderKind): SideResult {
  const res = spawnSync(
    process.execPath,
    [...process.execArgv, import.meta.filename, "--side", side, provider],
    {
      encoding: "utf8",
      maxBuffer: 16 * 1024 * 1024,
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const line = (res.stdout ?? "").split("\n").find((l) => l.startsWith("@@side "));
  if (res.status !== 0 || !line)
    throw new Error(`${provider} ${side}: exited with ${res.status ?? res.signal}`);
  return JSON.parse(line.slice(7)) as SideResult;
}

const only = process.env.BENCH_PROVIDERS?.split(",");
for (const entry of PROVIDERS.filter((p) => !only || only.includes(p.provider))) {
  try {
    WIRE_FORMATS[entry.provider].response("probe", [], {});
  } catch (error) {
    process.stderr.write(
      `skipping ${entry.provider}: its wire format is not available (${errorMessage(error)})\n`,
    );
    continue;
  }
  const rounds = Number(process.env.BENCH_ROUNDS ?? (entry.slow ? 3 : 5));
  const results: Record<Side, SideResult[]> = { raw: [], client: [] };
  try {
    for (let round = 0; round < rounds; round++) {
      // Alternate which side goes first, so drift of a shared machine hits both alike.
      const order: Side[] = round % 2 === 0 ? ["raw", "client"] : ["client", "raw"];
      for (const side of order) results[side].push(spawnSide(side, entry.provider));
    }
  } catch (error) {
    process.stderr.write(`skipping ${entry.provider}: ${errorMessage(error)}\n`);
    continue;
  }
  const med = (side: Side, k: string) => median(results[side].map((r) => r[k]!));
  for (const kind of KINDS) {
    if (kind === "tool" && !entry.toolDeltas) continue;
    const label = kind === "text" ? "text deltas" : "tool-argument deltas";
    for (const size of SIZES) {
      report({
        group: "llm-client",
        name: `${entry.provider} ${size / 1000}k ${label}`,
        subject: med("client", key(kind, size)),
        baseline: med("raw", key(kind, size)),
        baselineName: "raw SDK iteration",
        unit: "ms",
        target: 1.3,
        note: `${(workloadBytes(entry.provider, kind, size).length / 1e6).toFixed(1)} MB, CPU time, ${rounds} rounds of one process per side`,
      });
    }
    // The fixed cost of one request (connect, headers, start/stop events), for the marginal cost per delta.
    const fixed = med("client", key(kind, 0));
    const marginal = SIZES.map((size) => ({
      size,
      us: (Math.max(0, med("client", key(kind, size)) - fixed) * 1000) / size,
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
