/**
 * yoi's client against its peers on the same streams from the same local
 * server: the Vercel AI SDK (`ai` `streamText` over `@ai-sdk/anthropic`,
 * `@ai-sdk/openai` Responses and Chat, `@ai-sdk/google`) and pi-ai
 * (`@mariozechner/pi-ai` `stream`). Every side reads the whole stream as
 * its users would (yoi: `client.stream`, ai: `fullStream`, pi-ai: its event
 * stream). CPU time, medians of interleaved rounds (yoi, ai, pi, yoi, ...).
 *
 * Rows: `<peer> / yoi` per provider and workload (above 1: yoi is faster),
 * and each side's cost per delta at 100k against 1k (flat is good; a
 * growing cost per delta is quadratic work).
 *
 *   BENCH_PROVIDERS=anthropic,openai-chat   limits the providers (development)
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { type Api, type Model, stream as piStream } from "@mariozechner/pi-ai";
import { jsonSchema, type LanguageModel, streamText, tool } from "ai";
import { median, report } from "../../../scripts/bench-kit.ts";
import { createClient, type ProviderKind, userMessage } from "../src/index.ts";
import { sdkBaseURL } from "../src/testing/index.ts";
import { startWorkloadServer, workloadBytes } from "./workload.ts";

const MODEL = "bench-model";
const gc = (globalThis as { gc?: () => void }).gc;

type Side = () => Promise<number>;

/** The Vercel AI SDK's model for a provider, pointed at the local server. */
function aiModel(provider: ProviderKind, origin: string): LanguageModel {
  switch (provider) {
    case "anthropic":
      return createAnthropic({ apiKey: "k", baseURL: `${origin}/v1` })(MODEL);
    case "openai-responses":
      return createOpenAI({ apiKey: "k", baseURL: `${origin}/v1` }).responses(MODEL);
    case "openai-chat":
      return createOpenAI({ apiKey: "k", baseURL: `${origin}/v1` }).chat(MODEL);
    case "gemini":
      return createGoogleGenerativeAI({ apiKey: "k", baseURL: `${origin}/v1beta` })(MODEL);
  }
}

const PI_API: Record<ProviderKind, Api> = {
  anthropic: "anthropic-messages",
  "openai-responses": "openai-responses",
  "openai-chat": "openai-completions",
  gemini: "google-generative-ai",
};
const PI_PROVIDER: Record<ProviderKind, string> = {
  anthropic: "anthropic",
  "openai-responses": "openai",
  "openai-chat": "openai",
  gemini: "google",
};

function piModel(provider: ProviderKind, origin: string): Model<Api> {
  return {
    id: MODEL,
    name: MODEL,
    api: PI_API[provider],
    provider: PI_PROVIDER[provider],
    baseUrl: sdkBaseURL(provider, origin),
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 1_000_000,
    maxTokens: 1024,
  };
}

function sides(provider: ProviderKind, origin: string): Record<"yoi" | "ai" | "pi", Side> {
  const client = createClient({ provider, model: MODEL, apiKey: "k", baseURL: sdkBaseURL(provider, origin) });
  const model = aiModel(provider, origin);
  const pi = piModel(provider, origin);
  const writeSchema = { type: "object", properties: { a: { type: "string" } } } as const;
  return {
    async yoi() {
      let n = 0;
      for await (const event of client.stream({ items: [userMessage("hi")] })) {
        n++;
        if (event.type === "error") throw new Error(`yoi ${provider}: ${event.message}`);
      }
      return n;
    },
    async ai() {
      const result = streamText({
        model,
        prompt: "hi",
        maxRetries: 0,
        maxOutputTokens: 1024,
        tools: { write: tool({ inputSchema: jsonSchema(writeSchema) }) },
      });
      let n = 0;
      for await (const part of result.fullStream) {
        n++;
        if (part.type === "error") throw new Error(`ai ${provider}: ${String(part.error)}`);
      }
      return n;
    },
    async pi() {
      let n = 0;
      const events = piStream(
        pi,
        {
          messages: [{ role: "user", content: "hi", timestamp: Date.now() }],
          tools: [{ name: "write", description: "write", parameters: writeSchema as never }],
        },
        { apiKey: "k" },
      );
      for await (const event of events) {
        n++;
        if (event.type === "error") throw new Error(`pi ${provider}: ${event.error.errorMessage}`);
      }
      return n;
    },
  };
}

