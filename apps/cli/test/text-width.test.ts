/**
 * text-width.ts measures common text itself and leaves the rest to
 * string-width, which it loads only then: the two must never disagree.
 */
import { stripVTControlCharacters } from "node:util";
import stringWidth from "string-width";
import { describe, expect, it } from "vitest";
import { createStyle } from "../src/style.ts";
import { fitLines, graphemes, truncate, visibleWidth, wrapWords } from "../src/text-width.ts";

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const clusters = (text: string) =>
  [...segmenter.segment(text)].map(({ segment, index }) => ({ segment, index }));

describe("text width", () => {
  it("agrees with string-width and Intl.Segmenter on every character up to U+2FFF, alone and beside others", () => {
    const wrong: string[] = [];
    for (let cp = 0x20; cp < 0x3000; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const ch = String.fromCodePoint(cp);
      for (const text of [ch, `a${ch}`, `${ch}a`, `${ch}${ch}`, `\x1b[1m${ch}\x1b[0m`]) {
        if (visibleWidth(text) !== stringWidth(text)) wrong.push(`width of ${JSON.stringify(text)}`);
        const ours = [...graphemes(text)];
        if (JSON.stringify(ours) !== JSON.stringify(clusters(text)))
          wrong.push(`clusters of ${JSON.stringify(text)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("measures wide, joined and combined text as string-width does", () => {
    for (const text of [
      "日本語のテスト",
      "👍🏽 thumbs",
      "👨‍👩‍👧 family",
      "cafe\u0301",
      "🇯🇵 flag",
      "a\u200bb",
      "\x1b]8;;https://example.com\x07link\x1b]8;;\x07",
      "tab\there",
    ]) {
      expect(visibleWidth(text), text).toBe(stringWidth(text));
      expect([...graphemes(text)], text).toEqual(clusters(text));
    }
  });

  it("truncates to a width without splitting a cluster, and keeps escapes that are not colours", () => {
    expect(truncate("hello world", 8)).toBe("hello w…");
    expect(truncate("日本語のテスト", 7)).toBe("日本語…");
    expect(truncate("\x1b[1mbold text here\x1b[0m", 6)).toBe("\x1b[1mbold …\x1b[0m");
    // A hyperlink (OSC 8) once made this loop for ever.
    const linked = "\x1b]8;;https://example.com\x07a long link text\x1b]8;;\x07 and more";
    expect(visibleWidth(truncate(linked, 10))).toBeLessThanOrEqual(10);
    expect(truncate("short", 10)).toBe("short");
    // Any CSI sequence counts 0 columns here as in visibleWidth, not only the common ones.
    expect(truncate("\x1b[200~pasted text here", 7)).toBe("\x1b[200~pasted…\x1b[0m");
  });
});

describe("wrapWords", () => {
  it("breaks at spaces, counts colour codes as nothing, and breaks or keeps a word wider than a line", () => {
    expect(wrapWords("one two three four", 9)).toEqual(["one two", "three", "four"]);
    expect(wrapWords("\x1b[2mone two\x1b[22m three", 7)).toEqual(["\x1b[2mone two\x1b[22m", "three"]);
    // Broken over lines, nothing lost.
    expect(wrapWords("a https://example.com/a/long/path b", 10)).toEqual([
      "a",
      "https://ex",
      "ample.com/",
      "a/long/pat",
      "h b",
    ]);
    expect(wrapWords("a https://example.com/a/long/path b", 10, { cut: false })).toEqual([
      "a",
      "https://example.com/a/long/path",
      "b",
    ]);
    expect(wrapWords("宽字符 wide", 6)).toEqual(["宽字符", "wide"]);
  });

  it("keeps every word whole: Latin, CJK between ideographs, emoji sequences, combining marks", () => {
    const text =
      "Résumé naïve façade — 日本語の文章を折り返します。 Family 👨‍👩‍👧 thumbs 👍🏽 flags 🇯🇵 e\u0301te\u0301 done";
    for (const width of [12, 17, 25, 40]) {
      const lines = wrapWords(text, width);
      for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
      // The words of the text, in order, each on one line.
      const words = lines.join(" ").split(/\s+/).join(" ");
      for (const word of ["Résumé", "naïve", "façade", "Family", "👨‍👩‍👧", "👍🏽", "🇯🇵", "e\u0301te\u0301"])
        expect(lines.some((l) => l.includes(word))).toBe(true);
      // The CJK run breaks only between ideographs: joined back it is whole.
      expect(lines.join("").replace(/\s/g, "")).toContain("日本語の文章を折り返します。");
      expect(words.replace(/\s/g, "")).toBe(text.replace(/\s/g, ""));
    }
    // A closing mark never starts a line.
    for (const line of wrapWords("これは長い文章です。とても長い。", 6))
      expect(line.startsWith("。")).toBe(false);
  });

  it("closes a style at each line's end and opens it again on the next line", () => {
    const lines = wrapWords("\x1b[1mbold words that wrap over lines\x1b[22m end", 10);
    expect(lines).toEqual([
      "\x1b[1mbold words\x1b[0m",
      "\x1b[1mthat wrap\x1b[0m",
      "\x1b[1mover lines\x1b[22m",
      "end",
    ]);
    // 256-colour foregrounds are carried whole.
    expect(wrapWords("\x1b[38;5;203mred text here\x1b[39m", 8)).toEqual([
      "\x1b[38;5;203mred text\x1b[0m",
      "\x1b[38;5;203mhere\x1b[39m",
    ]);
  });

  it("keeps a line's leading indent and its hard breaks, and drops the spaces where it breaks", () => {
    expect(wrapWords("  indented text that wraps", 12)).toEqual(["  indented", "text that", "wraps"]);
    expect(wrapWords("one\ntwo three", 5)).toEqual(["one", "two", "three"]);
    expect(wrapWords("a    b", 3)).toEqual(["a", "b"]);
    expect(wrapWords("", 10)).toEqual([""]);
  });
});

describe("fitLines", () => {
  it("wraps each line of a listing between words, its further rows two columns in from where it starts", () => {
    const style = createStyle(true);
    const lines = [
      `${style.bold("typescript")} not found · typescript-language-server · .ts .mts .cts .tsx`,
      `  ${style.dim("typescript-language-server was found neither in node_modules/.bin nor on PATH")}`,
    ];
    const rows = fitLines(lines, 40);
    for (const row of rows) expect(visibleWidth(row)).toBeLessThanOrEqual(40);
    const plain = rows.map((r) => stripVTControlCharacters(r));
    expect(plain[0]).toMatch(/^typescript not found/);
    expect(plain[1]).toMatch(/^ {2}\S/);
    const detail = plain.findIndex((r) => r.startsWith("  typescript-language-server was"));
    expect(plain[detail + 1]).toMatch(/^ {4}\S/);
    // Every word whole.
    expect(plain.join(" ").split(/\s+/).filter(Boolean)).toEqual(
      lines
        .map((l) => stripVTControlCharacters(l))
        .join(" ")
        .split(/\s+/)
        .filter(Boolean),
    );
    // Not a terminal: as given.
    expect(fitLines(lines, undefined)).toEqual(lines);
  });
});
