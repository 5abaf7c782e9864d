/**
 * Decodes what a terminal sends in raw mode into keys: printable text,
 * control keys, arrows and the like (CSI / SS3 sequences), Alt+key (ESC
 * prefix), Shift+Enter in the two encodings terminals use for it (CSI u and
 * xterm's modifyOtherKeys), and bracketed paste, which arrives as one
 * `paste` key holding everything between `ESC[200~` and `ESC[201~`, newlines
 * included. A lone ESC at the end of a chunk is the Escape key.
 */

/** One decoded key. `name` is a key name (`enter`, `up`, `a`) or `text` / `paste`. */
export interface Key {
  name: string;
  ctrl: boolean;
  meta: boolean;
  shift: boolean;
  /** The characters typed (`text`) or pasted (`paste`). */
  text: string;
}

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

/** Final bytes / numbers of CSI and SS3 sequences and the keys they mean. */
const CSI_LETTER: Record<string, string> = {
  A: "up",
  B: "down",
  C: "right",
  D: "left",
  H: "home",
  F: "end",
  Z: "tab",
};
const CSI_TILDE: Record<string, string> = {
  "1": "home",
  "2": "insert",
  "3": "delete",
  "4": "end",
  "5": "pageup",
  "6": "pagedown",
  "7": "home",
  "8": "end",
};
/** Key codes of CSI u / modifyOtherKeys. */
const CODEPOINT_KEY: Record<number, string> = { 13: "enter", 9: "tab", 27: "escape", 127: "backspace" };

function key(name: string, mods: Partial<Pick<Key, "ctrl" | "meta" | "shift">> = {}, text = ""): Key {
  return { name, ctrl: mods.ctrl ?? false, meta: mods.meta ?? false, shift: mods.shift ?? false, text };
}

/** xterm modifier parameter (1 + bits: shift 1, alt 2, ctrl 4). */
function modifiers(param: string | undefined): Pick<Key, "ctrl" | "meta" | "shift"> {
  const bits = Math.max(0, Number(param ?? "1") - 1);
  return { shift: (bits & 1) !== 0, meta: (bits & 2) !== 0, ctrl: (bits & 4) !== 0 };
}

/** A single character (no ESC prefix) as a key. */
function charKey(ch: string, meta: boolean): Key {
  const code = ch.codePointAt(0) ?? 0;
  if (ch === "\r") return key("enter", { meta });
  if (ch === "\n") return key("enter", { ctrl: true, meta });
  if (ch === "\t") return key("tab", { meta });
  if (ch === "\x7f" || ch === "\b") return key("backspace", { meta });
  if (code === 0) return key("space", { ctrl: true, meta });
  if (code < 0x20) return key(String.fromCharCode(code + 96), { ctrl: true, meta });
  return meta
    ? key(ch.toLowerCase(), { meta: true, shift: ch !== ch.toLowerCase() }, ch)
    : key("text", {}, ch);
}

/** A stateful decoder: feed it chunks as they arrive; a paste may span chunks. */
export class KeyDecoder {
  #paste: string | undefined;
  #pending = "";

  /** Decodes a chunk into keys (consecutive printable characters come as one `text` key). */
  feed(chunk: string): Key[] {
    const keys: Key[] = [];
    let input = this.#pending + chunk;
    this.#pending = "";
    const pushText = (text: string) => {
      const last = keys.at(-1);
      if (last?.name === "text") last.text += text;
      else keys.push(key("text", {}, text));
    };
    while (input.length > 0) {
      if (this.#paste !== undefined) {
        const end = input.indexOf(PASTE_END);
        if (end === -1) {
          // Keep a possible partial end marker for the next chunk.
          const keep = partialSuffix(input, PASTE_END);
          this.#paste += input.slice(0, input.length - keep);
          this.#pending = input.slice(input.length - keep);
          return keys;
        }
        this.#paste += input.slice(0, end);
        keys.push(key("paste", {}, this.#paste.replace(/\r\n?/g, "\n")));
        this.#paste = undefined;
        input = input.slice(end + PASTE_END.length);
        continue;
      }
      if (input.startsWith(PASTE_START)) {
        this.#paste = "";
        input = input.slice(PASTE_START.length);
        continue;
      }
      const ch = input[0] ?? "";
      if (ch !== "\x1b") {
        const cp = String.fromCodePoint(input.codePointAt(0) ?? 0);
        const k = charKey(cp, false);
        if (k.name === "text") pushText(cp);
        else keys.push(k);
        input = input.slice(cp.length);
        continue;
      }
      // ESC: a sequence, Alt+key, or the Escape key itself.
      if (input.length === 1) {
        keys.push(key("escape"));
        input = "";
        continue;
      }
      const csi = /^\x1b\[([0-9;?]*)([A-Za-z~])/.exec(input);
      if (csi) {
        keys.push(this.#csi(csi[1] ?? "", csi[2] ?? ""));
        input = input.slice(csi[0].length);
        continue;
      }
      if (/^\x1b\[[0-9;?]*$/.test(input) || input === "\x1bO") {
        // An unfinished sequence at the end of a chunk: wait for the rest.
        this.#pending = input;
        return keys;
      }
      const ss3 = /^\x1bO([A-Za-z])/.exec(input);
      if (ss3) {
        keys.push(key(CSI_LETTER[ss3[1] ?? ""] ?? "unknown"));
        input = input.slice(3);
        continue;
      }
      if (input[1] === "\x1b") {
        keys.push(key("escape"));
        input = input.slice(1);
        continue;
      }
      const next = String.fromCodePoint(input.codePointAt(1) ?? 0);
      keys.push(charKey(next, true));
      input = input.slice(1 + next.length);
    }
    return keys;
  }

  #csi(params: string, final: string): Key {
    const parts = params.split(";");
    if (final === "~") {
      // xterm modifyOtherKeys: ESC [ 27 ; mod ; code ~
      if (parts[0] === "27" && parts.length === 3) {
        const mods = modifiers(parts[1]);
        const code = Number(parts[2]);
        return key(CODEPOINT_KEY[code] ?? String.fromCodePoint(code), mods);
      }
      return key(CSI_TILDE[parts[0] ?? ""] ?? "unknown", modifiers(parts[1]));
    }
    if (final === "u") {
      // CSI u (fixterms / kitty): ESC [ code ; mod u
      const code = Number(parts[0]);
      return key(CODEPOINT_KEY[code] ?? String.fromCodePoint(code), modifiers(parts[1]));
    }
    if (final === "Z") return key("tab", { shift: true });
    const name = CSI_LETTER[final];
    return name === undefined ? key("unknown") : key(name, modifiers(parts[1]));
  }
}

/** Length of the longest suffix of `text` that is a proper prefix of `marker`. */
function partialSuffix(text: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) {
    if (marker.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}