async function cpu(fn: Side): Promise<number> {
  gc?.();
  const start = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** Medians of `runs` interleaved rounds (every side once per round). */
async function rounds(all: Record<string, Side>, runs: number): Promise<Record<string, number>> {
  const times: Record<string, number[]> = {};
  for (const name of Object.keys(all)) times[name] = [];
  for (let i = 0; i < runs; i++) {
    for (const [name, fn] of Object.entries(all)) times[name]!.push(await cpu(fn));
  }
  return Object.fromEntries(Object.entries(times).map(([name, t]) => [name, median(t)]));
}

const server = await startWorkloadServer();
const only = process.env.BENCH_PROVIDERS?.split(",");
const PROVIDERS: ProviderKind[] = ["anthropic", "openai-responses", "openai-chat", "gemini"];
const WORKLOADS: { kind: "text" | "tool"; sizes: number[] }[] = [
  { kind: "text", sizes: [1_000, 10_000, 100_000] },
  { kind: "tool", sizes: [1_000, 10_000] },
];

for (const provider of PROVIDERS.filter((p) => !only || only.includes(p))) {
  const all = sides(provider, server.origin);
  // Warm up (JIT), and drop a peer that cannot read this provider's stream here, saying why.
  server.body = workloadBytes(provider, "text", 1_000);
  const usable: Record<string, Side> = {};
  for (const [name, fn] of Object.entries(all)) {
    try {
      for (let i = 0; i < 3; i++) await fn();
      usable[name] = fn;
    } catch (error) {
      process.stderr.write(`peers: ${name} skipped for ${provider}: ${String(error)}\n`);
    }
  }
  if (!usable.yoi) continue;
  for (const { kind, sizes } of WORKLOADS) {
    // Gemini sends tool calls whole: there are no argument deltas to compare.
    if (kind === "tool" && provider === "gemini") continue;
    const label = kind === "text" ? "text deltas" : "tool-argument deltas";
    const perSize = new Map<number, Record<string, number>>();
    for (const size of sizes) {
      server.body = workloadBytes(provider, kind, size);
      // Few rounds: the slowest peer takes seconds per run at the large sizes; the whole file stays within minutes.
      const runs = size >= 10_000 ? 3 : 7;
      const t = await rounds(usable, runs);
      perSize.set(size, t);
      for (const peer of ["ai", "pi"]) {
        if (t[peer] === undefined) continue;
        report({
          group: "llm-client peers",
          name: `${provider} ${size / 1000}k ${label}: ${peer === "ai" ? "Vercel AI SDK" : "pi-ai"}`,
          subject: t[peer]!,
          baseline: t.yoi!,
          baselineName: "yoi client.stream",
          unit: "ms",
          // No target: the ratio says how far the peer is from yoi (above 1: yoi is ahead).
          note: `${(server.body.length / 1e6).toFixed(1)} MB, CPU time, median of ${runs} interleaved rounds`,
        });
      }
    }
    // Cost per delta at the largest size against the smallest: flat means linear work.
    const small = sizes[0]!;
    const large = sizes[sizes.length - 1]!;
    for (const name of Object.keys(usable)) {
      const a = perSize.get(small)?.[name];
      const b = perSize.get(large)?.[name];
      if (a === undefined || b === undefined) continue;
      report({
        group: "llm-client peers",
        name: `${provider} ${kind} cost/delta ${large / 1000}k vs ${small / 1000}k: ${name === "yoi" ? "yoi" : name === "ai" ? "Vercel AI SDK" : "pi-ai"}`,
        subject: (b * 1000) / large,
        baseline: (a * 1000) / small,
        baselineName: `cost/delta at ${small / 1000}k`,
        unit: "us",
        ...(name === "yoi" ? { target: 1.25 } : {}),
        note: "includes the fixed cost of a request, which weighs more at 1k",
      });
    }
  }
}

await server.close();
