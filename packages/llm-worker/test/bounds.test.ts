/**
 * Bounds on what one model response can make the worker do: how many of
 * its tool calls run, how many run at once, how many bytes its text and a
 * call's arguments may have, and a warning when the offered tools are more
 * than a model handles well. Nothing over a bound reaches history (and so
 * neither the session log nor a later request).
 */
import type { Event } from "@yoi/llm-client";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { createScriptedClient } from "../src/testing/scripted-client.ts";
import { defineTool } from "../src/tool.ts";
import { Worker } from "../src/worker.ts";
import { assertValidHistory, record } from "./helpers.ts";

/** A stream of text deltas that would never end: only a bound stops it. */
async function* endlessText(signal: AbortSignal | undefined): AsyncIterable<Event> {
  yield { type: "status", status: "started" };
  yield { type: "block_start", index: 0, block: "text" };
  const chunk = "x".repeat(64 * 1024);
  for (;;) {
    if (signal?.aborted) {
      yield { type: "block_abort", index: 0, block: "text", reason: "cancelled" };
      yield { type: "status", status: "cancelled" };
      return;
    }
    yield { type: "block_delta", index: 0, delta: "text", text: chunk };
    await Promise.resolve();
  }
}

/** One tool call whose arguments keep coming. */
async function* endlessArguments(signal: AbortSignal | undefined): AsyncIterable<Event> {
  yield { type: "status", status: "started" };
  yield { type: "block_start", index: 0, block: "tool_use", id: "big", name: "write" };
  yield { type: "block_delta", index: 0, delta: "input_json", text: '{"content":"' };
  for (;;) {
    if (signal?.aborted) {
      yield { type: "block_abort", index: 0, block: "tool_use", reason: "cancelled" };
      yield { type: "status", status: "cancelled" };
      return;
    }
    yield { type: "block_delta", index: 0, delta: "input_json", text: "y".repeat(64 * 1024) };
    await Promise.resolve();
  }
}

describe("worker bounds", () => {
  it("runs the first maxToolCallsPerResponse calls, at most toolConcurrency at once; the rest get an error saying why", async () => {
    let active = 0;
    let peak = 0;
    const ran: string[] = [];
    const slow = defineTool({
      name: "read",
      description: "reads",
      inputSchema: z.object({ n: z.number() }),
      execute: async ({ n }) => {
        active++;
        peak = Math.max(peak, active);
        await new Promise((resolve) => setTimeout(resolve, 1));
        active--;
        ran.push(String(n));
        return `read ${n}`;
      },
    });
    const calls = Array.from({ length: 500 }, (_, n) => ({ id: `c${n}`, name: "read", args: { n } }));
    const client = createScriptedClient([{ toolCalls: calls }, { text: "done" }]);
    const worker = new Worker({
      client,
      tools: [slow],
      bounds: { maxToolCallsPerResponse: 40, toolConcurrency: 4 },
    });
    const events = record(worker);
    const result = await worker.run("go");
    expect(result.status).toBe("completed");
    expect(ran).toHaveLength(40);
    expect(peak).toBeLessThanOrEqual(4);
    assertValidHistory(worker.history);
    const results = worker.history.filter((i) => i.type === "tool_result");
    expect(results).toHaveLength(500);
    const refused = results.filter((r) => r.isError);
    expect(refused).toHaveLength(460);
    expect(refused[0]?.output).toMatch(
      /500 tool calls and at most 40 run per response \(worker\.maxToolCallsPerResponse\)/,
    );
    // The refused calls' arguments are not kept.
    const extra = worker.history.find((i) => i.type === "tool_call" && i.callId === "c499");
    expect(extra).toMatchObject({ arguments: "{}" });
    expect(events.some((e) => e.type === "warning" && e.warning.code === "tool_calls_over_limit")).toBe(true);
    // The model was told, in its next request.
    expect(client.requests[1]?.items.at(-1)).toMatchObject({ type: "tool_result", isError: true });
  });

  it("stops a response past maxResponseBytes, fails the run naming the setting, and keeps nothing of it", async () => {
    const client = createScriptedClient([(_request, signal) => endlessText(signal), { text: "fine" }]);
    const worker = new Worker({ client, bounds: { maxResponseBytes: 1024 * 1024 } });
    const result = await worker.run("talk");
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe("limit_exceeded");
    expect(result.error?.message).toMatch(/passed 1048576 bytes \(worker\.maxResponseBytes\)/);
    expect(worker.history.map((i) => i.type)).toEqual(["message"]);
    // A later request carries none of it.
    await worker.run("again");
    expect(JSON.stringify(client.requests[1]).length).toBeLessThan(10_000);
  });

  it("stops a response whose tool call's arguments pass maxToolArgumentBytes, naming the setting", async () => {
    const client = createScriptedClient([(_request, signal) => endlessArguments(signal)]);
    const worker = new Worker({ client, bounds: { maxToolArgumentBytes: 256 * 1024 } });
    const result = await worker.run("write");
    expect(result.status).toBe("failed");
    expect(result.error?.message).toMatch(
      /arguments of a write call passed 262144 bytes \(worker\.maxToolArgumentBytes\)/,
    );
    assertValidHistory(worker.history);
    expect(worker.history.map((i) => i.type)).toEqual(["message"]);
  });

  it("warns once when the offered tools pass the count or size budget", async () => {
    const tools = Array.from({ length: 300 }, (_, n) =>
      defineTool({ name: `t${n}`, description: "a tool", inputSchema: z.object({}), execute: () => "ok" }),
    );
    const client = createScriptedClient([{ text: "one" }, { text: "two" }]);
    const worker = new Worker({ client, tools });
    const events = record(worker);
    await worker.run("a");
    await worker.run("b");
    const warnings = events.filter((e) => e.type === "warning" && e.warning.code === "tools_over_budget");
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings[0])).toMatch(/300 tools/);
  });
});
