import type { Item, ReasoningItem, ServerToolItem, ToolResultItem } from "@yoi/llm-client";
import { describe, expect, it } from "vitest";
import {
  isCompactionMessage,
  itemTokens,
  lastTurnsStart,
  planCompaction,
  prepareForSummary,
  SUMMARY_HEADER,
  trimPlaceholder,
} from "../src/index.ts";
import { assistant, call, ref, result, user } from "./support/items.ts";

const thinking: ReasoningItem = { type: "reasoning", text: "hmm", signature: "sig", provider: "anthropic" };

const search: ServerToolItem = {
  type: "server_tool",
  callId: "srvtoolu_1",
  name: "web_search",
  arguments: '{"query":"news"}',
  status: "completed",
  sources: [{ url: "https://example.com/" }],
  provider: "anthropic",
  providerData: { resultType: "web_search_tool_result", content: [{ encrypted_content: "x".repeat(4000) }] },
};

describe("a web search the provider ran (server_tool)", () => {
  it("is assistant output: reasoning before it stays, and a turn that ends with it is kept whole", () => {
    const history: Item[] = [
      user("news?"),
      thinking,
      search,
      assistant("Here."),
      user("more"),
      thinking,
      search,
    ];
    expect(prepareForSummary(history)).toEqual(history);
  });

  it("counts what goes back to the provider, its encrypted results included", () => {
    expect(itemTokens(search)).toBeGreaterThan(1000);
    expect(itemTokens({ ...search, providerData: undefined })).toBeLessThan(100);
  });
});

describe("prepareForSummary", () => {
  it("reduces a trailing assistant turn with tool calls to its text", () => {
    const history: Item[] = [user("fix it"), thinking, assistant("Let me look."), call("c1"), call("c2")];
    expect(prepareForSummary(history)).toEqual([user("fix it"), thinking, assistant("Let me look.")]);
  });

  it("drops a trailing assistant turn that has only tool calls (and its stranded reasoning)", () => {
    const history: Item[] = [user("fix it"), assistant("ok"), user("again"), thinking, call("c1")];
    expect(prepareForSummary(history)).toEqual([user("fix it"), assistant("ok"), user("again")]);
  });

  it("drops unpaired tool items anywhere and keeps paired ones", () => {
    const history: Item[] = [
      user("go"),
      call("a"),
      result("a", "A"),
      result("ghost", "no call"), // orphan result
      call("b"), // never answered (cancelled)
      assistant("next"),
      call("c"),
      result("c", "C"),
      result("c", "C again"), // duplicate
    ];
    expect(prepareForSummary(history)).toEqual([
      user("go"),
      call("a"),
      result("a", "A"),
      assistant("next"),
      call("c"),
      result("c", "C"),
    ]);
  });

  it("leaves a well-formed history as it is", () => {
    const history: Item[] = [user("go"), call("a"), result("a", "A"), assistant("done")];
    expect(prepareForSummary(history)).toEqual(history);
  });
});

describe("turns", () => {
  it("a turn starts at a user message; compaction messages are not turns", () => {
    const summary = user(`${SUMMARY_HEADER}\n\n<summary>x</summary>`);
    expect(isCompactionMessage(summary)).toBe(true);
    const history: Item[] = [summary, user("one"), assistant("1"), user("two"), call("a"), result("a", "A")];
    expect(lastTurnsStart(history, 1)).toBe(3);
    expect(lastTurnsStart(history, 2)).toBe(1);
    expect(lastTurnsStart(history, 5)).toBe(1);
    expect(lastTurnsStart(history, 0)).toBe(history.length);
  });
});

