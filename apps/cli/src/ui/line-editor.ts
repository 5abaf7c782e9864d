/**
 * The prompt's line editor: raw keys in (see keys.ts), a multi-line input
 * drawn at the bottom of the output. Bracketed paste arrives whole (newlines
 * kept); Shift+Enter, Alt+Enter, Ctrl-J and a trailing `\` insert a newline;
 * Up/Down walk the lines, then the history; Ctrl-R searches the history;
 * Tab completes through a callback. A menu of suggestions (slash commands,
 * files for `@`) opens under the input as you type; Up/Down choose in it,
 * Tab or Enter take the choice, Esc closes it. A paste of many lines shows
 * as one `[Pasted text #N +L lines]` unit and is sent whole. Vim keys are
 * an option (vim.ts). A status line can be shown under the input. The same
 * editor asks single-key questions (`choose`) and one-line ones (`ask`) for
 * permission prompts.
 *
 * While the session is busy the editor is hidden but still takes keys, so
 * what is typed ahead is kept (and Enter hands it over to be queued).
 */
import type { Style } from "../style.ts";
import { guardStyled, sanitize } from "../terminal-text.ts";
import { graphemes, truncate, visibleWidth, wrapWords } from "../text-width.ts";
import type { Completion } from "./completer.ts";
import { EditBuffer } from "./edit-buffer.ts";
import { type Key, KeyDecoder } from "./keys.ts";
import type { PromptHistory } from "./prompt-history.ts";
import { VimKeys } from "./vim.ts";

export interface EditorInput {
  on(event: "data", listener: (chunk: Buffer | string) => void): unknown;
  off(event: "data", listener: (chunk: Buffer | string) => void): unknown;
  setRawMode?(mode: boolean): unknown;
  isTTY?: boolean;
  resume(): unknown;
  pause(): unknown;
}

export interface EditorOutput {
  write(text: string): unknown;
  columns?: number;
  rows?: number;
}

export interface LineEditorOptions {
  input: EditorInput;
  output: EditorOutput;
  style: Style;
  history?: PromptHistory | undefined;
  /** Tab completion for the text before the cursor. */
  complete?: (line: string) => Promise<Completion>;
  /** Told the input's text when it changes while the editor is hidden (typing ahead during a turn). */
  onHiddenEdit?: (text: string) => void;
  /** Suggestions for the text as typed (the cursor at `cursor`), shown as a menu under the input. */
  suggest?: (text: string, cursor: number) => Promise<Menu | undefined>;
  /** A paste of more lines than this is shown collapsed. Default 10. */
  pasteCollapseLines?: number;
  /** Vim keys from the start. */
  vim?: boolean;
  /** Told when the vim mode changes (or vim keys are turned on or off). */
  onVimMode?: () => void;
}

/** One entry of the suggestion menu. */
export interface MenuItem {
  /** What replaces the text from the menu's `from` to the cursor. */
  value: string;
  /** What the menu shows (plain text). */
  label: string;
  /** A dim description after the label. */
  detail?: string;
  /** Enter on it sends the input at once (a slash command without arguments). */
  run?: boolean;
}

/** Suggestions for the token that starts at `from` and ends at the cursor. */
export interface Menu {
  from: number;
  items: readonly MenuItem[];
  /**
   * Enter takes the highlighted item even before Up/Down chose one (the `/`
   * menu). Otherwise Enter sends the input as typed until an item is chosen.
   */
  enterTakes?: boolean;
}

/** Rows of the suggestion menu shown at once. */
const MENU_ROWS = 8;

/** Handlers the session sets. */
export interface LineEditorHandlers {
  /** Enter on the input (the text as typed, newlines kept). */
  submit(text: string): void;
  /** Ctrl-C (outside a question). */
  interrupt(): void;
  /** Esc (outside a question and a search). */
  escape(): void;
  /** Ctrl-D on an empty input. */
  eof(): void;
}

type Mode =
  | { kind: "edit" }
  | { kind: "search"; query: string; match: number; saved: string }
  | { kind: "choose"; prompt: string; pick: (key: Key) => boolean; wasVisible: boolean }
  | {
      kind: "pick";
      title: string;
      items: readonly string[];
      filter: string;
      index: number;
      done: (index: number | undefined) => void;
      wasVisible: boolean;
    }
  | {
      kind: "ask";
      prompt: string;
      buffer: EditBuffer;
      done: (text: string | undefined) => void;
      wasVisible: boolean;
    };

