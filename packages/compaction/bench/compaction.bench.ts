/**
 * Cost of context management over long histories.
 *
 * 1. Trimming N items (cold: every output measured for the first time) and
 *    2. the compaction check / planning over N items, each against a single
 *    linear pass over the same history (the UTF-8 length of every text,
 *    the least any bytes/4 estimate must do). Rows for 1k/5k/10k/20k items
 *    in ns per item: flat per-item cost means linear time.
 * Timings are CPU time of this process (the machine is shared; wall time
 * would count other processes).
 * 3. Per-turn cost of the policy's checkpoints across a 4,000-turn session
 *    (history grows to ~12k items, trimming active): the last 400 turns
 *    against the first 400. An O(history) check per turn would make this
 *    ratio ~10 (quadratic session); the target is <= 1.5.
 */
import type { Item, ToolResultItem, Usage } from "@yoi/llm-client";
import { assistantMessage, userMessage } from "@yoi/llm-client";
import type { ContextState } from "@yoi/llm-worker";
import { createScriptedClient } from "@yoi/llm-worker/testing";
import { compare, median, report } from "../../../scripts/bench-kit.ts";
import {
  buildCompactedHistory,
  createContextPolicy,
  planCompaction,
  prepareForSummary,
  trimToolOutputs,
} from "../src/index.ts";
import { TestBlobStore } from "../test/support/memory-store.ts";

const OUTPUT = `${"export const value = 1; // a line of a source file\n".repeat(40)}`; // ~2 KB, ~500 tokens
const RUNS = 7;
const WARMUP = 2;

function refId(n: number): string {
  return `00000000-0000-7000-8000-${n.toString(16).padStart(12, "0")}`;
}

/** A history of `n` items: a user message every 30 items, then assistant text, a call and its ~2 KB result. */
function history(n: number): Item[] {
  const items: Item[] = [];
  let k = 0;
  while (items.length < n) {
    if (items.length % 30 === 0) items.push(userMessage(`request ${k}`));
    items.push(assistantMessage(`step ${k}`));
    items.push({ type: "tool_call", callId: `c${k}`, name: "read", arguments: `{"path":"f${k}.ts"}` });
    const result: ToolResultItem = {
      type: "tool_result",
      callId: `c${k}`,
      name: "read",
      output: `${k}:${OUTPUT}`,
      isError: false,
      outputRef: { id: refId(k) },
    };
    items.push(result);
    k++;
  }
  items.length = n;
  return items;
}

/** Fresh item objects (cold per-item caches), one per timed or warm-up run. */
function copies(base: readonly Item[], count: number): Item[][] {
  return Array.from({ length: count }, () => base.map((item) => ({ ...item }) as Item));
}

/** The baseline: one linear pass measuring the UTF-8 length of every text in history. */
function linearPass(items: readonly Item[]): number {
  let bytes = 0;
  for (const item of items) {
    switch (item.type) {
      case "message":
        for (const part of item.content) if (part.type === "text") bytes += Buffer.byteLength(part.text);
        break;
      case "tool_call":
        bytes += Buffer.byteLength(item.arguments);
        break;
      case "tool_result":
        bytes += Buffer.byteLength(item.output);
        break;
      case "reasoning":
        bytes += Buffer.byteLength(item.text);
        break;
    }
  }
  return bytes;
}

function state(items: Item[], lastUsage: Usage | undefined): ContextState {
  return {
    history: items,
    lastUsage,
    client: createScriptedClient([]),
    blobStore: undefined,
    signal: new AbortController().signal,
  };
}

let sink = 0;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

