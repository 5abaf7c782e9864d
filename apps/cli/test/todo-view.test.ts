import { toStreamJson } from "@yoi/pod";
import { describe, expect, it } from "vitest";
import { createStyle } from "../src/style.ts";
import { Renderer } from "../src/ui/renderer.ts";

const todos = (statuses: ("pending" | "in_progress" | "completed")[]) =>
  statuses.map((status, i) => ({ content: `step ${i + 1}`, status }));

function renderer(animate: boolean) {
  let text = "";
  const r = new Renderer({
    out: { write: (chunk: string) => (text += chunk), columns: 80, isTTY: animate },
    style: createStyle(false),
    animate,
    window: 0,
    provider: { provider: "anthropic" },
  });
  return { r, written: () => text };
}

describe("todo checklist in the CLI", () => {
  it("without a terminal prints each new list as a block", () => {
    const { r, written } = renderer(false);
    r.handle({ type: "todos", todos: todos(["in_progress", "pending"]) });
    r.handle({ type: "todos", todos: todos(["completed", "in_progress"]) });
    expect(written()).toBe(
      "☰ todos 0/2\n  ▶ step 1\n  ○ step 2\n" + "☰ todos 1/2\n  ✔ step 1\n  ▶ step 2\n",
    );
  });

  it("on a terminal redraws the list in place and leaves the last one in the scrollback", () => {
    const { r, written } = renderer(true);
    r.handle({ type: "todos", todos: todos(["in_progress", "pending", "pending"]) });
    const first = written();
    expect(first).toContain("☰ todos 0/3\n  ▶ step 1\n  ○ step 2\n  ○ step 3\n");
    r.handle({ type: "todos", todos: todos(["completed", "in_progress"]) });
    const second = written().slice(first.length);
    // The 4 old rows are cleared (cursor up 4, erase down) before the new list is drawn.
    expect(second).toContain("\x1b[4F\x1b[J");
    expect(second).toContain("☰ todos 1/2\n  ✔ step 1\n  ▶ step 2\n");
    expect(second).not.toContain("step 3");
    r.handle({ type: "run_end", runId: "r", status: "completed", turns: 1, usage: {} });
    r.dispose();
    const end = written().slice(first.length + second.length);
    expect(end.match(/☰ todos 1\/2/g)).toHaveLength(1);
  });

  it("is a stream-json line", () => {
    expect(toStreamJson({ type: "todos", todos: todos(["completed"]) }, 0)).toEqual({
      type: "todos",
      todos: [{ content: "step 1", status: "completed" }],
    });
  });
});
