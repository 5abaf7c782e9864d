import type { Item, LlmClient, MessageItem, ToolResultItem, Usage } from "@yoi/llm-client";
import { messageText } from "@yoi/llm-client";
import type { ContextState } from "@yoi/llm-worker";
import { Worker } from "@yoi/llm-worker";
import { createScriptedClient } from "@yoi/llm-worker/testing";
import { buildModelCatalog, ConfigSchema } from "@yoi/manifest";
import { describe, expect, it } from "vitest";
import {
  CompactionError,
  createContextPolicy,
  isTrimmed,
  SUMMARY_HEADER,
  totalToolOutputTokens,
  trimPlaceholder,
} from "../src/index.ts";
import { assistant, call, ref, result, toolRounds, user } from "./support/items.ts";
import { DeletableTestBlobStore, TestBlobStore } from "./support/memory-store.ts";

function state(history: Item[], lastUsage: Usage | undefined, client: LlmClient): ContextState {
  return { history, lastUsage, client, blobStore: undefined, signal: new AbortController().signal };
}

const SUMMARY = "<retain>keep ref</retain><summary>Did things.</summary>";

/** A first turn of ~70k tokens (a pasted document), so usage numbers near the threshold match the history. */
function bigTurn(): Item[] {
  return [user(`one ${"b".repeat(280_000)}`), assistant("1"), user("more"), assistant("2")];
}

function errorOf(fn: () => unknown): CompactionError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(CompactionError);
    return error as CompactionError;
  }
  throw new Error("expected a CompactionError");
}

describe("createContextPolicy options", () => {
  it("an unknown model is an error that says how to declare its window", () => {
    const client = createScriptedClient([], { provider: "openai-chat", model: "my-local-llm" });
    const err = errorOf(() => createContextPolicy({ blobStore: new TestBlobStore(), client }));
    expect(err.code).toBe("unknown_model");
    expect(err.message).toContain('Unknown model "my-local-llm"');
    expect(err.message).toContain(".yoi/config.jsonc");
    expect(err.message).toContain('"models": { "my-local-llm": { "provider": "openai-chat", "contextWindow"');
  });

  it("built without a client, an unknown model fails the run before anything is sent (strict limit)", async () => {
    const client = createScriptedClient([{ text: "never sent" }], {
      provider: "openai-chat",
      model: "my-local-llm",
    });
    const blobStore = new TestBlobStore();
    const policy = createContextPolicy({ blobStore });
    const worker = new Worker({ client, blobStore, contextPolicy: policy, tools: [...policy.tools] });
    const errors: string[] = [];
    worker.subscribe((event) => {
      if (event.type === "error") errors.push(`${event.fatal ? "fatal" : "non-fatal"} ${event.error.code}`);
    });
    const result = await worker.run("hello");
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe("context_policy");
    expect(result.error?.message).toContain('Unknown model "my-local-llm" (openai-chat)');
    expect(result.error?.message).toContain('"models": { "my-local-llm"');
    expect(result.error?.message).toContain("contextWindow");
    expect(client.requests).toHaveLength(0);
    expect(errors).toEqual(["fatal context_policy"]);
  });

  it("setContextWindow gives a switched-to model its window, and undefined goes by the catalog again", async () => {
    const client = createScriptedClient([{ text: "ok" }, { text: "never sent" }], {
      provider: "openai-chat",
      model: "my-local-llm",
    });
    const blobStore = new TestBlobStore();
    const policy = createContextPolicy({ blobStore });
    expect(errorOf(() => policy.setContextWindow(1.5)).code).toBe("invalid_config");
    policy.setContextWindow(32_000);
    const worker = new Worker({ client, blobStore, contextPolicy: policy, tools: [...policy.tools] });
    expect((await worker.run("hello")).status).toBe("completed");
    policy.setContextWindow(undefined);
    const refused = await worker.run("again");
    expect(refused.status).toBe("failed");
    expect(refused.error?.message).toContain('Unknown model "my-local-llm"');
    expect(client.requests).toHaveLength(1);
  });

  it("needs no window when nothing uses it (compaction off, a fixed tool output budget)", async () => {
    const client = createScriptedClient([{ text: "ok" }], { provider: "openai-chat", model: "my-local-llm" });
    const blobStore = new TestBlobStore();
    const policy = createContextPolicy({
      blobStore,
      compaction: { enabled: false },
      toolOutputCache: { contextBudgetTokens: 30_000 },
    });
    const worker = new Worker({ client, blobStore, contextPolicy: policy });
    expect((await worker.run("hello")).status).toBe("completed");
  });

  it("finds a model declared in the config's models through the effective catalog", () => {
    const config = ConfigSchema.parse({
      models: { "my-local-llm": { provider: "openai-chat", contextWindow: 32_000, maxOutputTokens: 4_000 } },
    });
    const client = createScriptedClient([], { provider: "openai-chat", model: "my-local-llm" });
    expect(() =>
      createContextPolicy({ blobStore: new TestBlobStore(), client, catalog: buildModelCatalog(config) }),
    ).not.toThrow();
  });

  it("a known catalog model needs nothing else", () => {
    const client = createScriptedClient([], { provider: "anthropic", model: "claude-sonnet-4-5-20250929" });
    expect(() => createContextPolicy({ blobStore: new TestBlobStore(), client })).not.toThrow();
  });

  it("the cache needs a store; compaction.model needs a summary client", () => {
    expect(errorOf(() => createContextPolicy({ contextWindow: 1000 })).message).toContain(
      "needs a blobStore",
    );
    expect(
      errorOf(() =>
        createContextPolicy({
          toolOutputCache: { enabled: false },
          compaction: { model: "anthropic/claude-haiku-4-5" },
        }),
      ).message,
    ).toContain("no summaryClient");
    expect(createContextPolicy({ toolOutputCache: { enabled: false }, contextWindow: 1000 }).tools).toEqual(
      [],
    );
  });

  it("exposes both cache tools", () => {
    const policy = createContextPolicy({ blobStore: new TestBlobStore(), contextWindow: 200_000 });
    expect(policy.tools.map((t) => t.name)).toEqual(["tool_output_cache", "tool_output_cache_grep"]);
  });
});

