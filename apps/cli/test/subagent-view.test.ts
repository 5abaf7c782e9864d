import type { WorkerEvent } from "@yoi/llm-worker";
import { type PodEvent, toStreamJson } from "@yoi/pod";
import { describe, expect, it } from "vitest";
import { createStyle } from "../src/style.ts";
import { Renderer } from "../src/ui/renderer.ts";

function renderer(animate: boolean) {
  let text = "";
  const r = new Renderer({
    out: { write: (chunk: string) => (text += chunk), columns: 100, isTTY: animate },
    style: createStyle(false),
    animate,
    window: 0,
    provider: { provider: "anthropic" },
  });
  return { r, written: () => text };
}

const base = { batchId: "b", callIndex: 0, turnIndex: 0 };
const start = (callId: string, name: string, args: unknown): WorkerEvent => ({
  type: "tool_call_start",
  callId,
  name,
  args,
  ...base,
  startedAt: Date.now(),
});
const end = (callId: string, name: string, isError = false): WorkerEvent => ({
  type: "tool_call_end",
  callId,
  name,
  ...base,
  isError,
  outcome: isError ? "error" : "ok",
  durationMs: 12,
  preview: "",
  outputBytes: 10,
  fullBytes: 10,
});
const sub = (event: WorkerEvent): PodEvent => ({
  type: "subagent",
  callId: "t1",
  description: "scan the parser",
  model: "anthropic/m",
  depth: 1,
  event,
});

const story: PodEvent[] = [
  start("t1", "task", { description: "scan the parser", prompt: "…" }),
  sub(start("c1", "read_file", { path: "src/a.ts" })),
  sub(end("c1", "read_file")),
  sub(start("c2", "grep", { pattern: "parse" })),
  sub(end("c2", "grep", true)),
  sub({ type: "turn_end", turnIndex: 0, stopReason: "tool_use", toolCalls: 2 }),
  sub({ type: "turn_end", turnIndex: 1, stopReason: "end_turn", toolCalls: 0 }),
  end("t1", "task"),
  // The task's line is printed with its result, once committed.
  {
    type: "item_committed",
    item: { type: "tool_result", callId: "t1", name: "task", output: "the parser is fine", isError: false },
    index: 2,
    reason: "tool_result",
  },
];

describe("subagents in the CLI", () => {
  it("without a terminal prints each child step indented and labelled, then a summary", () => {
    const { r, written } = renderer(false);
    for (const e of story) r.handle(e);
    const lines = written().split("\n");
    expect(lines).toContain("  │ scan the parser · ✓ read_file src/a.ts 12ms");
    expect(lines).toContain("  │ scan the parser · ✗ grep /parse/ 12ms");
    expect(lines.some((l) => l.startsWith("✓ task scan the parser"))).toBe(true);
    expect(lines).toContain("  └ 2 tool calls, 1 failed · 2 model calls");
  });

  it("on a terminal shows the child's steps live under the task and collapses them when it ends", () => {
    const { r, written } = renderer(true);
    for (const e of story.slice(0, 4)) r.handle(e);
    const live = written();
    expect(live).toContain("  │ ✓ read_file src/a.ts");
    const afterEnd = (() => {
      for (const e of story.slice(4)) r.handle(e);
      r.dispose();
      return written().slice(live.length);
    })();
    // The summary line is permanent; the step lines were live only (cleared, not printed again).
    expect(afterEnd).toContain("  └ 2 tool calls, 1 failed · 2 model calls\n");
    expect(afterEnd.split("✓ task scan the parser")).toHaveLength(2);
  });

  it("stream-json nests the child's event under its task call", () => {
    expect(toStreamJson(sub(end("c1", "read_file")), 0)).toMatchObject({
      type: "subagent",
      id: "t1",
      description: "scan the parser",
      depth: 1,
      event: { type: "tool_end", id: "c1", name: "read_file", is_error: false },
    });
    expect(toStreamJson(sub({ type: "run_start", runId: "r", mode: "run", input: [] }), 0)).toBeUndefined();
  });
});
