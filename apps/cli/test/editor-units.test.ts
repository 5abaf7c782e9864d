/** The prompt editor's vim keys, paste units, the `/` menu and the fuzzy file match, without a terminal. */
import { describe, expect, it } from "vitest";
import { EditBuffer } from "../src/ui/edit-buffer.ts";
import { fuzzyScore } from "../src/ui/file-finder.ts";
import type { Key } from "../src/ui/keys.ts";
import { notificationSequence, notifyMethod } from "../src/ui/notify.ts";
import { slashMenu } from "../src/ui/slash-commands.ts";
import { nextWordStart, prevWordStart, VimKeys, wordEnd } from "../src/ui/vim.ts";

const key = (name: string, text = ""): Key => ({ name, ctrl: false, meta: false, shift: false, text });

/** Types `keys` in normal mode (after Esc) on `text` with the cursor at `cursor`; returns text|cursor. */
function vim(text: string, cursor: number, keys: string): { text: string; cursor: number; mode: string } {
  const buffer = new EditBuffer();
  buffer.set(text, cursor);
  const v = new VimKeys();
  // Esc from insert mode moves one left; start the test from the given cursor instead.
  v.handle(key("escape"), buffer);
  buffer.moveTo(cursor);
  for (const ch of keys) {
    if (ch === "\x1b") v.handle(key("escape"), buffer);
    // Keys vim leaves alone are the editor's: in insert mode, text is inserted.
    else if (!v.handle(key("text", ch), buffer).handled) buffer.insert(ch);
  }
  return { text: buffer.text, cursor: buffer.cursor, mode: v.mode };
}