async function sizeRows(): Promise<void> {
  for (const n of [1_000, 5_000, 10_000, 20_000]) {
    const base = history(n);
    const pool = (): (() => Item[]) => {
      const list = copies(base, RUNS + WARMUP);
      let i = 0;
      return () => list[i++ % list.length]!;
    };
    // Collect the previous row's copies now, not inside a timed run.

    // 1. Trimming (budget 50k tokens, batch target 40k): estimate every output, trim the oldest.
    {
      gc();
      const subjectInput = pool();
      const baselineInput = pool();
      const r = await compare(
        () => {
          sink += trimToolOutputs(subjectInput(), { budgetTokens: 50_000, targetTokens: 40_000 }).trimmed
            .length;
        },
        () => {
          sink += linearPass(baselineInput());
        },
        { runs: RUNS, warmup: WARMUP, cpu: true },
      );
      report({
        group: "compaction",
        name: `trim ${n} items (cold)`,
        subject: (r.subject * 1e6) / n,
        baseline: (r.baseline * 1e6) / n,
        baselineName: "one linear UTF-8 length pass",
        unit: "ns",
        target: 3,
        note: `per item; ${r.subject.toFixed(2)} ms total`,
      });
    }

    // 2a. The compaction check of a fresh policy (full first measurement, under the threshold).
    {
      gc();
      const subjectInput = pool();
      const baselineInput = pool();
      const r = await compare(
        async () => {
          const policy = createContextPolicy({
            blobStore: new TestBlobStore(),
            contextWindow: 1_000_000_000,
            toolOutputCache: { contextBudgetTokens: 1_000_000_000 },
          });
          const replaced = await policy.checkpoint(
            "after_model_call",
            state(subjectInput(), { inputTokens: 1_000 }),
          );
          sink += replaced ? 1 : 0;
        },
        () => {
          sink += linearPass(baselineInput());
        },
        { runs: RUNS, warmup: WARMUP, cpu: true },
      );
      report({
        group: "compaction",
        name: `compaction check ${n} items (fresh policy)`,
        subject: (r.subject * 1e6) / n,
        baseline: (r.baseline * 1e6) / n,
        baselineName: "one linear UTF-8 length pass",
        unit: "ns",
        target: 3,
        note: `per item; ${r.subject.toFixed(2)} ms total`,
      });
    }

    // 2b. What compaction does over history besides the LLM call: plan, shape the summary input, rebuild.
    {
      gc();
      const subjectInput = pool();
      const baselineInput = pool();
      const r = await compare(
        () => {
          const items = subjectInput();
          const plan = planCompaction(items, { retainLastTurns: 1, maxKeptTokens: 40_000 });
          sink += prepareForSummary(items).length;
          sink += buildCompactedHistory(plan, "summary", "retain").length;
        },
        () => {
          sink += linearPass(baselineInput());
        },
        { runs: RUNS, warmup: WARMUP, cpu: true },
      );
      report({
        group: "compaction",
        name: `compaction plan + summary input ${n} items`,
        subject: (r.subject * 1e6) / n,
        baseline: (r.baseline * 1e6) / n,
        baselineName: "one linear UTF-8 length pass",
        unit: "ns",
        target: 4,
        note: `per item; ${r.subject.toFixed(2)} ms total`,
      });
    }
  }
}

/** One simulated session; returns the mean checkpoint cost per turn (ms) of the first and last `window` turns. */
async function session(
  turns: number,
  window: number,
): Promise<{ early: number; late: number; items: number }> {
  const policy = createContextPolicy({
    blobStore: new TestBlobStore(),
    contextWindow: 1_000_000_000, // no compaction: the history keeps growing
    toolOutputCache: { contextBudgetTokens: 50_000 }, // trimming is active all along
  });
  const client = createScriptedClient([]);
  let items: Item[] = [userMessage("start")];
  let early = 0;
  let late = 0;
  for (let t = 0; t < turns; t++) {
    items.push(assistantMessage(`step ${t}`), {
      type: "tool_call",
      callId: `c${t}`,
      name: "read",
      arguments: `{"path":"f${t}.ts"}`,
    });
    const usage: Usage = { inputTokens: 1_000 + t * 600, outputTokens: 50 };
    const start = performance.now();
    const a = await policy.checkpoint("after_model_call", { ...state(items, usage), client });
    if (a) items = a.history;
    items.push({
      type: "tool_result",
      callId: `c${t}`,
      name: "read",
      output: `${t}:${OUTPUT}`,
      isError: false,
      outputRef: { id: refId(t) },
    });
    const b = await policy.checkpoint("after_tools", { ...state(items, usage), client });
    if (b) items = b.history;
    const spent = performance.now() - start;
    if (t < window) early += spent;
    if (t >= turns - window) late += spent;
  }
  return { early: early / window, late: late / window, items: items.length };
}

async function perTurnRows(): Promise<void> {
  const turns = 4_000;
  const window = 400;
  await session(1_000, 100); // warm-up (JIT)
  const samples = [];
  for (let i = 0; i < 5; i++) samples.push(await session(turns, window));
  const early = median(samples.map((s) => s.early));
  const late = median(samples.map((s) => s.late));
  report({
    group: "compaction",
    name: `checkpoint cost per turn, turns ${turns - window}-${turns} vs 0-${window}`,
    subject: late * 1000,
    baseline: early * 1000,
    baselineName: `the first ${window} turns of the same session`,
    unit: "us",
    target: 1.5,
    note: `history grows to ${samples[0]!.items} items; O(history) per turn would give ~10x`,
  });
}

/** JIT warm-up of every measured path, so the 1k row is not the one that pays for compilation. */
async function warmUp(): Promise<void> {
  for (const items of copies(history(2_000), 20)) {
    trimToolOutputs(items, { budgetTokens: 50_000, targetTokens: 40_000 });
    const policy = createContextPolicy({
      blobStore: new TestBlobStore(),
      contextWindow: 1_000_000_000,
      toolOutputCache: { contextBudgetTokens: 1_000_000_000 },
    });
    await policy.checkpoint("after_model_call", state(items, { inputTokens: 1_000 }));
    buildCompactedHistory(planCompaction(items, { retainLastTurns: 1, maxKeptTokens: 40_000 }), "s", "r");
    prepareForSummary(items);
    linearPass(items);
  }
}

await warmUp();
await sizeRows();
await perTurnRows();
if (sink === -1) console.log(sink);
