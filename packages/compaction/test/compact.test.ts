import type { Item, MessageItem } from "@yoi/llm-client";
import { LlmError, messageText } from "@yoi/llm-client";
import { createScriptedClient } from "@yoi/llm-worker/testing";
import { describe, expect, it } from "vitest";
import {
  buildSummaryRequest,
  CompactionError,
  checkAndCompact,
  compact,
  RETAIN_HEADER,
  resolveCompactionConfig,
  SUMMARY_HEADER,
  shouldCompact,
  tokenUsageFromUsage,
} from "../src/index.ts";
import { assistant, call, result, user } from "./support/items.ts";

const config = resolveCompactionConfig();
const ANSWER =
  "<retain>\nref=abc is the build log\n</retain>\n<summary>\nUser wants X. Did Y. Next: Z.\n</summary>";

function history(): Item[] {
  return [
    user("first request"),
    assistant("done first"),
    user("second request"),
    call("c1"),
    result("c1", "tool said hi"),
    assistant("done second"),
    user("third request"),
    call("c2"),
    result("c2", "tool said bye"),
    assistant("done third"),
  ];
}

describe("shouldCompact", () => {
  const usage = (total: number) => tokenUsageFromUsage({ inputTokens: total });
  it("is true at or above threshold = limit * ratio", () => {
    expect(shouldCompact(usage(79_999), 100_000, config)).toBe(false);
    expect(shouldCompact(usage(80_000), 100_000, config)).toBe(true);
  });
  it("is false when disabled or auto is off", () => {
    expect(shouldCompact(usage(99_000), 100_000, resolveCompactionConfig({ enabled: false }))).toBe(false);
    expect(shouldCompact(usage(99_000), 100_000, resolveCompactionConfig({ auto: false }))).toBe(false);
  });
});

