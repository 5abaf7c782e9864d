import type { Item, ToolResultItem } from "@yoi/llm-client";
import { describe, expect, it } from "vitest";
import { isTrimmed, totalToolOutputTokens, trimPlaceholder, trimToolOutputs } from "../src/index.ts";
import { call, ref, result, toolRounds, user } from "./support/items.ts";

function results(history: readonly Item[]): ToolResultItem[] {
  return history.filter((i): i is ToolResultItem => i.type === "tool_result");
}

describe("trimToolOutputs: old outputs become placeholders over the budget", () => {
  it("does nothing under the budget and returns the same array", () => {
    const history = toolRounds(5, 400); // 5 x 100 tokens
    const out = trimToolOutputs(history, { budgetTokens: 500 });
    expect(out.history).toBe(history);
    expect(out.trimmed).toEqual([]);
  });

  it("trims the oldest outputs first, keeps the newest, and keeps every ref", () => {
    const history = [...toolRounds(10, 400), user("next")]; // 10 x 100 tokens
    const out = trimToolOutputs(history, { budgetTokens: 700 });
    const after = results(out.history);
    // 1000 tokens -> at most 700: the three oldest go (placeholders are not tool outputs: they count 0).
    expect(out.trimmed).toEqual([ref(0), ref(1), ref(2)]);
    for (const [i, item] of after.entries()) {
      expect(item.outputRef?.id).toBe(ref(i));
      if (i < 3) {
        expect(item.output).toBe(`[tool output trimmed; ref=${ref(i)}]`);
        expect(isTrimmed(item)).toBe(true);
      } else {
        expect(item.output.startsWith(`${i}:`)).toBe(true);
      }
    }
    expect(out.totalAfter).toBeLessThanOrEqual(700);
    expect(totalToolOutputTokens(out.history)).toBe(out.totalAfter);
    // The input history is not mutated.
    expect(results(history)[0]!.output.startsWith("0:")).toBe(true);
  });

  it("trims down to the target when one is given (batching)", () => {
    const history = [...toolRounds(10, 400), user("next")];
    const out = trimToolOutputs(history, { budgetTokens: 900, targetTokens: 500 });
    expect(out.trimmed.length).toBe(5);
    expect(out.totalAfter).toBeLessThanOrEqual(500);
  });

  it("never trims the batch the model has not seen yet, nor outputs without a ref", () => {
    const history: Item[] = [
      user("go"),
      call("a"),
      result("a", "A".repeat(4000)), // no ref: cannot be read back, so it stays
      call("b"),
      result("b", "B".repeat(4000), ref(2)),
      call("c"),
      call("d"),
      result("c", "C".repeat(4000), ref(3)),
      result("d", "D".repeat(4000), ref(4)),
    ];
    const out = trimToolOutputs(history, { budgetTokens: 100 });
    expect(out.trimmed).toEqual([ref(2)]);
    const after = results(out.history);
    expect(after[0]!.output).toBe("A".repeat(4000));
    expect(after[1]!.output).toBe(trimPlaceholder(ref(2)));
    expect(after[2]!.output).toBe("C".repeat(4000));
    expect(after[3]!.output).toBe("D".repeat(4000));
  });

  it("is idempotent: trimmed outputs count 0 and are not trimmed again", () => {
    const history = [...toolRounds(10, 400), user("next")];
    const once = trimToolOutputs(history, { budgetTokens: 650 });
    const twice = trimToolOutputs(once.history, { budgetTokens: 650 });
    expect(twice.history).toBe(once.history);
    expect(twice.trimmed).toEqual([]);
  });
});