describe("checkpoints", () => {
  it("trims tool outputs over the budget at a checkpoint, oldest first, down to the target", async () => {
    const client = createScriptedClient([]);
    const policy = createContextPolicy({
      blobStore: new TestBlobStore(),
      contextWindow: 1_000_000,
      toolOutputCache: { contextBudgetTokens: 500 },
      trimTargetRatio: 1,
    });
    const history = [...toolRounds(10, 400), user("more")];
    const replacement = await policy.checkpoint("after_tools", state(history, undefined, client));
    expect(replacement?.reason).toBe("trim");
    expect(replacement?.detail?.trimmedRefs).toEqual([0, 1, 2, 3, 4].map(ref));
    const results = replacement!.history.filter((i): i is ToolResultItem => i.type === "tool_result");
    expect(results.slice(0, 5).every(isTrimmed)).toBe(true);
    expect(results[5]!.output.startsWith("5:")).toBe(true);
    // Applying it and checking again changes nothing.
    expect(
      await policy.checkpoint("before_return", state(replacement!.history, undefined, client)),
    ).toBeUndefined();
  });

  it("over many checkpoints the trimmed outputs stay the oldest ones and the total stays within budget", async () => {
    const client = createScriptedClient([]);
    const policy = createContextPolicy({
      blobStore: new TestBlobStore(),
      contextWindow: 1_000_000,
      toolOutputCache: { contextBudgetTokens: 2_000 },
    });
    let history: Item[] = [user("go")];
    for (let turn = 0; turn < 200; turn++) {
      history.push(
        call(`c${turn}`),
        result(`c${turn}`, `${turn}:`.padEnd(400 + (turn % 7) * 100, "x"), ref(turn)),
      );
      const replaced = await policy.checkpoint("after_tools", state(history, undefined, client));
      if (replaced) history = replaced.history;
      history.push(assistant(`a${turn}`));
      const results = history.filter((i): i is ToolResultItem => i.type === "tool_result");
      const flags = results.map(isTrimmed);
      const firstKept = flags.indexOf(false);
      expect(flags.slice(firstKept).every((f) => !f)).toBe(true); // trimmed = a prefix (oldest first)
      // Outputs still shown in full stay within budget, apart from the batch the model has not seen yet.
      const unseen = history.at(-2) as ToolResultItem;
      const seenTotal = totalToolOutputTokens(history) - totalToolOutputTokens([unseen]);
      expect(seenTotal).toBeLessThanOrEqual(2_000);
    }
  });

  it("the budget comes from the catalog window: clamp(window * 0.25, 20000, 60000)", async () => {
    const client = createScriptedClient([], { model: "claude-sonnet-4-5" }); // 200k window -> 50k budget
    const policy = createContextPolicy({ blobStore: new TestBlobStore(), client, trimTargetRatio: 1 });
    const under = [...toolRounds(49, 4000), user("x")]; // 49k tokens of output
    expect(await policy.checkpoint("after_tools", state(under, undefined, client))).toBeUndefined();
    const over = [...toolRounds(52, 4000), user("x")];
    const replaced = await policy.checkpoint("after_tools", state(over, undefined, client));
    expect(replaced?.detail?.budgetTokens).toBe(50_000);
  });

  it("compacts once usage crosses the threshold, and does not compact again on the same stale usage", async () => {
    const client = createScriptedClient([{ text: SUMMARY }]);
    const policy = createContextPolicy({ blobStore: new TestBlobStore(), contextWindow: 100_000 });
    const history: Item[] = [...bigTurn(), user("two"), call("a"), result("a", "A", ref(1)), assistant("2")];
    const usage: Usage = { inputTokens: 81_000, outputTokens: 100 };
    expect(
      await policy.checkpoint("after_model_call", state(history, { inputTokens: 1000 }, client)),
    ).toBeUndefined();
    const replaced = await policy.checkpoint("after_model_call", state(history, usage, client));
    expect(replaced?.reason).toBe("compaction");
    expect(replaced?.history.slice(2)).toEqual(history.slice(4));
    expect(messageText(replaced!.history[1] as MessageItem).startsWith(SUMMARY_HEADER)).toBe(true);
    expect(replaced?.detail).toMatchObject({
      trigger: "threshold",
      thresholdTokens: 80_000,
      foldedItems: 4,
      keptItems: 4,
    });
    // after_tools / before_return still see the same usage: the estimate is now the compacted size.
    expect(await policy.checkpoint("before_return", state(replaced!.history, usage, client))).toBeUndefined();
    expect(client.requests).toHaveLength(1);
  });

  it("retainLastTurns keeps the whole last turn, and the replacement says which of its outputs became refs", async () => {
    const client = createScriptedClient([{ text: SUMMARY }]);
    const policy = createContextPolicy({ blobStore: new TestBlobStore(), contextWindow: 100_000 });
    // The last turn: five tool groups of ~5k tokens each, over 30% of the 80k threshold (24k).
    const turn: Item[] = [user("refactor everything")];
    for (let i = 0; i < 5; i++)
      turn.push(assistant(`step ${i}`), call(`c${i}`), result(`c${i}`, "o".repeat(20_000), ref(i)));
    turn.push(assistant("all done"));
    const history: Item[] = [...bigTurn(), ...turn];
    const replaced = await policy.checkpoint(
      "before_return",
      state(history, { inputTokens: 99_000 }, client),
    );
    expect(replaced?.reason).toBe("compaction");
    const kept = replaced!.history.slice(2); // after retain + summary
    expect(kept.filter((i) => i.type === "tool_call").map((c) => (c as { callId: string }).callId)).toEqual([
      "c0",
      "c1",
      "c2",
      "c3",
      "c4",
    ]);
    expect(kept[0]).toEqual(user("refactor everything"));
    expect(kept.at(-1)).toEqual(assistant("all done"));
    expect(replaced?.detail?.keptTurnsTrimmedRefs).toEqual([ref(0)]);
    expect(replaced?.detail?.keptTurnsDroppedItems).toBe(0);
    const first = kept.find((i) => i.type === "tool_result") as ToolResultItem;
    expect(first.output).toBe(trimPlaceholder(ref(0)));
    expect(first.outputRef?.id).toBe(ref(0));
  });

  it("counts what was appended since the last usage (after tools, big outputs push it over)", async () => {
    const client = createScriptedClient([{ text: SUMMARY }]);
    const policy = createContextPolicy({ blobStore: new TestBlobStore(), contextWindow: 100_000 });
    const history: Item[] = [...bigTurn(), user("two"), call("a")];
    const usage: Usage = { inputTokens: 70_000 };
    expect(await policy.checkpoint("after_model_call", state(history, usage, client))).toBeUndefined();
    history.push(result("a", "r".repeat(48_000), ref(1))); // +12k tokens: 82k >= 80k
    const replaced = await policy.checkpoint("after_tools", state(history, usage, client));
    expect(replaced?.reason).toBe("compaction");
  });

  it("refs survive compaction: kept results keep outputRef; a trimmed placeholder keeps its ref", async () => {
    const client = createScriptedClient([{ text: SUMMARY }]);
    const store = new DeletableTestBlobStore();
    const policy = createContextPolicy({
      blobStore: store,
      contextWindow: 100_000,
      deleteUnreferencedRefs: true,
    });
    const history: Item[] = [
      user("one"),
      call("a"),
      result("a", "o".repeat(200_000), ref(1)),
      user("two"),
      call("b"),
      { ...result("b", trimPlaceholder(ref(2)), ref(2)) },
      call("c"),
      result("c", "new", ref(3)),
    ];
    const replaced = await policy.checkpoint("after_tools", state(history, { inputTokens: 90_000 }, client));
    const kept = replaced!.history.filter((i): i is ToolResultItem => i.type === "tool_result");
    expect(kept.map((r) => r.outputRef?.id)).toEqual([ref(2), ref(3)]);
    expect(kept[0]!.output).toBe(trimPlaceholder(ref(2)));
    expect(replaced?.detail?.unreferencedRefs).toEqual([ref(1)]);
  });
});

