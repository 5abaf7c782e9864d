import { defineTool, ToolError } from "@yoi/llm-worker";
import * as z from "zod";
import { renderTodos, TODO_WRITE_TOOL_NAME, type TodoList, todoCounts } from "./todo-list.ts";

/** Most items one list may hold. */
export const TODO_MAX_ITEMS = 100;
/** Longest `content` of one item, in characters. */
export const TODO_MAX_CONTENT = 500;

/** The arguments `todo_write` takes . */
export const todoWriteInput = z.object({
  todos: z
    .array(
      z.object({
        content: z
          .string()
          .trim()
          .min(1, "content must not be empty")
          .max(TODO_MAX_CONTENT, `content must be at most ${TODO_MAX_CONTENT} characters`)
          .describe("The task, one line, imperative (e.g. `Run the tests`)."),
        status: z.enum(["pending", "in_progress", "completed"]),
      }),
    )
    .max(TODO_MAX_ITEMS, `at most ${TODO_MAX_ITEMS} items`)
    .describe("The whole list, in order. Items left out are removed; [] clears the list."),
});

/** `todo_write`: replaces the session's todo list as a whole. */
export function todoWriteTool(todos: TodoList) {
  return defineTool({
    name: TODO_WRITE_TOOL_NAME,
    description:
      "Keep a todo list for multi-step work; the user sees it as a checklist. Send the WHOLE list each " +
      "call (it replaces the previous one). Status: pending, in_progress, completed. Keep exactly one " +
      "item in_progress while working; mark items completed as soon as they are done. Skip it for " +
      "trivial one-step requests.",
    inputSchema: todoWriteInput,
    storeLargeOutput: false,
    execute({ todos: items }) {
      const lines = items.map((t) => t.content);
      if (lines.some((l) => l.includes("\n"))) {
        throw new ToolError("Each todo's content must be one line; split multi-line items into several.");
      }
      todos.replace(items);
      if (items.length === 0) return "Todo list cleared.";
      return `Todo list updated (${todoCounts(items)}):\n${renderTodos(items)}`;
    },
  });
}
