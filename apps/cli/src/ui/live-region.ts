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
  /**
   * A terminal stream's own size check (Node's `tty.WriteStream`, which
   * runs it on SIGWINCH): asks the terminal its size now and emits
   * `resize` when it changed.
   */
  _refreshSize?(): void;
}

/** Rows of the screen the region leaves to the rest (the prompt, a line of context above). */
const SPARE_ROWS = 4;

/**
 * The frame: how often the region is drawn again (its spinners turn, the
 * block being written is laid out anew), and the longest that permanent
 * text printed while the region is on screen waits to go out, in the same
 * write, with the region drawn again under it. A streamed answer commits a
 * block every few reads; a write for each, and a drawing of the region
 * (the open block rendered again) after each, cost more than the blocks'
 * own rendering. In the render-cpu bench (under load, same rounds), frames
 * of 40 ms cost 0.16x print mode's CPU more than frames of 80 ms, which
 * draw half as often.
 */
const FRAME_MS = 80;

export class LiveRegion {
  readonly #out: LiveOutput;
  readonly #lines = new Map<string, (frame: string) => string>();
  /** Widths of the lines on screen now. */
  #drawn: number[] = [];
  /** What drew them. */
  #shown = "";
  #frame = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** Permanent text waiting for the next frame. */
  #queued = "";
  /** Cleared for a question: printed text goes out at once until `resume()`. */
  #suspended = false;
  readonly #animate: boolean;
  readonly #beforeFrame: (() => void) | undefined;

  /** `beforeFrame` runs at each frame before it is drawn, and when the last line goes (no frame follows then). */
  constructor(out: LiveOutput, animate: boolean, beforeFrame?: () => void) {
    this.#out = out;
    this.#animate = animate;
    this.#beforeFrame = beforeFrame;
  }

  get size(): number {
    return this.#lines.size;
  }

  /** Frames are being drawn: what is printed or changed now shows with the next one, within a frame's time. */
  get framing(): boolean {
    return this.#timer !== undefined;
  }

  /** Adds or replaces an entry; `render` may return several lines (joined by `\n`). */
  set(key: string, render: (frame: string) => string): void {
    this.#lines.set(key, render);
    if (!this.#animate) return;
    this.#redraw();
    this.#timer ??= setInterval(() => {
      this.#beforeFrame?.();
      this.#frame = (this.#frame + 1) % FRAMES.length;
      this.#tick();
    }, FRAME_MS);
  }

  delete(key: string): void {
    if (!this.#lines.delete(key)) return;
    if (!this.#animate) return;
    this.#redraw();
    if (this.#lines.size > 0 || this.#timer === undefined) return;
    this.#stop();
    // What waited for a frame that will not come now goes out (it may start the frames again).
    this.#beforeFrame?.();
  }

  /** Writes permanent text above the region (styling kept, any other escape shown, never acted on). */
  print(styled: string): void {
    const text = guardStyled(styled);
    if (!this.#animate || this.#suspended || this.#lines.size === 0) {
      this.#write(this.#clear() + this.#takeQueued() + text);
      return;
    }
    // Written by the next frame (the timer runs while the region has lines), with the region under it.
    this.#queued += text;
  }

  /** Clears the region (before a prompt or question); `resume()` draws it again. */
  suspend(): void {
    if (!this.#animate) return;
    this.#suspended = true;
    this.#write(this.#clear() + this.#takeQueued());
  }

  resume(): void {
    this.#suspended = false;
    if (this.#animate && this.#lines.size > 0) this.#write(this.#takeQueued() + this.#draw());
  }

  /** The terminal was resized: clear what the old lines now cover, draw again. */
  resized(): void {
    if (!this.#animate) return;
    this.#redraw();
  }

  dispose(): void {
    if (this.#animate) this.#write(this.#clear() + this.#takeQueued());
    this.#stop();
    this.#lines.clear();
  }

  #stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#animate) this.#out.write("\x1b[?25h");
  }

  #redraw(): void {
    this.#write(this.#clear() + this.#takeQueued() + this.#draw());
  }

  /** The text waiting for the next frame (taken: the caller writes it). */
  #takeQueued(): string {
    const queued = this.#queued;
    this.#queued = "";
    return queued;
  }

  /** A timer's redraw: nothing is written when the lines are what is on screen already. */
  #tick(): void {
    // The terminal may have been resized since Node last asked: its resize event comes on a later turn
    // of the loop (SIGWINCH), and a frame cleared at the old width leaves behind the rows the terminal
    // re-flowed the old lines into. Asked now, a changed size is handled first (its redraw is the frame).
    const columns = this.#out.columns;
    const rows = this.#out.rows;
    this.#out._refreshSize?.();
    if (this.#out.columns !== columns || this.#out.rows !== rows) return;
    if (this.#queued !== "") {
      this.#redraw();
      return;
    }
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

  /** What draws the region's lines (an entry that renders nothing takes no line; none while suspended). */
  #draw(): string {
    // Suspended for a question: a spinner's frame or a call that ends must not draw over it.
    if (this.#lines.size === 0 || this.#suspended) return "";
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