describe("enabled / auto on every path", () => {
  const big: Item[] = [...bigTurn(), user("two"), assistant("2")];

  it("enabled: false never compacts, not even after an overflow", async () => {
    const client = createScriptedClient([]);
    const policy = createContextPolicy({
      blobStore: new TestBlobStore(),
      contextWindow: 100_000,
      compaction: { enabled: false },
    });
    expect(
      await policy.checkpoint("after_model_call", state(big, { inputTokens: 99_000 }, client)),
    ).toBeUndefined();
    expect(await policy.onContextOverflow(state(big, { inputTokens: 99_000 }, client))).toBeUndefined();
    expect(await policy.compactNow(state(big, undefined, client))).toBeUndefined();
    expect(client.requests).toHaveLength(0);
  });

  it("auto: false never compacts by itself (threshold or overflow) but compactNow works", async () => {
    const client = createScriptedClient([{ text: SUMMARY }]);
    const policy = createContextPolicy({
      blobStore: new TestBlobStore(),
      contextWindow: 100_000,
      compaction: { auto: false },
    });
    expect(
      await policy.checkpoint("after_model_call", state(big, { inputTokens: 99_000 }, client)),
    ).toBeUndefined();
    expect(await policy.onContextOverflow(state(big, { inputTokens: 99_000 }, client))).toBeUndefined();
    expect(client.requests).toHaveLength(0);
    expect((await policy.compactNow(state(big, undefined, client)))?.detail?.trigger).toBe("manual");
  });

  it("compactNow with a focus puts it in this summary's prompt only", async () => {
    const client = createScriptedClient([{ text: SUMMARY }, { text: SUMMARY }]);
    const policy = createContextPolicy({ blobStore: new TestBlobStore(), contextWindow: 100_000 });
    const focused = await policy.compactNow(state(big, undefined, client), {
      focus: "  keep the config details ",
    });
    expect(focused?.detail?.focus).toBe("keep the config details");
    const asked = JSON.stringify(client.requests[0]);
    expect(asked).toContain("The user asked this summary to focus on: keep the config details.");
    // The next summary goes back to the configured prompt.
    await policy.compactNow(state(big, undefined, client));
    expect(JSON.stringify(client.requests[1])).not.toContain("focus on");
  });

  it("afterCompaction sees every compaction (threshold, overflow, compactNow) and no trim", async () => {
    const client = createScriptedClient([{ text: SUMMARY }, { text: SUMMARY }, { text: SUMMARY }]);
    const seen: unknown[] = [];
    const marker: MessageItem = {
      type: "message",
      role: "system",
      content: [{ type: "text", text: "kept" }],
    };
    const policy = createContextPolicy({
      blobStore: new TestBlobStore(),
      contextWindow: 100_000,
      toolOutputCache: { contextBudgetTokens: 500 },
      trimTargetRatio: 1,
      afterCompaction: async (replacement) => {
        seen.push(replacement.detail?.trigger);
        return { ...replacement, history: [...replacement.history, marker] };
      },
    });
    const trimmed = await policy.checkpoint(
      "after_tools",
      state([...toolRounds(10, 400), user("x")], undefined, client),
    );
    expect(trimmed?.reason).toBe("trim");
    expect(seen).toEqual([]);
    const threshold = await policy.checkpoint(
      "after_model_call",
      state(big, { inputTokens: 99_000 }, client),
    );
    const overflow = await policy.onContextOverflow(state(big, { inputTokens: 1_000 }, client));
    const manual = await policy.compactNow(state(big, undefined, client));
    expect(seen).toEqual(["threshold", "overflow", "manual"]);
    for (const replaced of [threshold, overflow, manual]) {
      expect(replaced?.reason).toBe("compaction");
      expect(replaced?.history.at(-1)).toBe(marker);
    }
  });

  it("an overflow compacts even below the threshold", async () => {
    const client = createScriptedClient([{ text: SUMMARY }]);
    const policy = createContextPolicy({ blobStore: new TestBlobStore(), contextWindow: 100_000 });
    const replaced = await policy.onContextOverflow(state(big, { inputTokens: 1_000 }, client));
    expect(replaced?.reason).toBe("compaction");
    expect(replaced?.detail?.trigger).toBe("overflow");
  });
});

