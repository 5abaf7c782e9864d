import type { ModelCapabilities } from "@yoi/manifest";
import { describe, expect, it } from "vitest";
import { applyCapabilities } from "../src/capabilities.ts";
import { MISSING_RESULT_TEXT, PairingCheck, pairToolResults } from "../src/history.ts";
import { assistantMessage, type Item, userMessage } from "../src/item.ts";
import type { Request } from "../src/request.ts";

const call = (callId: string): Item => ({ type: "tool_call", callId, name: "read", arguments: "{}" });
const result = (callId: string, output = "ok"): Item => ({
  type: "tool_result",
  callId,
  output,
  isError: false,
});

describe("PairingCheck, the pairing check a client keeps between requests", () => {
  /** `pairToolResults` with the kept check, checked against the check from scratch. */
  const expectSame = (check: PairingCheck, items: Item[]) => {
    const kept = pairToolResults(items, check);
    const fresh = pairToolResults(items);
    expect(kept).toEqual(fresh);
    if (fresh.repairs.length === 0) expect(kept.items).toBe(items);
    return kept;
  };

  it("agrees with a whole scan as a history grows, breaks and is repaired, rewinds and is compacted", () => {
    const check = new PairingCheck();
    const items: Item[] = [userMessage("go")];
    for (let turn = 0; turn < 20; turn++) {
      expectSame(check, items.slice());
      items.push(call(`c${turn}`));
      if (turn % 3 === 0) items.push(call(`c${turn}x`), result(`c${turn}x`));
      // A request while a call is still open (the history ends with it): repaired, and the check starts over.
      if (turn % 5 === 2) expect(expectSame(check, items.slice()).repairs).toHaveLength(1);
      items.push(result(`c${turn}`));
      if (turn % 4 === 3) items.push(assistantMessage("so far"), userMessage("more"));
    }
    expectSame(check, items.slice());

    // A result that answers nothing, appended to a history checked as valid: only the new part shows it.
    const orphan = [...items, result("nobody")];
    expect(expectSame(check, orphan).repairs).toEqual([{ kind: "orphan_result", callId: "nobody" }]);
    // A message while a call of the checked part is open: the kept scan must remember the open call.
    const open = [...items, call("o1")];
    expectSame(check, open);
    expect(expectSame(check, [...open, userMessage("interrupting")]).repairs).toEqual([
      { kind: "missing_result", callId: "o1" },
    ]);
    expectSame(check, [...open, result("o1")]);

    // A rewind and a different continuation, then a compaction (new objects in front).
    const rewound = items.slice(0, 7);
    expectSame(check, rewound);
    expectSame(check, [...rewound, result("c9")]);
    const compacted = [userMessage("[summary]"), ...items.slice(-2)];
    expectSame(check, compacted);
    expectSame(check, [...compacted, call("p"), result("p")]);
  });

  it("does not trust an array changed in place after it was checked", () => {
    const check = new PairingCheck();
    const items: Item[] = [userMessage("go"), call("a"), result("a")];
    expectSame(check, items);
    items[2] = result("b");
    expect(expectSame(check, items).repairs.map((r) => r.kind)).toEqual(["orphan_result", "missing_result"]);
  });
});