describe("vim keys", () => {
  it("word motions follow vim's word classes", () => {
    const t = "foo.bar baz  qux";
    expect(nextWordStart(t, 0)).toBe(3);
    expect(nextWordStart(t, 3)).toBe(4);
    expect(nextWordStart(t, 4)).toBe(8);
    expect(prevWordStart(t, 13)).toBe(8);
    expect(wordEnd(t, 0)).toBe(2);
    expect(wordEnd(t, 7)).toBe(10);
  });

  it("moves: h l 0 $ ^ w b e, with counts", () => {
    const t = "  one two three";
    expect(vim(t, 2, "w").cursor).toBe(6);
    expect(vim(t, 2, "2w").cursor).toBe(10);
    expect(vim(t, 14, "b").cursor).toBe(10);
    expect(vim(t, 2, "e").cursor).toBe(4);
    expect(vim(t, 6, "$").cursor).toBe(14);
    expect(vim(t, 6, "0").cursor).toBe(0);
    expect(vim(t, 10, "^").cursor).toBe(2);
    expect(vim(t, 6, "3l").cursor).toBe(9);
    expect(vim(t, 6, "10h").cursor).toBe(0);
    // l stops on the last character in normal mode.
    expect(vim(t, 13, "5l").cursor).toBe(14);
  });

  it("edits: x dd dw cw cc D C p u and counts", () => {
    expect(vim("hello world", 0, "x").text).toBe("ello world");
    expect(vim("hello world", 0, "3x").text).toBe("lo world");
    expect(vim("hello world", 0, "dw").text).toBe("world");
    expect(vim("one two three", 0, "d2w").text).toBe("three");
    expect(vim("one two three", 0, "2dw").text).toBe("three");
    expect(vim("hello world", 6, "dw").text).toBe("hello ");
    const cw = vim("hello world", 0, "cwbye");
    expect(cw).toEqual({ text: "bye world", cursor: 3, mode: "insert" });
    expect(vim("a\nb\nc", 2, "dd").text).toBe("a\nc");
    expect(vim("a\nb\nc", 4, "dd").text).toBe("a\nb");
    expect(vim("a\nb\nc", 0, "2dd").text).toBe("c");
    expect(vim("a\nbcd\ne", 3, "ccX").text).toBe("a\nX\ne");
    expect(vim("hello world", 5, "D").text).toBe("hello");
    expect(vim("hello world", 5, "Cy").text).toBe("helloy");
    expect(vim("hello world", 0, "dwP").text).toBe("hello world");
    expect(vim("ab", 0, "xp").text).toBe("ba");
    expect(vim("a\nb", 0, "ddp").text).toBe("b\na");
    expect(vim("hello world", 0, "dwxu").text).toBe("world");
    expect(vim("hello world", 0, "dwx2u").text).toBe("hello world");
  });

  it("finds with f F t T and repeats with ; and ,; gg and G; r and ~", () => {
    const t = "a.b.c.d";
    expect(vim(t, 0, "f.").cursor).toBe(1);
    expect(vim(t, 0, "2f.").cursor).toBe(3);
    expect(vim(t, 0, "f.;").cursor).toBe(3);
    expect(vim(t, 0, "f.;,").cursor).toBe(1);
    expect(vim(t, 0, "t.").cursor).toBe(0);
    expect(vim(t, 0, "t.;").cursor).toBe(2);
    expect(vim(t, 6, "F.").cursor).toBe(5);
    expect(vim(t, 6, "T.").cursor).toBe(6);
    expect(vim(t, 0, "fz").cursor).toBe(0);
    expect(vim(t, 0, "df.").text).toBe("b.c.d");
    expect(vim(t, 0, "dt.").text).toBe(".b.c.d");
    expect(vim(t, 0, "ct.X").text).toBe("X.b.c.d");
    expect(vim("one\ntwo\nthree", 5, "gg").cursor).toBe(0);
    expect(vim("one\ntwo\nthree", 1, "G").cursor).toBe(8);
    expect(vim("one\ntwo\nthree", 5, "dG").text).toBe("one");
    expect(vim("one\ntwo\nthree", 5, "dgg").text).toBe("three");
    expect(vim("abc", 0, "rx")).toMatchObject({ text: "xbc", cursor: 0 });
    expect(vim("abc", 0, "2rx")).toMatchObject({ text: "xxc", cursor: 1 });
    expect(vim("abc", 0, "5rx").text).toBe("abc");
    expect(vim("abC", 0, "3~").text).toBe("ABc");
  });

  it("enters insert mode with i a A I o O; Esc goes back one to the left", () => {
    expect(vim("abc", 1, "iX").text).toBe("aXbc");
    expect(vim("abc", 1, "aX").text).toBe("abXc");
    expect(vim("  abc", 3, "AX").text).toBe("  abcX");
    expect(vim("  abc", 4, "IX").text).toBe("  Xabc");
    expect(vim("a\nb", 0, "oX").text).toBe("a\nX\nb");
    expect(vim("a\nb", 2, "OX").text).toBe("a\nX\nb");
    expect(vim("abc", 0, "AX\x1b")).toMatchObject({ cursor: 3, mode: "normal" });
    // Esc and a key typed in one burst come as Alt+key: read as Esc, then the key.
    const buffer = new EditBuffer();
    buffer.set("one two");
    const v = new VimKeys();
    v.handle({ name: "b", ctrl: false, meta: true, shift: false, text: "b" }, buffer);
    expect({ cursor: buffer.cursor, mode: v.mode }).toEqual({ cursor: 4, mode: "normal" });
    // u undoes a whole insert.
    expect(vim("abc", 0, "Axyz\x1bu").text).toBe("abc");
  });

  it("j / k move between lines and hand over to the history at the ends", () => {
    const buffer = new EditBuffer();
    buffer.set("ab\ncd", 1);
    const v = new VimKeys();
    v.handle(key("escape"), buffer);
    buffer.moveTo(1);
    expect(v.handle(key("text", "k"), buffer)).toEqual({ handled: true, history: -1 });
    v.handle(key("text", "j"), buffer);
    expect(buffer.cursor).toBe(4);
    expect(v.handle(key("text", "j"), buffer)).toEqual({ handled: true, history: 1 });
    expect(v.handle(key("enter"), buffer)).toEqual({ handled: true, submit: true });
  });
});

describe("EditBuffer atoms (collapsed pastes)", () => {
  it("moves over and deletes an atom as one unit", () => {
    const b = new EditBuffer();
    const atom = "[Pasted text #1 +20 lines]";
    b.atoms = [atom];
    b.set(`see ${atom} ok`);
    b.moveTo(4 + atom.length);
    b.left();
    expect(b.cursor).toBe(4);
    b.right();
    expect(b.cursor).toBe(4 + atom.length);
    b.backspace();
    expect(b.text).toBe("see  ok");
    b.set(`${atom}!`, 0);
    b.deleteForward();
    expect(b.text).toBe("!");
  });
});