/** How a key is named for `bind`: `shift+tab`, `ctrl+o`, `meta+enter`. */
export function keyId(key: Key): string {
  return `${key.ctrl ? "ctrl+" : ""}${key.meta ? "meta+" : ""}${key.shift ? "shift+" : ""}${key.name}`;
}

export class LineEditor {
  readonly #o: LineEditorOptions;
  readonly #decoder = new KeyDecoder();
  readonly #buffer = new EditBuffer();
  readonly #bindings = new Map<string, () => void>();
  #handlers: LineEditorHandlers | undefined;
  #mode: Mode = { kind: "edit" };
  #prompt = "› ";
  #visible = false;
  /** Rows drawn now, and the row of the cursor within them. */
  #drawnRows = 0;
  #cursorRow = 0;
  /** Lines shown under the input until the next key (completion candidates). */
  #hint: string[] = [];
  /** Position in the history while walking it (entries.length: the draft). */
  #historyPos = -1;
  #draft = "";
  /** The suggestion menu on screen, and the text it was dismissed for (Esc) so it stays closed. */
  #menu: (Menu & { index: number; moved: boolean }) | undefined;
  #menuDismissed: string | undefined;
  #menuRequest = 0;
  /** Collapsed pastes: placeholder text → what was pasted. */
  readonly #pastes = new Map<string, string>();
  #pasteCount = 0;
  /** Prompts sent with collapsed pastes (by the text sent): how they were typed, for the history. */
  readonly #sentWithPastes = new Map<string, { raw: string; pastes: [string, string][] }>();
  #vim: VimKeys | undefined;
  /** The status line under the input (styled text, one row). */
  #status: string | undefined;
  readonly #onData = (chunk: Buffer | string) => {
    for (const key of this.#decoder.feed(chunk.toString())) this.#key(key);
  };

  constructor(options: LineEditorOptions) {
    this.#o = options;
    if (options.vim) this.#vim = new VimKeys();
  }

  /** Whether vim keys are on. */
  get vim(): boolean {
    return this.#vim !== undefined;
  }