describe("planCompaction", () => {
  const big = "z".repeat(4000); // 1000 tokens

  it("keeps the last N turns whole when they fit, system messages first", () => {
    const sys: Item = { type: "message", role: "system", content: [{ type: "text", text: "be nice" }] };
    const history: Item[] = [
      sys,
      user("one"),
      assistant("1"),
      user("two"),
      call("a"),
      result("a", "A"),
      assistant("2"),
    ];
    const plan = planCompaction(history, { retainLastTurns: 1, maxKeptTokens: 10_000 });
    expect(plan.system).toEqual([sys]);
    expect(plan.folded).toEqual([user("one"), assistant("1")]);
    expect(plan.kept).toEqual([user("two"), call("a"), result("a", "A"), assistant("2")]);
    expect(plan.foldsNewItems).toBe(true);
  });

  it("folds later system messages (old file attachments) with their turn instead of keeping them first", () => {
    const sys: Item = { type: "message", role: "system", content: [{ type: "text", text: "be nice" }] };
    const oldFile: Item = {
      type: "message",
      role: "system",
      content: [{ type: "text", text: "[File: a]\nv1" }],
    };
    const newFile: Item = {
      type: "message",
      role: "system",
      content: [{ type: "text", text: "[File: b]\nv2" }],
    };
    const history: Item[] = [
      sys,
      user("@a one"),
      oldFile,
      assistant("1"),
      user("@b two"),
      newFile,
      assistant("2"),
    ];
    const plan = planCompaction(history, { retainLastTurns: 1, maxKeptTokens: 10_000 });
    expect(plan.system).toEqual([sys]);
    expect(plan.folded).toEqual([user("@a one"), oldFile, assistant("1")]);
    expect(plan.kept).toEqual([user("@b two"), newFile, assistant("2")]);
  });

  it("splits a long agentic turn: the user's message plus the newest groups that fit, pairs intact", () => {
    const history: Item[] = [user("do the big task")];
    for (let i = 0; i < 10; i++) history.push(assistant(`step ${i}`), call(`c${i}`), result(`c${i}`, big));
    const plan = planCompaction(history, { retainLastTurns: 1, maxKeptTokens: 3500 });
    expect(plan.kept[0]).toEqual(user("do the big task"));
    // Each group ~1015 tokens: three fit in 3500 with the user's message.
    expect(plan.kept.slice(1)).toEqual(history.slice(history.length - 9));
    expect(plan.folded).toEqual(history.slice(0, history.length - 9));
    for (const [i, item] of plan.kept.entries()) {
      if (item.type === "tool_result") expect(plan.kept[i - 1]).toEqual(call(item.callId));
    }
  });

  it("keeps the last turn whole, trimming its tool outputs to their refs before dropping any group", () => {
    const history: Item[] = [user("old"), assistant("old answer"), user("do the big task")];
    for (let i = 0; i < 5; i++)
      history.push(assistant(`step ${i}`), call(`c${i}`), result(`c${i}`, big, ref(i)));
    history.push(assistant("done"));
    const plan = planCompaction(history, { retainLastTurns: 1, maxKeptTokens: 2500 });
    expect(plan.folded).toEqual([user("old"), assistant("old answer")]);
    expect(plan.droppedFromKeptTurns).toBe(0);
    // All five groups survive; the oldest outputs became placeholders with their ref kept.
    expect(plan.kept.filter((i) => i.type === "tool_call")).toHaveLength(5);
    const results = plan.kept.filter((i): i is ToolResultItem => i.type === "tool_result");
    expect(results.map((r) => r.outputRef?.id)).toEqual([0, 1, 2, 3, 4].map(ref));
    // ~1000 tokens each: trimming the three oldest brings the turn under 2500.
    expect(plan.trimmedRefs).toEqual([ref(0), ref(1), ref(2)]);
    for (const r of results.slice(0, 3)) expect(r.output).toBe(trimPlaceholder(r.outputRef!.id));
    expect(results.slice(3).map((r) => r.output)).toEqual([big, big]);
    expect(plan.kept.at(-1)).toEqual(assistant("done"));
  });

  it("keeps whole turns untouched when they fit", () => {
    const history: Item[] = [user("old"), assistant("a"), user("task"), call("c"), result("c", big, ref(1))];
    history.push(assistant("done"));
    const plan = planCompaction(history, { retainLastTurns: 1, maxKeptTokens: 5000 });
    expect(plan.kept).toEqual(history.slice(2));
    expect(plan.trimmedRefs).toEqual([]);
  });

  it("always keeps tool calls still waiting for their results", () => {
    const history: Item[] = [
      user("one"),
      assistant("1"),
      user("two"),
      assistant("looking"),
      call("p1"),
      call("p2"),
    ];
    const plan = planCompaction(history, { retainLastTurns: 0, maxKeptTokens: 0 });
    expect(plan.kept).toEqual([assistant("looking"), call("p1"), call("p2")]);
  });

  it("says when there is nothing new to fold", () => {
    const history: Item[] = [user(`${SUMMARY_HEADER}\n\nx`), user("two"), assistant("2")];
    expect(planCompaction(history, { retainLastTurns: 1, maxKeptTokens: 10_000 }).foldsNewItems).toBe(false);
  });
});
