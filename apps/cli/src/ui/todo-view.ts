/**
 * The todo checklist (`todo_write`) in the terminal. On a terminal it stays
 * in the live region below the running tools and is redrawn in place on
 * every update; when the run ends it is printed once, for the scrollback.
 * Without a terminal each new list is printed as a block.
 */
import type { TodoItem } from "@yoi/pod";
import type { Style } from "../style.ts";
import { wrapWords } from "../text-width.ts";
import type { LiveRegion } from "./live-region.ts";

/**
 * The checklist as lines: a header with progress, then an item a line.
 * Given a width, an item that does not fit goes on over more lines, its
 * words whole, under its text (else each line is cut where it is shown).
 */
export function todoLines(todos: readonly TodoItem[], style: Style, width?: number): string[] {
  const done = todos.filter((t) => t.status === "completed").length;
  const lines = [style.bold(`☰ todos ${done}/${todos.length}`)];
  for (const t of todos) {
    const [mark, paint] =
      t.status === "completed"
        ? [style.green("✔"), style.dim]
        : t.status === "in_progress"
          ? [style.cyan("▶"), style.bold]
          : [style.dim("○"), (text: string) => text];
    const rows = width === undefined ? [t.content] : wrapWords(t.content, Math.max(1, width - 4));
    lines.push(rows.map((row, i) => `${i === 0 ? `  ${mark} ` : "    "}${paint(row)}`).join("\n"));
  }
  return lines;
}

const KEY = "todo:";

export class TodoView {
  readonly #live: LiveRegion;
  readonly #animate: boolean;
  readonly #style: Style;
  readonly #print: (text: string) => void;
  readonly #width: () => number | undefined;
  /** Live lines drawn now. */
  #shown = 0;
  /** The list not yet printed to the scrollback (animated mode). */
  #unprinted: readonly TodoItem[] | undefined;

  /** `width`: the columns the list printed for the scrollback is laid out in (undefined: not a terminal). */
  constructor(options: {
    live: LiveRegion;
    animate: boolean;
    style: Style;
    print: (text: string) => void;
    width?: () => number | undefined;
  }) {
    this.#live = options.live;
    this.#animate = options.animate;
    this.#style = options.style;
    this.#print = options.print;
    this.#width = options.width ?? (() => undefined);
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
    if (todos !== undefined && todos.length > 0)
      this.#print(todoLines(todos, this.#style, this.#width()).join("\n"));
  }
}
