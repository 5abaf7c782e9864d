/**
 * The todo checklist (`todo_write`) in the terminal. On a terminal it stays
 * in the live region below the running tools and is redrawn in place on
 * every update; when the run ends it is printed once, for the scrollback.
 * Without a terminal each new list is printed as a block.
 */
import type { TodoItem } from "@yoi/pod";
import type { Style } from "../style.ts";
import type { LiveRegion } from "./live-region.ts";

/** The checklist as lines: a header with progress, then one line per item. */
export function todoLines(todos: readonly TodoItem[], style: Style): string[] {
  const done = todos.filter((t) => t.status === "completed").length;
  const lines = [style.bold(`☰ todos ${done}/${todos.length}`)];
  for (const t of todos) {
    if (t.status === "completed") lines.push(`  ${style.green("✔")} ${style.dim(t.content)}`);
    else if (t.status === "in_progress") lines.push(`  ${style.cyan("▶")} ${style.bold(t.content)}`);
    else lines.push(`  ${style.dim("○")} ${t.content}`);
  }
  return lines;
}

const KEY = "todo:";

export class TodoView {
  readonly #live: LiveRegion;
  readonly #animate: boolean;
  readonly #style: Style;
  readonly #print: (text: string) => void;
  /** Live lines drawn now. */
  #shown = 0;
  /** The list not yet printed to the scrollback (animated mode). */
  #unprinted: readonly TodoItem[] | undefined;

  constructor(options: { live: LiveRegion; animate: boolean; style: Style; print: (text: string) => void }) {
    this.#live = options.live;
    this.#animate = options.animate;
    this.#style = options.style;
    this.#print = options.print;
  }

  update(todos: readonly TodoItem[]): void {
    const lines = todos.length === 0 ? [] : todoLines(todos, this.#style);
    if (!this.#animate) {
      this.#print(lines.length === 0 ? this.#style.dim("☰ todos cleared") : lines.join("\n"));
      return;
    }
    for (let i = lines.length; i < this.#shown; i++) this.#live.delete(`${KEY}${i}`);
    lines.forEach((line, i) => {
      this.#live.set(`${KEY}${i}`, () => line);
    });
    this.#shown = lines.length;
    this.#unprinted = todos;
  }

  /** The run ended: the live checklist goes into the scrollback. */
  settle(): void {
    if (!this.#animate) return;
    for (let i = 0; i < this.#shown; i++) this.#live.delete(`${KEY}${i}`);
    this.#shown = 0;
    const todos = this.#unprinted;
    this.#unprinted = undefined;
    if (todos !== undefined && todos.length > 0) this.#print(todoLines(todos, this.#style).join("\n"));
  }
}