describe("compact", () => {
  it("asks without tools, with the instruction as the last user message, and extracts retain and summary", async () => {
    const client = createScriptedClient([{ text: ANSWER, usage: { inputTokens: 500, outputTokens: 40 } }]);
    const out = await compact(history(), { client, config });
    expect(out.summary).toBe("User wants X. Did Y. Next: Z.");
    expect(out.retain).toBe("ref=abc is the build log");
    expect(out.usage).toEqual({ inputTokens: 500, outputTokens: 40 });
    const request = client.requests[0]!;
    expect(request.tools).toBeUndefined();
    expect(request.items.slice(0, -1)).toEqual(history());
    const instruction = messageText(request.items.at(-1) as MessageItem);
    expect(instruction).toContain("<summary></summary>");
    expect(instruction).toContain("<retain></retain>");
  });

  it("appends summary and retain directives as bullets, without replacing the prompts", () => {
    const withDirectives = resolveCompactionConfig({
      summaryPrompt: "Summarize in <summary> tags.",
      summaryDirectives: ["Keep file paths", "  "],
      retainPrompt: "List refs in <retain> tags.",
      retainDirectives: ["Keep every ref id"],
    });
    const { request } = buildSummaryRequest(history(), withDirectives);
    expect(messageText(request.items.at(-1) as MessageItem)).toBe(
      "Summarize in <summary> tags.\n\nAdditional instructions:\n- Keep file paths\n\nList refs in <retain> tags.\n\nAdditional instructions:\n- Keep every ref id",
    );
  });

  it("strips the trailing tool calls from the summary input", () => {
    const pending: Item[] = [...history(), user("fourth"), assistant("Checking."), call("c9")];
    const { request } = buildSummaryRequest(pending, config);
    expect(request.items.slice(-3, -1)).toEqual([user("fourth"), assistant("Checking.")]);
    expect(request.items.some((i) => i.type === "tool_call" && i.callId === "c9")).toBe(false);
  });

  it("uses the whole answer as the summary when the model forgot the tags", async () => {
    const client = createScriptedClient([{ text: "Plain summary." }]);
    const out = await compact(history(), { client, config });
    expect(out.summary).toBe("Plain summary.");
    expect(out.retain).toBeUndefined();
  });

  it("fails with summary_failed (history untouched) when the call fails or says nothing", async () => {
    const failing = createScriptedClient([{ error: new LlmError("overloaded", "busy") }]);
    await expect(compact(history(), { client: failing, config })).rejects.toMatchObject({
      code: "summary_failed",
    });
    const empty = createScriptedClient([{ text: "<summary></summary>" }]);
    await expect(compact(history(), { client: empty, config })).rejects.toThrow(CompactionError);
  });

  it("fits a summary input that is over budget: tool outputs to placeholders first, then the oldest groups", () => {
    const items: Item[] = [user("go")];
    for (let i = 0; i < 20; i++) {
      items.push(assistant(`step ${i}`), call(`c${i}`), {
        ...result(`c${i}`, "q".repeat(4000)),
        outputRef: { id: `00000000-0000-7000-8000-${String(i).padStart(12, "0")}` },
      });
    }
    const { request, omittedItems } = buildSummaryRequest(items, config, { inputBudgetTokens: 2_000 });
    expect(omittedItems).toBe(0);
    const outputs = request.items.flatMap((i) => (i.type === "tool_result" ? [i.output] : []));
    expect(outputs).toHaveLength(20);
    // Oldest first, only as many as needed: the newest output is still whole.
    expect(outputs[0]).toMatch(/^\[tool output trimmed; ref=/);
    expect(outputs.at(-1)).toBe("q".repeat(4000));
    const tight = buildSummaryRequest(items, config, { inputBudgetTokens: 300 });
    expect(tight.omittedItems).toBeGreaterThan(0);
    expect(messageText(tight.request.items[0] as MessageItem)).toContain(
      "earlier items of this conversation were left out",
    );
  });
});

describe("checkAndCompact", () => {
  it("replaces history with retain + summary + the last turn once usage crosses the threshold", async () => {
    // A scripted model with fixed usage numbers: no real token count is needed.
    const client = createScriptedClient([{ text: ANSWER, usage: { inputTokens: 900, outputTokens: 50 } }]);
    const out = await checkAndCompact(history(), {
      client,
      config,
      usage: tokenUsageFromUsage({ inputTokens: 85_000, cacheReadTokens: 60_000, outputTokens: 500 }),
      contextLimit: 100_000,
    });
    expect(out.compacted).toBe(true);
    if (!out.compacted) return;
    const [retain, summary, ...rest] = out.history;
    expect(messageText(retain as MessageItem)).toBe(
      `${RETAIN_HEADER}\n\n<retain>\nref=abc is the build log\n</retain>`,
    );
    expect(messageText(summary as MessageItem)).toBe(
      `${SUMMARY_HEADER}\n\n<summary>\nUser wants X. Did Y. Next: Z.\n</summary>`,
    );
    expect(rest).toEqual(history().slice(6)); // the third turn, with its call and result together
    // Neither the instruction nor the answer entered history.
    expect(out.history.some((i) => i.type === "message" && messageText(i).includes("Additional"))).toBe(
      false,
    );
    expect(out.history.filter((i) => i.type === "message" && i.role === "assistant")).toEqual([
      assistant("done third"),
    ]);
  });

  it("does nothing below the threshold, when disabled, or with auto off (unless forced)", async () => {
    const client = createScriptedClient([]);
    const usage = tokenUsageFromUsage({ inputTokens: 90_000 });
    const base = { client, contextLimit: 100_000 };
    expect(
      await checkAndCompact(history(), { ...base, config, usage: tokenUsageFromUsage({ inputTokens: 10 }) }),
    ).toEqual({ compacted: false, reason: "below_threshold" });
    expect(
      await checkAndCompact(history(), {
        ...base,
        config: resolveCompactionConfig({ enabled: false }),
        usage,
        force: true,
      }),
    ).toEqual({
      compacted: false,
      reason: "disabled",
    });
    expect(
      await checkAndCompact(history(), { ...base, config: resolveCompactionConfig({ auto: false }), usage }),
    ).toEqual({
      compacted: false,
      reason: "auto_off",
    });
    expect(client.requests).toHaveLength(0);
  });

  it("omits the retain message when retainPrompt is null, and keeps N turns", async () => {
    const client = createScriptedClient([{ text: "<summary>S</summary>" }]);
    const out = await checkAndCompact(history(), {
      client,
      config: resolveCompactionConfig({ retainPrompt: null, retainLastTurns: 2 }),
      usage: tokenUsageFromUsage({ inputTokens: 90_000 }),
      contextLimit: 100_000,
    });
    expect(out.compacted && out.history.slice(1)).toEqual(history().slice(2));
    expect(messageText(client.requests[0]!.items.at(-1) as MessageItem)).not.toContain("<retain>");
  });
});
