import { describe, expect, it } from "vitest";
import { createStyle } from "../src/style.ts";
import { guardStyled, jsonLine, sanitize, sanitizeDeep, sanitizeLine } from "../src/terminal-text.ts";

/** Every control a terminal acts on, as the escape classes an attacker would use. */
const ATTACKS = {
  "clear screen (CSI 2J)": "\x1b[2J",
  "cursor up and erase line": "\x1b[2K\r\x1b[1A\x1b[2K\r",
  "OSC 52 clipboard": "\x1b]52;c;Y3VybCBldmlsfHNo\x07",
  "OSC 8 link": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
  "OSC 0 title": "\x1b]0;owned\x07",
  "C1 CSI": "\u009b2J",
  "DCS passthrough": "\x1bPtmux;\x1b\x1b]52;c;eA==\x07\x1b\\",
  "SGR conceal": "\x1b[8mhidden\x1b[0m",
  backspace: "abc\b\b\b",
  "bidi override": "\u202eevil",
};

describe("sanitize", () => {
  it("leaves ordinary text, newlines and tabs as they are", () => {
    const text = "plain text\n\tindented · ünïcödé 漢字 🙂\n";
    expect(sanitize(text)).toBe(text);
  });

  it.each(Object.entries(ATTACKS))("leaves nothing a terminal would act on: %s", (_name, attack) => {
    const shown = sanitize(`before ${attack} after`);
    expect(shown).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
    expect(shown.startsWith("before ")).toBe(true);
    expect(shown.endsWith(" after")).toBe(true);
  });

  it("shows controls as their pictures, C1 as the escape it stands for, bidi controls by code", () => {
    expect(sanitize("\x1b[2J")).toBe("␛[2J");
    expect(sanitize("a\rb")).toBe("a␍b");
    expect(sanitize("\x07\x00\x7f")).toBe("␇␀␡");
    expect(sanitize("\u009b2J")).toBe("␛[2J");
    expect(sanitize("\u202eabc")).toBe("⟨U+202E⟩abc");
  });

  it("drops the carriage return of a CRLF line end", () => {
    expect(sanitize("one\r\ntwo\r\n")).toBe("one\ntwo\n");
  });

  it("gives the same text whether a stream is sanitised in pieces or whole", () => {
    const whole = `x${ATTACKS["OSC 52 clipboard"]}y${ATTACKS["cursor up and erase line"]}z`;
    for (let cut = 0; cut <= whole.length; cut++) {
      // A lone CR at the end of a piece is shown, as it would be had nothing followed it.
      if (whole[cut - 1] === "\r" && whole[cut] === "\n") continue;
      expect(sanitize(whole.slice(0, cut)) + sanitize(whole.slice(cut))).toBe(sanitize(whole));
    }
  });

  it("one-line form: newlines and tabs become spaces", () => {
    expect(sanitizeLine("a\n  b\tc\x1b[2J")).toBe("a b c␛[2J");
  });
});

describe("sanitizeDeep", () => {
  it("sanitises every string of plain objects and arrays, sharing what needed nothing", () => {
    const clean = { keep: "ok" };
    const signal = new AbortController().signal;
    const value = { text: "\x1b[2J", list: ["a", "\x07"], clean, signal, n: 3 };
    const out = sanitizeDeep(value);
    expect(out).toEqual({ text: "␛[2J", list: ["a", "␇"], clean, signal, n: 3 });
    expect(out.clean).toBe(clean);
    expect(out.signal).toBe(signal);
    expect(value.text).toBe("\x1b[2J");
    expect(sanitizeDeep(clean)).toBe(clean);
  });
});

describe("guardStyled", () => {
  it("keeps yoi's own styling and shows every other escape", () => {
    const style = createStyle(true);
    const styled = `${style.red("error")} ${style.dim(`x${"\x1b]52;c;eA==\x07"}y`)}`;
    const out = guardStyled(styled);
    expect(out).toContain(style.red("error"));
    expect(out).toContain("␛]52;c;eA==␇");
    expect(out.replace(/\x1b\[[0-9;]*m/g, "")).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  });

  it("shows between and next to styling what sanitize shows, and keeps the erase to the line's end", () => {
    expect(guardStyled("a\r\nb\x1b[1mc\x1b[22m")).toBe("a\nb\x1b[1mc\x1b[22m");
    // A carriage return cut from its newline by an escape is one alone.
    expect(guardStyled("a\r\x1b[0m\n")).toBe("a␍\x1b[0m\n");
    expect(guardStyled("\x1b[2J\x1b[31mred\x1b[39m\x1b[K\x1b")).toBe("␛[2J\x1b[31mred\x1b[39m\x1b[K␛");
    expect(guardStyled("\x9b2J \u202eevil\x1b[0m\x7f")).toBe("␛[2J ⟨U+202E⟩evil\x1b[0m␡");
    expect(guardStyled("tab\tnew\nline")).toBe("tab\tnew\nline");
  });
});

describe("jsonLine", () => {
  it("is the same JSON value with DEL, C1 and bidi controls escaped", () => {
    const value = { text: `a\x1b[2Jb\u009bc\x7f\u202ed` };
    const line = jsonLine(value);
    expect(JSON.parse(line)).toEqual(value);
    expect(line).not.toMatch(/[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
  });
});
