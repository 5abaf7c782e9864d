/**
 * yoi's client against its peers on the same streams from the same local
 * server: the Vercel AI SDK (`ai` `streamText` over `@ai-sdk/anthropic`,
 * `@ai-sdk/openai` Responses and Chat, `@ai-sdk/google`) and pi-ai
 * (`@mariozechner/pi-ai` `stream`). Every side reads the whole stream as
 * its users would (yoi: `client.stream`, ai: `fullStream`, pi-ai: its event
 * stream). CPU time. Each side runs in a Node process of its own, as in
 * normalize.bench.ts (in one heap each side paid for the others' garbage);
 * a round is one process per side, in rotating order, and the rows are
 * medians over rounds of each process's median.
 *
 * Rows: `<peer> / yoi` per provider and workload (above 1: yoi is faster),
 * and each side's cost per delta at 100k against 1k (flat is good; a
 * growing cost per delta is quadratic work).
 *
 *   BENCH_PROVIDERS=anthropic,openai-chat   limits the providers (development)
 *   BENCH_ROUNDS=3                          rounds per provider (default 3)
 */
import { spawnSync } from "node:child_process";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { type Api, type Model, stream as piStream } from "@mariozechner/pi-ai";
import { errorMessage } from "@yoi/manifest/errors";
import { jsonSchema, type LanguageModel, streamText, tool } from "ai";
import { median, report } from "../../../scripts/bench-kit.ts";
import { createClient, type ProviderKind, userMessage } from "../src/index.ts";
import { sdkBaseURL } from "../src/testing/index.ts";
import { startWorkloadServer, workloadBytes } from "./workload.ts";

const MODEL = "bench-model";
const gc = (globalThis as { gc?: () => void }).gc;

type Side = () => Promise<number>;
type SideName = "yoi" | "ai" | "pi";
/** One process's result: the median CPU ms per workload, keyed `kind:size`. */
type SideResult = Record<string, number>;

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
        if (part.type === "error") throw new Error(`ai ${provider}: ${errorMessage(part.error)}`);
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

const PROVIDERS: ProviderKind[] = ["anthropic", "openai-responses", "openai-chat", "gemini"];
const WORKLOADS: { kind: "text" | "tool"; sizes: number[] }[] = [
  { kind: "text", sizes: [1_000, 10_000, 100_000] },
  { kind: "tool", sizes: [1_000, 10_000] },
];
const key = (kind: string, size: number) => `${kind}:${size}`;
const NAMES: Record<SideName, string> = { yoi: "yoi", ai: "Vercel AI SDK", pi: "pi-ai" };

/** Child: one side over every workload of one provider. */
async function runSide(name: SideName, provider: ProviderKind): Promise<SideResult> {
  const server = await startWorkloadServer();
  try {
    const fn = sides(provider, server.origin)[name];
    // Warm up (JIT); a peer that cannot read this provider's stream fails here, and the parent says why.
    server.body = workloadBytes(provider, "text", 1_000);
    for (let i = 0; i < 3; i++) await fn();
    const result: SideResult = {};
    for (const { kind, sizes } of WORKLOADS) {
      // Gemini sends tool calls whole: there are no argument deltas to compare.
      if (kind === "tool" && provider === "gemini") continue;
      for (const size of sizes) {
        server.body = workloadBytes(provider, kind, size);
        // Few runs: the slowest peer takes seconds per run at the large sizes; the whole file stays within minutes.
        const runs = size >= 10_000 ? 3 : 7;
        const samples: number[] = [];
        for (let i = 0; i < runs; i++) samples.push(await cpu(fn));
        result[key(kind, size)] = median(samples);
      }
    }
    return result;
  } finally {
    await server.close();
  }
}

const childAt = process.argv.indexOf("--side");
if (childAt >= 0) {
  const name = process.argv[childAt + 1] as SideName;
  const provider = process.argv[childAt + 2] as ProviderKind;
  process.stdout.write(`@@side ${JSON.stringify(await runSide(name, provider))}\n`);
  process.exit(0);
}

function spawnSide(name: SideName, provider: ProviderKind): SideResult | string {
  const res = spawnSync(
    process.execPath,
    [...process.execArgv, import.meta.filename, "--side", name, provider],
    {
      encoding: "utf8",
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const line = (res.stdout ?? "").split("\n").find((l) => l.startsWith("@@side "));
  if (res.status !== 0 || !line)
    return (res.stderr ?? "").trim().split("\n").slice(-3).join(" ") || `exit ${res.status}`;
  return JSON.parse(line.slice(7)) as SideResult;
}

const only = process.env.BENCH_PROVIDERS?.split(",");
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
for (const provider of PROVIDERS.filter((p) => !only || only.includes(p))) {
  const results: Partial<Record<SideName, SideResult[]>> = {};
  let names: SideName[] = ["yoi", "ai", "pi"];
  for (let round = 0; round < rounds; round++) {
    // Rotate the order, so drift of a shared machine hits every side alike.
    const order = names.map((_, i) => names[(i + round) % names.length]!);
    for (const name of order) {
      const result = spawnSide(name, provider);
      if (typeof result === "string") {
        process.stderr.write(`peers: ${NAMES[name]} skipped for ${provider}: ${result}\n`);
        names = names.filter((n) => n !== name);
        delete results[name];
        continue;
      }
      const list = results[name] ?? [];
      list.push(result);
      results[name] = list;
    }
  }
  if (!results.yoi) continue;
  const med = (name: SideName, k: string) => median(results[name]!.map((r) => r[k]!));
  for (const { kind, sizes } of WORKLOADS) {
    if (kind === "tool" && provider === "gemini") continue;
    const label = kind === "text" ? "text deltas" : "tool-argument deltas";
    for (const size of sizes) {
      for (const peer of ["ai", "pi"] as const) {
        if (!results[peer]) continue;
        report({
          group: "llm-client peers",
          name: `${provider} ${size / 1000}k ${label}: ${NAMES[peer]}`,
          subject: med(peer, key(kind, size)),
          baseline: med("yoi", key(kind, size)),
          baselineName: "yoi client.stream",
          unit: "ms",
          // No target: the ratio says how far the peer is from yoi (above 1: yoi is ahead).
          note: `${(workloadBytes(provider, kind, size).length / 1e6).toFixed(1)} MB, CPU time, ${rounds} rounds of one process per side`,
        });
      }
    }
    // Cost per delta at the largest size against the smallest: flat means linear work.
    const small = sizes[0]!;
    const large = sizes[sizes.length - 1]!;
    for (const name of Object.keys(results) as SideName[]) {
      report({
        group: "llm-client peers",
        name: `${provider} ${kind} cost/delta ${large / 1000}k vs ${small / 1000}k: ${NAMES[name]}`,
        subject: (med(name, key(kind, large)) * 1000) / large,
        baseline: (med(name, key(kind, small)) * 1000) / small,
        baselineName: `cost/delta at ${small / 1000}k`,
        unit: "us",
        ...(name === "yoi" ? { target: 1.25 } : {}),
        note: "includes the fixed cost of a request, which weighs more at 1k",
      });
    }
  }
}