describe("no progress", () => {
  it("stops with a clear error when compactions in a row leave the context over the threshold", async () => {
    const client = createScriptedClient([], { onExhausted: { text: "<summary>S</summary>" } });
    const policy = createContextPolicy({ blobStore: new TestBlobStore(), contextWindow: 100_000 });
    let history: Item[] = [];
    // Every model call reports 95k (a huge system prompt): each compaction folds a 10k-token turn,
    // but the context stays over the threshold.
    for (let round = 0; round < 2; round++) {
      history = [
        ...history,
        user(`more ${round}`),
        call(`t${round}`),
        result(`t${round}`, "x".repeat(40_000)),
        assistant(`answer ${round}`),
        user("next"),
        assistant("ok"),
      ];
      const replaced = await policy.checkpoint(
        "after_model_call",
        state(history, { inputTokens: 95_000 }, client),
      );
      expect(replaced?.reason).toBe("compaction");
      history = replaced!.history;
    }
    history = [
      ...history,
      user("more"),
      call("t9"),
      result("t9", "x".repeat(40_000)),
      assistant("answer"),
      user("next"),
      assistant("ok"),
    ];
    const third = policy.checkpoint("after_model_call", state(history, { inputTokens: 95_000 }, client));
    await expect(third).rejects.toMatchObject({ code: "no_progress" });
    await expect(third).rejects.toThrow(
      /two compactions in a row did not bring the context under the threshold/,
    );
    expect(client.requests).toHaveLength(2); // no summary call was wasted on the third

    // Reported once: later checkpoints of the same turn stay quiet, an overflow fails with the same error.
    expect(
      await policy.checkpoint("after_tools", state(history, { inputTokens: 95_000 }, client)),
    ).toBeUndefined();
    await expect(policy.onContextOverflow(state(history, { inputTokens: 95_000 }, client))).rejects.toThrow(
      /two compactions in a row/,
    );
    expect(client.requests).toHaveLength(2);
    // A new turn brings new material: compaction is tried again.
    history = [
      ...history,
      user("a new request"),
      call("t10"),
      result("t10", "x".repeat(40_000)),
      assistant("ok"),
    ];
    const again = await policy.checkpoint(
      "after_model_call",
      state(history, { inputTokens: 96_000 }, client),
    );
    expect(again?.reason).toBe("compaction");
  });

  it("an overflow with nothing left to fold is a clear error", async () => {
    const client = createScriptedClient([]);
    const policy = createContextPolicy({ blobStore: new TestBlobStore(), contextWindow: 100_000 });
    const history: Item[] = [user("one huge message")];
    await expect(policy.onContextOverflow(state(history, undefined, client))).rejects.toThrow(
      /nothing left to fold into a summary/,
    );
  });

  it("a summary no smaller than what it replaces is refused", async () => {
    const client = createScriptedClient([{ text: `<summary>${"long ".repeat(2000)}</summary>` }]);
    const policy = createContextPolicy({ blobStore: new TestBlobStore(), contextWindow: 100_000 });
    const history: Item[] = [user("a"), assistant("b"), user("c"), assistant("d")];
    await expect(
      policy.checkpoint("after_model_call", state(history, { inputTokens: 90_000 }, client)),
    ).rejects.toThrow(/no smaller than the history it replaces/);
  });
});

describe("compaction.model", () => {
  it("summarizes with the compaction model's client", async () => {
    const main = createScriptedClient([]);
    const cheap = createScriptedClient([{ text: SUMMARY }], { model: "claude-haiku-4-5" });
    const made: string[] = [];
    const policy = createContextPolicy({
      blobStore: new TestBlobStore(),
      contextWindow: 100_000,
      compaction: { model: "anthropic/claude-haiku-4-5" },
      summaryClient: (model) => {
        made.push(model);
        return cheap;
      },
    });
    const history: Item[] = [...bigTurn(), user("c"), assistant("d")];
    const replaced = await policy.checkpoint(
      "after_model_call",
      state(history, { inputTokens: 90_000 }, main),
    );
    expect(made).toEqual(["anthropic/claude-haiku-4-5"]);
    expect(main.requests).toHaveLength(0);
    expect(cheap.requests).toHaveLength(1);
    expect(replaced?.detail?.summaryModel).toBe("claude-haiku-4-5");
  });
});
