import * as path from "node:path";
import { createClient, type Item, messageText } from "@yoi/llm-client";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import type { PodEvent } from "../src/events/pod-events.ts";
import { Pod } from "../src/pod.ts";
import { parseTodos, renderTodos, TodoList } from "../src/tools/todo-list.ts";
import { tempDir } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

function textOf(item: Item | undefined): string {
  return item?.type === "message" ? messageText(item) : "";
}

async function podWith(script: ScriptStep[], base: string, sessionId?: string) {
  const s = await startScriptedServer({ provider: "anthropic", validate: true, script });
  servers.push(s);
  const client = createClient({
    provider: "anthropic",
    model: "claude-haiku-4-5",
    apiKey: "k",
    baseURL: s.baseURL,
    retry: { maxAttempts: 1 },
  });
  const options = { cwd: base, dataDir: path.join(base, ".data"), fsync: "never" as const, client };
  const pod = sessionId ? await Pod.restore(sessionId, options) : await Pod.create(options);
  return { s, pod };
}

const plan = [
  { content: "Read the parser", status: "completed" },
  { content: "Fix the off-by-one", status: "in_progress" },
  { content: "Run the tests", status: "pending" },
];

describe("todo_write", () => {
  it("replaces the list, tells the UI, refuses bad input, survives compaction and a restore", async () => {
    const base = await tempDir();
    const { s, pod } = await podWith(
      [
        { type: "reply", toolCalls: [{ id: "toolu_1", name: "todo_write", arguments: { todos: plan } }] },
        {
          type: "reply",
          toolCalls: [
            {
              id: "toolu_2",
              name: "todo_write",
              arguments: { todos: [{ content: "", status: "done" }] },
            },
          ],
        },
        { type: "reply", text: "planned" },
        { type: "reply", text: "noted" },
        { type: "reply", text: "<summary>We planned a parser fix.</summary>" },
        { type: "reply", text: "still on it" },
      ],
      base,
    );
    const events: PodEvent[] = [];
    pod.subscribe((e) => events.push(e));
    await pod.run("fix the parser");
    expect(pod.todos.items).toEqual(plan);
    const todoEvents = events.filter((e) => e.type === "todos");
    // The refused call changed nothing: one event only.
    expect(todoEvents).toEqual([{ type: "todos", todos: plan }]);
    const results = pod.history.filter((i) => i.type === "tool_result");
    expect(results[0]).toMatchObject({ isError: false });
    expect(results[0]?.type === "tool_result" && results[0].output).toContain("1 completed, 1 in progress");
    expect(results[1]).toMatchObject({ isError: true });
    const refusal = results[1]?.type === "tool_result" ? results[1].output : "";
    expect(refusal).toContain("content must not be empty");
    expect(refusal).toMatch(/status/);

    await pod.run("thanks");
    const replacement = await pod.compact();
    expect(replacement?.detail).toMatchObject({ todos: 3 });
    const attached = pod.history.find((i) => textOf(i).startsWith("[Todo list]"));
    expect(textOf(attached)).toContain("- [~] Fix the off-by-one");
    await pod.run("go on");
    expect(JSON.stringify(s.requests.at(-1))).toContain("- [ ] Run the tests");
    expect(s.rejections).toEqual([]);
    const id = pod.id;
    await pod.close();

    const again = await podWith([], base, id);
    try {
      expect(again.pod.todos.items).toEqual(plan);
    } finally {
      await again.pod.close();
    }
  });

  it("an empty list clears it; a restored session without todo_write starts empty", () => {
    const list = new TodoList();
    list.replace([{ content: "a", status: "pending" }]);
    expect(list.message()).toBeDefined();
    list.replace([]);
    expect(list.message()).toBeUndefined();
    list.restore([{ type: "message", role: "user", content: [{ type: "text", text: "hi" }] }]);
    expect(list.items).toEqual([]);
  });

  it("restores from the last successful call, skipping a refused one", () => {
    const list = new TodoList();
    const call = (id: string, todos: unknown): Item => ({
      type: "tool_call",
      callId: id,
      name: "todo_write",
      arguments: JSON.stringify({ todos }),
    });
    list.restore([
      call("a", [{ content: "first", status: "pending" }]),
      { type: "tool_result", callId: "a", output: "ok", isError: false },
      call("b", [{ content: "bad", status: "nope" }]),
      { type: "tool_result", callId: "b", output: "invalid", isError: true },
    ]);
    expect(list.items).toEqual([{ content: "first", status: "pending" }]);
  });

  it("renders and parses the checklist both ways", () => {
    const todos = [
      { content: "x", status: "completed" as const },
      { content: "y [z]", status: "in_progress" as const },
      { content: "w", status: "pending" as const },
    ];
    expect(renderTodos(todos)).toBe("- [x] x\n- [~] y [z]\n- [ ] w");
    expect(parseTodos(renderTodos(todos))).toEqual(todos);
  });
});