describe("the / menu", () => {
  const commands = [
    { name: "/help", summary: "this list" },
    { name: "/resume", args: "[id]", summary: "switch to another session" },
    { name: "/review", args: "[focus]", summary: "review (project)" },
    { name: "/clear", summary: "start over" },
  ];
  it("lists every command on /, filters by prefix then by substring", () => {
    expect(slashMenu("/", 1, commands)?.items.map((i) => i.label)).toEqual([
      "/help",
      "/resume [id]",
      "/review [focus]",
      "/clear",
    ]);
    const re = slashMenu("/re", 3, commands)?.items ?? [];
    expect(re.map((i) => i.value)).toEqual(["/resume ", "/review "]);
    // Optional arguments only: Enter runs it (the picker), Tab puts it in the input for an id.
    expect(re[0]).toMatchObject({ detail: "switch to another session", run: true });
    expect(slashMenu("/ea", 3, commands)?.items.map((i) => i.value)).toEqual(["/clear"]);
    expect(slashMenu("/help", 5, commands)?.items[0]).toMatchObject({ value: "/help", run: true });
  });
  it("runs on Enter only what needs no argument", () => {
    const needs = [
      { name: "/fix", args: "<issue>", summary: "fix an issue" },
      { name: "/pr", args: "number of the PR", summary: "a free-form hint" },
      { name: "/two", args: "[a] [b]", summary: "two optional" },
      { name: "/mixed", args: "<a> [b]", summary: "one required" },
    ];
    const run = (typed: string) => slashMenu(typed, typed.length, needs)?.items[0]?.run;
    expect([run("/fix"), run("/pr"), run("/two"), run("/mixed")]).toEqual([false, false, true, false]);
  });
  it("is not offered past the command word or mid-line", () => {
    expect(slashMenu("/help me", 8, commands)).toBeUndefined();
    expect(slashMenu("a /he", 5, commands)).toBeUndefined();
    expect(slashMenu("/he", 1, commands)).toBeUndefined();
  });
});

describe("fuzzyScore", () => {
  it("finds the letters in order and ranks names and whole matches first", () => {
    expect(fuzzyScore("math", "src/math.ts")).toBeDefined();
    expect(fuzzyScore("smt", "src/math.ts")).toBeDefined();
    expect(fuzzyScore("xyz", "src/math.ts")).toBeUndefined();
    const rank = (q: string, paths: string[]) =>
      paths
        .map((p) => ({ p, s: fuzzyScore(q, p) }))
        .filter((x) => x.s !== undefined)
        .sort((a, b) => (b.s ?? 0) - (a.s ?? 0))
        .map((x) => x.p);
    expect(rank("math", ["notes/mathematics/a.md", "lib/m-a-t-h.js", "src/math.ts"])[0]).toBe("src/math.ts");
    expect(rank("index", ["index-docs/readme.md", "src/index.ts"])[0]).toBe("src/index.ts");
  });
});

describe("notifyMethod", () => {
  const config = { enabled: true, longTurnSeconds: 30, method: "auto" as const };
  it("picks OSC 9, OSC 777 or the bell by terminal; the bell under tmux", () => {
    expect(notifyMethod(config, { TERM_PROGRAM: "WezTerm" }, true)).toBe("osc9");
    expect(notifyMethod(config, { TERM: "xterm-kitty" }, true)).toBe("osc9");
    expect(notifyMethod(config, { TERM: "rxvt-unicode-256color" }, true)).toBe("osc777");
    expect(notifyMethod(config, { TERM: "xterm-256color", VTE_VERSION: "7200" }, true)).toBe("osc777");
    expect(notifyMethod(config, { TERM: "xterm-256color" }, true)).toBe("bell");
    expect(notifyMethod(config, { TERM_PROGRAM: "iTerm.app", TMUX: "/tmp/tmux-0/default,1,0" }, true)).toBe(
      "bell",
    );
    expect(notifyMethod({ ...config, method: "osc777" }, { TERM: "xterm" }, true)).toBe("osc777");
  });
  it("is off when turned off, opted out, on a dumb terminal or without one", () => {
    expect(notifyMethod({ ...config, enabled: false }, { TERM_PROGRAM: "WezTerm" }, true)).toBeUndefined();
    expect(notifyMethod(config, { TERM_PROGRAM: "WezTerm", YOI_NO_NOTIFY: "1" }, true)).toBeUndefined();
    expect(notifyMethod(config, { TERM: "dumb" }, true)).toBeUndefined();
    expect(notifyMethod(config, { TERM_PROGRAM: "WezTerm" }, false)).toBeUndefined();
  });
  it("writes no control characters from the message into the sequence", () => {
    expect(notificationSequence("osc9", "yoi", "a\x1b]0;x\x07b")).toBe("\x1b]9;yoi: a ]0;x b\x07");
    expect(notificationSequence("osc777", "y;oi", "done")).toBe("\x1b]777;notify;y,oi;done\x07");
    expect(notificationSequence("bell", "yoi", "done")).toBe("\x07");
  });
});
