/**
 * The session's todo list: the state `todo_write` replaces as a whole, the
 * `[Todo list]` system message that carries it across a compaction, and its
 * recovery from history when a session is restored.
 */
import { type Item, messageText, systemMessage } from "@yoi/llm-client";

/** Where a todo stands. */
export type TodoStatus = "pending" | "in_progress" | "completed";

/** One entry of the list. */
export interface TodoItem {
  /** What is to be done, one line. */
  content: string;
  status: TodoStatus;
}

/** The first line of the message that re-attaches the list after a compaction. */
export const TODO_MESSAGE_HEADER = "[Todo list]";

/** The name the model calls the tool by. */
export const TODO_WRITE_TOOL_NAME = "todo_write";

const MARK: Record<TodoStatus, string> = { completed: "[x]", in_progress: "[~]", pending: "[ ]" };

/** The list as checklist lines (`- [x] done`, `- [~] doing`, `- [ ] to do`). */
export function renderTodos(todos: readonly TodoItem[]): string {
  return todos.map((t) => `- ${MARK[t.status]} ${t.content}`).join("\n");
}

/** Counts per status, e.g. `1 completed, 1 in progress, 2 pending`. */
export function todoCounts(todos: readonly TodoItem[]): string {
  const n = (s: TodoStatus) => todos.filter((t) => t.status === s).length;
  return `${n("completed")} completed, ${n("in_progress")} in progress, ${n("pending")} pending`;
}

/** Reads the items back from `renderTodos` output; lines of any other shape are skipped. */
export function parseTodos(text: string): TodoItem[] {
  const out: TodoItem[] = [];
  for (const line of text.split("\n")) {
    const m = /^- \[([ x~])\] (.+)$/.exec(line);
    if (!m) continue;
    const status: TodoStatus = m[1] === "x" ? "completed" : m[1] === "~" ? "in_progress" : "pending";
    out.push({ content: m[2]!, status });
  }
  return out;
}

/** The session's current todo list; listeners hear every replacement. */
export class TodoList {
  #items: TodoItem[] = [];
  readonly #listeners = new Set<(todos: readonly TodoItem[]) => void>();

  /** The current items (a copy). */
  get items(): TodoItem[] {
    return this.#items.map((t) => ({ ...t }));
  }

  /** Replaces the whole list and tells the listeners. */
  replace(todos: readonly TodoItem[]): void {
    this.#items = todos.map((t) => ({ content: t.content, status: t.status }));
    const copy = this.items;
    for (const listener of [...this.#listeners]) {
      try {
        listener(copy);
      } catch {
        // A broken listener must not break the tool.
      }
    }
  }

  subscribe(listener: (todos: readonly TodoItem[]) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** The `[Todo list]` system message, or undefined while the list is empty. */
  message(): Item | undefined {
    if (this.#items.length === 0) return undefined;
    return systemMessage(
      `${TODO_MESSAGE_HEADER} (kept across the compaction; update it with ${TODO_WRITE_TOOL_NAME})\n${renderTodos(this.#items)}`,
    );
  }

  /**
   * The list as a restored history last left it: the arguments of the last
   * successful `todo_write` call, or a later `[Todo list]` message.
   */
  restore(history: readonly Item[]): void {
    const failed = new Set<string>();
    for (const item of history) if (item.type === "tool_result" && item.isError) failed.add(item.callId);
    for (let i = history.length - 1; i >= 0; i--) {
      const item = history[i]!;
      if (item.type === "message" && item.role === "system") {
        const text = messageText(item);
        if (text.startsWith(TODO_MESSAGE_HEADER)) {
          this.#items = parseTodos(text);
          return;
        }
      }
      if (item.type === "tool_call" && item.name === TODO_WRITE_TOOL_NAME && !failed.has(item.callId)) {
        try {
          const args = JSON.parse(item.arguments) as { todos?: unknown };
          if (Array.isArray(args.todos)) {
            this.#items = args.todos
              .filter(isTodoItem)
              .map((t) => ({ content: t.content, status: t.status }));
            return;
          }
        } catch {
          // Unparseable arguments were refused by the tool too; look further back.
        }
      }
    }
  }
}

function isTodoItem(value: unknown): value is TodoItem {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.content === "string" &&
    (v.status === "pending" || v.status === "in_progress" || v.status === "completed")
  );
}
