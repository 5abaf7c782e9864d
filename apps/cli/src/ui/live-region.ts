/**
 * What is still changing, kept at the bottom of the output while permanent
 * text scrolls above it: status lines (running tools with spinners, a
 * running command's last lines of output) and the block of an answer
 * still being written, laid out anew at each draw
 * (so a resize re-flows it). An entry may draw several lines; each is cut
 * to the terminal width so it takes one row, and the region never takes
 * more rows than the screen leaves (the oldest lines of a tall entry give
 * way: rows scrolled off could not be cleared). On a resize the rows the
 * old lines now occupy are recomputed before clearing.
 */
import { guardStyled } from "../terminal-text.ts";
import { truncate, visibleWidth } from "../text-width.ts";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export interface LiveOutput {
  write(text: string): unknown;
  columns?: number;
  rows?: number;
  isTTY?: boolean;
}

/** Rows of the screen the region leaves to the rest (the prompt, a line of context above). */
const SPARE_ROWS = 4;

export class LiveRegion {
  readonly #out: LiveOutput;
  readonly #lines = new Map<string, (frame: string) => string>();
  /** Widths of the lines on screen now. */
  #drawn: number[] = [];
  /** What drew them. */
  #shown = "";
  #frame = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  readonly #animate: boolean;

  constructor(out: LiveOutput, animate: boolean) {
    this.#out = out;
    this.#animate = animate;
  }

  get size(): number {
    return this.#lines.size;
  }

  /** Adds or replaces an entry; `render` may return several lines (joined by `\n`). */
  set(key: string, render: (frame: string) => string): void {
    this.#lines.set(key, render);
    if (!this.#animate) return;
    this.#redraw();
    this.#timer ??= setInterval(() => {
      this.#frame = (this.#frame + 1) % FRAMES.length;
      this.#tick();
    }, 80);
  }

  delete(key: string): void {
    if (!this.#lines.delete(key)) return;
    if (!this.#animate) return;
    this.#redraw();
    if (this.#lines.size === 0) this.#stop();
  }

  /** Writes permanent text above the region (styling kept, any other escape shown, never acted on). */
  print(styled: string): void {
    const text = guardStyled(styled);
    if (!this.#animate || this.#drawn.length === 0) {
      this.#out.write(text);
      return;
    }
    // The region is drawn again by the timer's next frame (within 80 ms), not now: while an answer
    // streams, text is printed block after block, and drawing the region (the next block's preview)
    // after each would be most of the cost of showing the answer.
    this.#out.write(this.#clear() + text);
  }

  /** Clears the region (before a prompt or question); `resume()` draws it again. */
  suspend(): void {
    if (this.#animate) this.#write(this.#clear());
  }

  resume(): void {
    if (this.#animate && this.#lines.size > 0) this.#write(this.#draw());
  }

  /** The terminal was resized: clear what the old lines now cover, draw again. */
  resized(): void {
    if (!this.#animate) return;
    this.#redraw();
  }

  dispose(): void {
    this.#stop();
    this.#lines.clear();
    if (this.#animate) this.#write(this.#clear());
  }

  #stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#animate) this.#out.write("\x1b[?25h");
  }

  #redraw(): void {
    this.#write(this.#clear() + this.#draw());
  }

  /** A timer's redraw: nothing is written when the lines are what is on screen already. */
  #tick(): void {
    const shown = this.#shown;
    const clear = this.#clear();
    const draw = this.#draw();
    if (clear !== "" && draw === shown) return;
    this.#write(clear + draw);
  }

  #write(text: string): void {
    if (text !== "") this.#out.write(text);
  }

  /** What clears the region's lines from the screen (they are forgotten). */
  #clear(): string {
    if (this.#drawn.length === 0) return "";
    const cols = Math.max(1, this.#out.columns ?? 80);
    const rows = this.#drawn.reduce((sum, w) => sum + Math.max(1, Math.ceil(w / cols)), 0);
    this.#drawn = [];
    this.#shown = "";
    return `\x1b[${rows}F\x1b[J`;
  }

  /** What draws the region's lines (an entry that renders nothing takes no line). */
  #draw(): string {
    if (this.#lines.size === 0) return "";
    const cols = Math.max(10, (this.#out.columns ?? 80) - 1);
    const frame = FRAMES[this.#frame] ?? "-";
    let lines: string[] = [];
    for (const render of this.#lines.values()) {
      const text = render(frame);
      if (text !== "") lines.push(...(text.includes("\n") ? text.split("\n") : [text]));
    }
    if (lines.length === 0) return "";
    const room = Math.max(1, (this.#out.rows ?? 24) - SPARE_ROWS);
    if (lines.length > room) lines = lines.slice(-room);
    let out = "\x1b[?25l";
    const widths: number[] = [];
    for (const text of lines) {
      const line = truncate(guardStyled(text), cols);
      widths.push(visibleWidth(line));
      out += `${line}\n`;
    }
    this.#drawn = widths;
    this.#shown = out;
    return out;
  }
}
