/**
 * What each `toolOutputCache.storedView` choice costs the model over a
 * session with large tool outputs: 30 turns, each running a tool that
 * prints `seq 1 20000` (106 KB), through the real Worker, FsBlobStore-like
 * memory store and context policy, on a scripted model (no network). The
 * number is the input the model is sent over the whole session (estimated
 * tokens of every request summed, as a provider would bill it without
 * prompt caching), for the in-context view against the worker's
 * summary (the default).
 */
import type { Request } from "@yoi/llm-client";
import { defineTool, Worker } from "@yoi/llm-worker";
import { createScriptedClient, type ScriptStep } from "@yoi/llm-worker/testing";
import type { ToolOutputCacheConfig } from "@yoi/manifest";
import { estimateTokens } from "@yoi/manifest";
import * as z from "zod";
import { report } from "../../../scripts/bench-kit.ts";
import { createContextPolicy } from "../src/index.ts";
import { TestBlobStore } from "../test/support/memory-store.ts";

const TURNS = 30;
const SEQ = `${Array.from({ length: 20_000 }, (_, i) => String(i + 1)).join("\n")}\n`;

function requestTokens(request: Request): number {
  return estimateTokens(
    `${request.system ?? ""}${JSON.stringify(request.items)}${JSON.stringify(request.tools ?? [])}`,
  );
}

async function session(
  storedView: ToolOutputCacheConfig["storedView"],
): Promise<{ total: number; last: number }> {
  const steps: ScriptStep[] = [];
  for (let t = 0; t < TURNS; t++) {
    steps.push({ toolCalls: [{ id: `c${t}`, name: "seq", args: {} }] }, { text: `turn ${t} done` });
  }
  const client = createScriptedClient(steps, { provider: "anthropic", model: "claude-sonnet-4-5" });
  const blobStore = new TestBlobStore();
  const policy = createContextPolicy({ blobStore, client, toolOutputCache: { storedView } });
  const seq = defineTool({
    name: "seq",
    description: "seq 1 20000",
    inputSchema: z.object({}),
    execute: async () => SEQ,
  });
  const worker = new Worker({ client, blobStore, contextPolicy: policy, tools: [seq, ...policy.tools] });
  for (let t = 0; t < TURNS; t++) {
    const result = await worker.run(`step ${t}: count again`);
    if (result.status !== "completed")
      throw new Error(`turn ${t}: ${result.status} ${result.error?.message}`);
  }
  const tokens = client.requests.map(requestTokens);
  return { total: tokens.reduce((a, b) => a + b, 0), last: tokens.at(-1) ?? 0 };
}

const view = await session("view");
const summary = await session("summary");
report({
  group: "compaction",
  name: `model input over a ${TURNS}-turn session with a 106 KB output per turn: storedView "view" vs "summary"`,
  subject: view.total,
  baseline: summary.total,
  baselineName: 'storedView "summary" (the default)',
  unit: "tokens",
  note: `last request: ${view.last} vs ${summary.last} tokens; estimated bytes/4, no prompt caching`,
});