describe("pairToolResults", () => {
  it("leaves a valid history untouched (same array), results in any order", () => {
    const items = [
      userMessage("go"),
      call("a"),
      call("b"),
      result("b"),
      result("a"),
      assistantMessage("done"),
    ];
    const paired = pairToolResults(items);
    expect(paired.repairs).toEqual([]);
    expect(paired.items).toBe(items);
  });

  it("leaves a long valid history untouched; a call answered twice or a result out of its turn is repaired", () => {
    const items: Item[] = [userMessage("go")];
    for (let turn = 0; turn < 500; turn++) {
      items.push(call(`c${turn}a`), call(`c${turn}b`), result(`c${turn}b`), result(`c${turn}a`));
    }
    items.push(assistantMessage("done"));
    expect(pairToolResults(items).items).toBe(items);

    // The same call id twice in one turn is one open call: its second result is a duplicate.
    const twice = pairToolResults([call("a"), call("a"), result("a"), result("a", "again")]);
    expect(twice.repairs).toEqual([{ kind: "duplicate_result", callId: "a" }]);
    // A result answering the turn before last is not paired with it.
    const late = pairToolResults([call("a"), result("a"), call("b"), result("b"), result("a", "late")]);
    expect(late.repairs.map((r) => r.kind)).toEqual(["orphan_result"]);
  });

  it("adds an error result for a call that never got one", () => {
    const paired = pairToolResults([
      userMessage("go"),
      call("a"),
      call("b"),
      result("a"),
      userMessage("next"),
    ]);
    expect(paired.repairs).toEqual([{ kind: "missing_result", callId: "b" }]);
    expect(paired.items.slice(3, 5)).toEqual([
      result("a"),
      { type: "tool_result", callId: "b", name: "read", output: MISSING_RESULT_TEXT, isError: true },
    ]);
    expect(paired.items[5]).toEqual(userMessage("next"));
  });

  it("keeps the text of a result whose call is gone, as a user message", () => {
    const paired = pairToolResults([userMessage("go"), result("gone", "42 lines"), assistantMessage("ok")]);
    expect(paired.repairs).toEqual([{ kind: "orphan_result", callId: "gone" }]);
    expect(paired.items[1]).toMatchObject({ type: "message", role: "user" });
    expect(JSON.stringify(paired.items[1])).toContain("42 lines");
  });

  it("moves a result that came after a user interjection up to its call; drops duplicates", () => {
    const paired = pairToolResults([call("a"), userMessage("wait"), result("a"), result("a", "again")]);
    expect(paired.repairs.map((r) => r.kind)).toEqual(["moved_result", "duplicate_result"]);
    expect(paired.items).toEqual([call("a"), result("a"), userMessage("wait")]);
  });
});

const CAPS: Record<string, ModelCapabilities> = {
  effort: { tools: true, parallelTools: true, reasoning: "effort", vision: true, promptCaching: true },
  budget: { tools: true, parallelTools: true, reasoning: "budget", vision: true, promptCaching: true },
  plain: { tools: false, parallelTools: false, reasoning: "none", vision: false, promptCaching: false },
};

describe("applyCapabilities", () => {
  const request: Request = {
    items: [
      {
        type: "message",
        role: "user",
        content: [
          { type: "text", text: "see" },
          { type: "image", mediaType: "image/png", data: "AA==" },
        ],
      },
    ],
    tools: [{ name: "t", description: "d", parameters: { type: "object" } }],
    settings: {
      temperature: 0.2,
      topP: 0.9,
      reasoning: { effort: "high", budgetTokens: 4000 },
      parallelToolCalls: true,
    },
  };

  it("sends everything for a model the catalog does not know", () => {
    const out = applyCapabilities("openai-chat", "llama3", undefined, request);
    expect(out.warnings).toEqual([]);
    expect(out.request).toBe(request);
  });

  it("drops the budget and the sampling settings for an OpenAI reasoning model", () => {
    const out = applyCapabilities("openai-responses", "o3", CAPS.effort, request);
    expect(out.request.settings).toEqual({ reasoning: { effort: "high" }, parallelToolCalls: true });
    expect(out.warnings.map((w) => w.detail?.setting)).toEqual([
      "reasoning.budgetTokens",
      "temperature",
      "topP",
    ]);
    expect(out.warnings.every((w) => w.code === "unsupported_setting")).toBe(true);
    expect(request.settings?.temperature).toBe(0.2); // the input is not mutated
  });

  it("drops the effort for a budget model", () => {
    const out = applyCapabilities("anthropic", "claude-sonnet-4-5", CAPS.budget, request);
    expect(out.request.settings?.reasoning).toEqual({ budgetTokens: 4000 });
    expect(out.warnings.map((w) => w.detail?.setting)).toEqual(["reasoning.effort"]);
  });

  it("drops reasoning, parallel calls, tools and images for a model without them", () => {
    const out = applyCapabilities("openai-chat", "tiny", CAPS.plain, request);
    expect(out.request.settings?.reasoning).toBeUndefined();
    expect(out.request.settings?.parallelToolCalls).toBeUndefined();
    expect(out.request.tools).toBeUndefined();
    const content = (out.request.items[0] as Extract<Item, { type: "message" }>).content;
    expect(content).toEqual([
      { type: "text", text: "see" },
      { type: "text", text: "[image omitted: tiny does not accept images]" },
    ]);
    expect(out.warnings.map((w) => w.detail?.setting)).toEqual([
      "reasoning",
      "parallelToolCalls",
      "tools",
      "image",
    ]);
  });
});