  set vim(on: boolean) {
    if (on === this.vim) return;
    this.#vim = on ? new VimKeys() : undefined;
    if (this.#visible) this.#render();
    this.#o.onVimMode?.();
  }

  /** The vim mode, when vim keys are on. */
  get vimMode(): "normal" | "insert" | undefined {
    return this.#vim?.mode;
  }

  /** A line shown under the input (undefined: none). */
  set status(line: string | undefined) {
    if (line === this.#status) return;
    this.#status = line;
    if (this.#visible && this.#mode.kind === "edit") this.#render();
  }

  /** Takes the keyboard: raw mode, bracketed paste on. */
  start(handlers: LineEditorHandlers): void {
    this.#handlers = handlers;
    this.#o.input.setRawMode?.(true);
    this.#o.input.on("data", this.#onData);
    this.#o.input.resume();
    this.#o.output.write("\x1b[?2004h");
  }

  /** Gives the keyboard back (bracketed paste off, cooked mode). */
  stop(): void {
    this.hide();
    this.#o.input.off("data", this.#onData);
    this.#o.output.write("\x1b[?2004l");
    this.#o.input.setRawMode?.(false);
    this.#o.input.pause();
  }

  /** Runs `handler` for a key (`shift+tab`, `ctrl+o`) instead of its editing meaning. */
  bind(id: string, handler: () => void): void {
    this.#bindings.set(id, handler);
  }

  set prompt(value: string) {
    this.#prompt = value;
    if (this.#visible) this.#render();
  }

  get text(): string {
    return this.#buffer.text;
  }

  /** Replaces the input (e.g. to hand queued lines back for editing). */
  set text(value: string) {
    this.#buffer.set(value);
    this.#historyPos = -1;
    this.#menu = undefined;
    this.#vim?.clearUndo();
    if (this.#visible) this.#render();
  }

  /** The input with collapsed pastes put back whole: what is sent. */
  expand(text: string): string {
    let out = text;
    for (const [placeholder, pasted] of this.#pastes) out = out.split(placeholder).join(pasted);
    return out;
  }

  get visible(): boolean {
    return this.#visible;
  }

  /** Draws the input (ready for typing). */
  show(): void {
    this.#visible = true;
    this.#render();
  }

  /** Clears the input from the screen; keys are still taken. */
  hide(): void {
    this.#clear();
    this.#visible = false;
  }

  /** Writes permanent output above the input. */
  print(text: string): void {
    if (!this.#visible) {
      this.#o.output.write(text);
      return;
    }
    this.#clear();
    this.#o.output.write(text.endsWith("\n") ? text : `${text}\n`);
    this.#render();
  }

  /** Redraws after a resize. */
  resized(): void {
    if (this.#visible) this.#render();
  }

  /**
   * A single-key question: `pick` is told every key and returns true once
   * one answers it. The prompt line is cleared afterwards.
   */
  choose(prompt: string, pick: (key: Key) => boolean): void {
    this.#mode = { kind: "choose", prompt, pick, wasVisible: this.#visible };
    this.#visible = true;
    this.#render();
  }

  /** A one-line question; resolves with the text, or undefined on Esc / Ctrl-C. */
  ask(prompt: string): Promise<string | undefined> {
    return new Promise((resolve) => {
      this.#mode = {
        kind: "ask",
        prompt,
        buffer: new EditBuffer(),
        done: resolve,
        wasVisible: this.#visible,
      };
      this.#visible = true;
      this.#render();
    });
  }

  /**
   * A list to pick from: Up/Down move, typing filters, Enter picks, Esc
   * leaves. Resolves with the index in `items`, or undefined.
   */
  pick(title: string, items: readonly string[], initial = 0): Promise<number | undefined> {
    return new Promise((resolve) => {
      this.#mode = {
        kind: "pick",
        title,
        items,
        filter: "",
        index: initial,
        done: resolve,
        wasVisible: this.#visible,
      };
      this.#visible = true;
      this.#render();
    });
  }

  /** Ends a `choose` / `ask` in progress from outside (the run was cancelled). */
  dismiss(): void {
    const mode = this.#mode;
    if (mode.kind !== "choose" && mode.kind !== "ask" && mode.kind !== "pick") return;
    this.#clear();
    this.#mode = { kind: "edit" };
    this.#visible = mode.wasVisible;
    if (mode.kind !== "choose") mode.done(undefined);
    if (this.#visible) this.#render();
  }

  #key(key: Key): void {
    const mode = this.#mode;
    if (mode.kind === "choose") {
      // The question is off the screen while its answer is handled (the answer prints above it).
      this.#clear();
      this.#visible = false;
      if (mode.pick(key)) {
        if (this.#mode === mode) {
          this.#mode = { kind: "edit" };
          this.#visible = mode.wasVisible;
          if (this.#visible) this.#render();
        }
      } else if (this.#mode === mode) {
        this.#visible = true;
        this.#render();
      }
      return;
    }
    if (mode.kind === "ask") {
      this.#askKey(mode, key);
      return;
    }
    if (mode.kind === "pick") {
      this.#pickKey(mode, key);
      return;
    }
    if (mode.kind === "search") {
      this.#searchKey(mode, key);
      return;
    }
    const hadHint = this.#hint.length > 0;
    this.#hint = [];
    if (this.#menu !== undefined && this.#visible && this.#vim?.mode !== "normal" && this.#menuKey(key))
      return;
    const bound = this.#bindings.get(keyId(key));
    if (bound) {
      bound();
      return;
    }
    const before = this.#buffer.text;
    const cursorBefore = this.#buffer.cursor;
    if (this.#vim !== undefined && this.#visible) {
      const modeBefore = this.#vim.mode;
      const outcome = this.#vim.handle(key, this.#buffer);
      if (outcome.handled) {
        if (outcome.submit) {
          this.#onEnter();
          return;
        }
        if (outcome.history !== undefined) this.#walkHistory(outcome.history);
        if (this.#vim.mode !== modeBefore) {
          this.#menu = undefined;
          this.#o.onVimMode?.();
        }
        this.#render();
        if (this.#vim.mode === "insert" && this.#buffer.text !== before) this.#refreshMenu();
        return;
      }
    }
    if (!this.#edit(this.#buffer, key, true)) {
      if (key.name === "enter" && !key.shift && !key.meta && !key.ctrl) this.#onEnter();
      else if (hadHint && this.#visible) this.#render();
    } else if (this.#visible) {
      this.#render();
      if (this.#buffer.text !== before || this.#buffer.cursor !== cursorBefore) this.#refreshMenu();
    }
    if (!this.#visible && this.#mode.kind === "edit" && this.#buffer.text !== before) {
      this.#o.onHiddenEdit?.(this.#buffer.text);
    }
  }

  /** A key while the menu is open: returns true when the menu took it. */
  #menuKey(key: Key): boolean {
    const menu = this.#menu;
    if (menu === undefined) return false;
    const plain = !key.ctrl && !key.meta && !key.shift;
    if ((key.name === "up" && plain) || (key.ctrl && key.name === "p")) {
      menu.index = (menu.index - 1 + menu.items.length) % menu.items.length;
      menu.moved = true;
    } else if ((key.name === "down" && plain) || (key.ctrl && key.name === "n")) {
      menu.index = (menu.index + 1) % menu.items.length;
      menu.moved = true;
    } else if ((key.name === "tab" || key.name === "enter") && plain) {
      const item = menu.items[menu.index];
      const token = this.#buffer.text.slice(menu.from, this.#buffer.cursor);
      // Enter sends the input as typed unless an item was chosen (or the menu takes Enter), or it is typed already.
      if (key.name === "enter" && (!(menu.enterTakes || menu.moved) || item?.value.trimEnd() === token)) {
        this.#menu = undefined;
        return false;
      }
      this.#menu = undefined;
      if (item === undefined) return false;
      this.#buffer.splice(menu.from, this.#buffer.cursor, item.value);
      if (key.name === "enter" && item.run) {
        this.#onEnter();
        return true;
      }
      this.#refreshMenu();
    } else if (key.name === "escape" && plain) {
      this.#menu = undefined;
      this.#menuDismissed = this.#buffer.text;
      // In vim's insert mode Esc also goes to normal mode, as it does from vim's own popup menu.
      if (this.#vim?.mode === "insert") return false;
    } else {
      return false;
    }
    this.#render();
    return true;
  }

  /** Asks for suggestions for the input as it is now; a newer request wins. */
  #refreshMenu(): void {
    const suggest = this.#o.suggest;
    if (suggest === undefined) return;
    const text = this.#buffer.text;
    const cursor = this.#buffer.cursor;
    const request = ++this.#menuRequest;
    if (this.#menuDismissed !== undefined && this.#menuDismissed !== text) this.#menuDismissed = undefined;
    suggest(text, cursor).then(
      (menu) => {
        if (request !== this.#menuRequest || this.#mode.kind !== "edit") return;
        if (this.#buffer.text !== text || this.#buffer.cursor !== cursor) return;
        // A menu offering only what is typed already has nothing to add.
        const token = menu === undefined ? "" : text.slice(menu.from, cursor);
        const useful =
          menu !== undefined &&
          menu.items.length > 0 &&
          !(menu.items.length === 1 && menu.items[0]?.value === token);
        const shown =
          useful && this.#menuDismissed !== text ? { ...menu, index: 0, moved: false } : undefined;
        if (shown === undefined && this.#menu === undefined) return;
        this.#menu = shown;
        if (this.#visible) this.#render();
      },
      () => {},
    );
  }

  /** A paste: more lines than the limit become one placeholder, expanded when the input is sent. */
  #pasted(text: string): string {
    const lines = text.replace(/\n$/, "").split("\n").length;
    if (lines <= (this.#o.pasteCollapseLines ?? 10)) return text;
    this.#pasteCount += 1;
    const placeholder = `[Pasted text #${this.#pasteCount} +${lines} lines]`;
    this.#pastes.set(placeholder, text);
    this.#buffer.atoms = [...this.#pastes.keys()];
    return placeholder;
  }

  /** Applies an editing key to `buffer`; returns false for keys it does not handle. */
  #edit(buffer: EditBuffer, key: Key, main: boolean): boolean {
    const h = this.#handlers;
    if (key.name === "paste" && main) {
      buffer.insert(this.#pasted(key.text));
      return true;
    }
    if (key.name === "text" || key.name === "paste") {
      buffer.insert(key.text);
      return true;
    }
    if (key.ctrl && !key.meta) {
      switch (key.name) {
        case "a":
          buffer.home();
          return true;
        case "e":
          buffer.end();
          return true;
        case "b":
          buffer.left();
          return true;
        case "f":
          buffer.right();
          return true;
        case "u":
          buffer.killToStart();
          return true;
        case "k":
          buffer.killToEnd();
          return true;
        case "w":
        case "backspace":
          buffer.deleteWordLeft();
          return true;
        case "h":
          buffer.backspace();
          return true;
        case "left":
          buffer.wordLeft();
          return true;
        case "right":
          buffer.wordRight();
          return true;
        case "l":
          this.#o.output.write("\x1b[2J\x1b[H");
          this.#drawnRows = 0;
          this.#cursorRow = 0;
          return true;
        default:
          break;
      }
    }
    if (key.meta && !key.ctrl) {
      switch (key.name) {
        case "b":
        case "left":
          buffer.wordLeft();
          return true;
        case "f":
        case "right":
          buffer.wordRight();
          return true;
        case "backspace":
          buffer.deleteWordLeft();
          return true;
        default:
          break;
      }
    }
    switch (key.name) {
      case "enter":
        if (key.shift || key.meta || key.ctrl) {
          buffer.insert("\n");
          return true;
        }
        if (buffer.cursor === buffer.text.length && buffer.text.endsWith("\\")) {
          buffer.backspace();
          buffer.insert("\n");
          return true;
        }
        return false;
      case "backspace":
        buffer.backspace();
        return true;
      case "delete":
        buffer.deleteForward();
        return true;
      case "left":
        buffer.left();
        return true;
      case "right":
        buffer.right();
        return true;
      case "home":
        buffer.home();
        return true;
      case "end":
        buffer.end();
        return true;
      default:
        break;
    }
    if (!main || h === undefined) return false;
    // Keys only the main input has.
    if (key.name === "enter") return false;
    if (key.ctrl && key.name === "c") {
      h.interrupt();
      return false;
    }
    if (key.ctrl && key.name === "d") {
      if (buffer.text === "") h.eof();
      else buffer.deleteForward();
      return true;
    }
    if (key.ctrl && key.name === "r") {
      this.#mode = { kind: "search", query: "", match: -1, saved: buffer.text };
      return true;
    }
    if ((key.name === "up" && !key.ctrl) || (key.ctrl && key.name === "p")) {
      if (!buffer.onFirstLine) buffer.lineUp();
      else this.#walkHistory(-1);
      return true;
    }
    if ((key.name === "down" && !key.ctrl) || (key.ctrl && key.name === "n")) {
      if (!buffer.onLastLine) buffer.lineDown();
      else this.#walkHistory(1);
      return true;
    }
    if (key.name === "escape") {
      h.escape();
      return true;
    }
    if (key.name === "tab" && !key.shift) {
      void this.#complete();
      return false;
    }
    return false;
  }

  /** Enter on the main input: the text is shown as sent, recorded, and handed over. */
  #onEnter(): void {
    const text = this.expand(this.#buffer.text);
    this.#o.history?.add(text);
    this.#historyPos = -1;
    this.#menu = undefined;
    this.#menuDismissed = undefined;
    if (this.#visible) {
      this.#render({ final: true });
      this.#o.output.write("\r\n");
      this.#drawnRows = 0;
      this.#cursorRow = 0;
      this.#visible = false;
    }
    if (this.#pastes.size > 0)
      this.#sentWithPastes.set(text, { raw: this.#buffer.text, pastes: [...this.#pastes] });
    this.#buffer.set("");
    this.#pastes.clear();
    this.#buffer.atoms = [];
    this.#vim?.reset();
    this.#vim?.clearUndo();
    this.#handlers?.submit(text);
  }

  #walkHistory(step: number): void {
    const entries = this.#o.history?.entries ?? [];
    if (entries.length === 0) return;
    if (this.#historyPos === -1) {
      this.#historyPos = entries.length;
      this.#draft = this.#buffer.text;
    }
    const next = Math.max(0, Math.min(entries.length, this.#historyPos + step));
    if (next === this.#historyPos) return;
    this.#historyPos = next;
    const entry = next === entries.length ? this.#draft : (entries[next] ?? "");
    // A prompt sent with collapsed pastes this session comes back collapsed, its pastes with it.
    const sent = this.#sentWithPastes.get(entry);
    if (sent !== undefined) {
      for (const [placeholder, pasted] of sent.pastes) this.#pastes.set(placeholder, pasted);
      this.#buffer.atoms = [...this.#pastes.keys()];
    }
    this.#buffer.set(sent?.raw ?? entry);
  }

  #searchKey(mode: Extract<Mode, { kind: "search" }>, key: Key): void {
    const entries = this.#o.history?.entries ?? [];
    const find = (query: string, from: number): number => {
      for (let i = Math.min(from, entries.length - 1); i >= 0; i--) {
        if ((entries[i] ?? "").includes(query)) return i;
      }
      return -1;
    };
    if (key.name === "text" || key.name === "paste") {
      mode.query += key.text;
      mode.match = find(mode.query, mode.match === -1 ? entries.length - 1 : mode.match);
    } else if (key.ctrl && key.name === "r") {
      const older = find(mode.query, (mode.match === -1 ? entries.length : mode.match) - 1);
      if (older !== -1) mode.match = older;
    } else if (key.name === "backspace") {
      mode.query = mode.query.slice(0, -1);
      mode.match = mode.query === "" ? -1 : find(mode.query, entries.length - 1);
    } else if (key.name === "escape" || (key.ctrl && (key.name === "g" || key.name === "c"))) {
      this.#buffer.set(mode.saved);
      this.#mode = { kind: "edit" };
    } else {
      // Any other key takes the match into the input, for editing or sending.
      this.#buffer.set(mode.match === -1 ? mode.saved : (entries[mode.match] ?? ""));
      this.#mode = { kind: "edit" };
    }
    if (this.#visible) this.#render();
  }

  #askKey(mode: Extract<Mode, { kind: "ask" }>, key: Key): void {
    const finish = (text: string | undefined) => {
      this.#clear();
      this.#mode = { kind: "edit" };
      this.#visible = mode.wasVisible;
      mode.done(text);
      if (this.#visible) this.#render();
    };
    if (key.name === "escape" || (key.ctrl && key.name === "c")) {
      finish(undefined);
      return;
    }
    if (key.name === "enter" && !key.shift && !key.meta && !key.ctrl) {
      finish(mode.buffer.text);
      return;
    }
    if (key.name === "paste") mode.buffer.insert(key.text.replace(/\n/g, " "));
    else this.#edit(mode.buffer, key, false);
    this.#render();
  }

  #pickKey(mode: Extract<Mode, { kind: "pick" }>, key: Key): void {
    const shown = pickable(mode);
    const at = Math.max(0, shown.indexOf(mode.index));
    const finish = (index: number | undefined) => {
      this.#clear();
      this.#mode = { kind: "edit" };
      this.#visible = mode.wasVisible;
      mode.done(index);
      if (this.#visible) this.#render();
    };
    if (key.name === "escape" || (key.ctrl && key.name === "c")) {
      finish(undefined);
      return;
    }
    if (key.name === "enter") {
      finish(shown.length > 0 ? shown[at] : undefined);
      return;
    }
    if (key.name === "up") mode.index = shown[Math.max(0, at - 1)] ?? mode.index;
    else if (key.name === "down") mode.index = shown[Math.min(shown.length - 1, at + 1)] ?? mode.index;
    else if (key.name === "text") {
      mode.filter += key.text;
      mode.index = pickable(mode)[0] ?? mode.index;
    } else if (key.name === "backspace") {
      mode.filter = mode.filter.slice(0, -1);
      mode.index = pickable(mode)[0] ?? mode.index;
    }
    this.#render();
  }

  async #complete(): Promise<void> {
    const complete = this.#o.complete;
    if (complete === undefined) return;
    const before = this.#buffer.text.slice(0, this.#buffer.cursor);
    const lineStart = before.lastIndexOf("\n") + 1;
    const line = before.slice(lineStart);
    let hits: string[];
    let token: string;
    try {
      [hits, token] = await complete(line);
    } catch {
      return;
    }
    // The input changed while the completion was computed: drop it.
    if (this.#buffer.text.slice(0, this.#buffer.cursor) !== before || this.#mode.kind !== "edit") return;
    if (hits.length === 0) return;
    const common = commonPrefix(hits);
    if (common.length > token.length) {
      // A menu opened for the text before the completion no longer fits it.
      this.#menu = undefined;
      this.#buffer.insert(common.slice(token.length));
    } else if (hits.length > 1) {
      this.#hint = hits.slice(0, 20).map((h) => this.#o.style.dim(`  ${h}`));
      if (hits.length > 20) this.#hint.push(this.#o.style.dim(`  … ${hits.length - 20} more`));
    }
    if (this.#visible) this.#render();
  }

  // ---- drawing ----

  #clear(): void {
    if (this.#drawnRows === 0) return;
    const up = this.#cursorRow > 0 ? `\x1b[${this.#cursorRow}A` : "";
    // Row by row (EL), not "to the end of the screen" (ED): drawn at the top-left, an ED clears the
    // whole screen, which tmux (scroll-on-clear) copies into the scrollback at every key.
    const rows = this.#drawnRows;
    const back = rows > 1 ? `\x1b[${rows - 1}A` : "";
    this.#o.output.write(`\r${up}${"\x1b[2K\x1b[1B".repeat(rows - 1)}\x1b[2K${back}`);
    this.#drawnRows = 0;
    this.#cursorRow = 0;
  }

  #render(options: { final?: boolean } = {}): void {
    if (!this.#visible) return;
    const s = this.#o.style;
    const cols = Math.max(10, this.#o.output.columns ?? 80);
    const mode = this.#mode;
    let layout: Layout;
    if (mode.kind === "pick") {
      const keys = "(↑↓ move · type to filter · Enter picks · Esc leaves)";
      // The keys go beside the title when both fit on a row, else on rows of their own below it, whole words each.
      const beside = visibleWidth(`${mode.title} ${keys} `) < cols;
      layout = lay(
        `${mode.title} ${beside ? `${s.dim(keys)} ` : ""}`,
        "",
        mode.filter,
        mode.filter.length,
        cols,
      );
      if (!beside) layout.rows.push(...wrapWords(keys, cols - 1).map((row) => s.dim(row)));
      const shown = pickable(mode);
      const at = Math.max(0, shown.indexOf(mode.index));
      const start = Math.max(0, Math.min(at - 4, shown.length - 10));
      for (const i of shown.slice(start, start + 10)) {
        // One row each: a row the terminal wraps would throw the redraw off.
        const item = truncate(sanitize(mode.items[i] ?? ""), cols - 2);
        layout.rows.push(i === mode.index ? s.cyan(`❯ ${item}`) : `  ${item}`);
      }
      if (shown.length === 0) layout.rows.push(s.dim("  (nothing matches)"));
    } else if (mode.kind === "choose") {
      layout = layAsked(guardStyled(mode.prompt), "", "", 0, cols);
    } else if (mode.kind === "ask") {
      layout = layAsked(guardStyled(mode.prompt), "  ", mode.buffer.text, mode.buffer.cursor, cols);
    } else if (mode.kind === "search") {
      const entries = this.#o.history?.entries ?? [];
      const failed = mode.query !== "" && mode.match === -1;
      const label = s.dim(`(${failed ? "failed " : ""}reverse-i-search) `) + `'${sanitize(mode.query)}': `;
      const found = mode.match === -1 ? "" : (entries[mode.match] ?? "");
      layout = lay(label, "  ", found, found.length, cols);
    } else {
      const vim = this.#vim === undefined ? "" : s.dim(this.#vim.mode === "normal" ? "NORMAL " : "INSERT ");
      layout = lay(vim + this.#prompt, "  ", this.#buffer.text, this.#buffer.cursor, cols);
    }
    let { rows, row, col } = layout;
    // Never taller than the screen: relative cursor moves stop at its top.
    const maxRows = Math.max(3, (this.#o.output.rows ?? 24) - 2);
    if (!options.final && rows.length > maxRows) {
      const start = Math.max(0, Math.min(row - maxRows + 1, rows.length - maxRows));
      const above = start;
      rows = rows.slice(start, start + maxRows);
      row -= start;
      if (above > 0 && row > 0) rows[0] = s.dim(`  ↑ ${above + 1} more row${above === 0 ? "" : "s"} above`);
    }
    const below: string[] = [];
    if (!options.final && mode.kind === "edit") {
      below.push(...(this.#menu === undefined ? this.#hint : menuRows(this.#menu, s, cols)));
      if (this.#status !== undefined) below.push(truncate(this.#status, cols));
    }
    const all = [...rows, ...below];
    this.#clear();
    let out = all.join("\r\n");
    const fromBottom = all.length - 1 - row;
    if (!options.final) {
      if (fromBottom > 0) out += `\x1b[${fromBottom}A`;
      out += `\r${col > 0 ? `\x1b[${col}C` : ""}`;
    }
    this.#o.output.write(out);
    this.#drawnRows = all.length;
    this.#cursorRow = options.final ? all.length - 1 : row;
  }
}

interface Layout {
  rows: string[];
  row: number;
  col: number;
}

/**
 * {@link lay} behind a question that may be wider than a row: the question
 * is word-wrapped, its last row followed by the answer, so that no word of
 * it is split at the edge of a narrow terminal.
 */
function layAsked(question: string, rest: string, text: string, cursor: number, cols: number): Layout {
  if (visibleWidth(question) < cols) return lay(question, rest, text, cursor, cols);
  const above = wrapWords(question, cols - 1);
  const last = above.pop() ?? "";
  const laid = lay(`${last}${/ +$/.exec(question)?.[0] ?? ""}`, rest, text, cursor, cols);
  return { rows: [...above, ...laid.rows], row: laid.row + above.length, col: laid.col };
}

/** Lays text out in rows of `cols` columns behind a prompt; finds where the cursor goes. */
function lay(first: string, rest: string, text: string, cursor: number, cols: number): Layout {
  const rows: string[] = [];
  let line = first;
  let width = visibleWidth(first);
  let row = 0;
  let col = width;
  let offset = 0;
  const lines = text.split("\n");
  lines.forEach((logical, i) => {
    if (i > 0) {
      rows.push(line);
      line = rest;
      width = visibleWidth(rest);
    }
    for (const { segment, index } of graphemes(logical)) {
      const shown = display(segment);
      const w = visibleWidth(shown);
      if (width + w > cols) {
        rows.push(line);
        line = "";
        width = 0;
      }
      if (offset + index === cursor) {
        row = rows.length;
        col = width;
      }
      line += shown;
      width += w;
    }
    if (offset + logical.length === cursor) {
      row = rows.length;
      col = width;
      if (width >= cols) {
        rows.push(line);
        line = "";
        width = 0;
        row = rows.length;
        col = 0;
      }
    }
    offset += logical.length + 1;
  });
  rows.push(line);
  return { rows, row, col };
}

/** How a grapheme is shown: tabs as spaces, control characters made visible (never sent raw to the terminal). */
function display(segment: string): string {
  return segment === "\t" ? "    " : sanitize(segment);
}

/** The menu's rows: a window of MENU_ROWS around the chosen item, each cut to the width. */
function menuRows(menu: Menu & { index: number }, s: Style, cols: number): string[] {
  const start = Math.max(0, Math.min(menu.index - MENU_ROWS + 1, menu.items.length - MENU_ROWS));
  const rows = menu.items.slice(start, start + MENU_ROWS).map((item, i) => {
    const chosen = start + i === menu.index;
    const label = truncate(sanitize(item.label), Math.max(8, cols - 4));
    const room = cols - 4 - visibleWidth(label) - 2;
    const detail = item.detail && room > 8 ? `  ${s.dim(truncate(sanitize(item.detail), room))}` : "";
    return chosen ? `${s.cyan(`❯ ${label}`)}${detail}` : `  ${label}${detail}`;
  });
  if (menu.items.length > MENU_ROWS) rows.push(s.dim(`  ${menu.index + 1}/${menu.items.length}`));
  return rows;
}

/** Indexes of the items the filter lets through: each of its words is in the item. */
function pickable(mode: { items: readonly string[]; filter: string }): number[] {
  const words = mode.filter
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== "");
  return mode.items.flatMap((item, i) => {
    const text = item.toLowerCase();
    return words.every((w) => text.includes(w)) ? [i] : [];
  });
}

function commonPrefix(words: readonly string[]): string {
  let prefix = words[0] ?? "";
  for (const w of words) while (!w.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}
