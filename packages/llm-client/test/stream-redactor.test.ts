/**
 * The streaming redactor: a secret split over any number of pieces never
 * comes out, and text without secrets comes out unchanged, at most one
 * piece late.
 */
import { afterEach, describe, expect, it } from "vitest";
import { clearRegisteredSecrets, REDACTED, registerSecret } from "../src/redact.ts";
import { STREAM_HOLDBACK_LIMIT, StreamRedactor } from "../src/stream-redactor.ts";

afterEach(() => clearRegisteredSecrets());

/** Feeds `pieces`, returns what came out after each push, and the flush. */
function run(pieces: string[]): { outs: string[]; all: string } {
  const redactor = new StreamRedactor();
  const outs = pieces.map((p) => redactor.push(p));
  outs.push(redactor.flush());
  return { outs, all: outs.join("") };
}

function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Every way to cut `text` into `n` pieces at the given points. */
function splitsAt(text: string, points: number[]): string[] {
  const cuts = [0, ...points, text.length];
  return cuts.slice(1).map((end, i) => text.slice(cuts[i], end));
}

const SECRET = "gw-Token-9f8e7d6c5b";

describe("StreamRedactor", () => {
  it("never lets out a registered secret split into 2, 3 or many pieces", () => {
    registerSecret(SECRET);
    const text = `Your token is ${SECRET}, keep it safe.`;
    const start = text.indexOf(SECRET);
    const cases: string[][] = [];
    for (let a = start; a <= start + SECRET.length; a++) cases.push(splitsAt(text, [a]));
    for (let a = start; a <= start + SECRET.length; a += 3)
      for (let b = a; b <= start + SECRET.length; b += 2) cases.push(splitsAt(text, [a, b]));
    for (const size of [1, 2, 3, 5, 7]) cases.push(chunks(text, size));
    for (const pieces of cases) {
      const { outs, all } = run(pieces);
      expect(all, JSON.stringify(pieces)).toBe(`Your token is ${REDACTED}, keep it safe.`);
      // Not even a fragment of it in any one output longer than a coincidence.
      for (const out of outs) expect(out).not.toContain(SECRET.slice(0, 8));
    }
  });

  it("never lets out key-shaped strings split across pieces", () => {
    const texts = [
      "use sk-proj-abcdefghijklmnop now",
      "Authorization: Bearer abc.def.ghi.jkl done",
      "x-api-key: 0123456789abcdef ok",
      "see https://alice:pw-s3cr3t-77@proxy.example/v1 there",
      "GET http://h/v1?api-key=abcdef123456&x=1 fine",
      "gemini AIzaSyNotReallyAKey123 end",
    ];
    const secrets = [
      "proj-abcdefghijklmnop",
      "abc.def.ghi.jkl",
      "0123456789abcdef",
      "pw-s3cr3t-77",
      "abcdef123456",
      "SyNotReallyAKey123",
    ];
    for (const [i, text] of texts.entries()) {
      for (const size of [1, 2, 3, 4, 6]) {
        const { all } = run(chunks(text, size));
        expect(all, `${text} in pieces of ${size}`).not.toContain(secrets[i]);
        expect(all).toContain(REDACTED);
      }
    }
  });

  it("leaves text without secrets unchanged and holds back at most the unfinished word", () => {
    registerSecret(SECRET);
    const text = "The quick brown fox jumps over the lazy dog. It said: `a + b = c`, twice!\nDone.";
    for (const size of [1, 2, 5, 13, 1000]) {
      const redactor = new StreamRedactor();
      let shown = "";
      let given = "";
      for (const piece of chunks(text, size)) {
        given += piece;
        shown += redactor.push(piece);
        expect(given.startsWith(shown)).toBe(true);
        // What is held back is the tail of the last word (or a secret prefix), never earlier text.
        const held = given.slice(shown.length);
        expect(held.length).toBeLessThanOrEqual(SECRET.length - 1);
        if (/\s$/.test(given) && !/[A-Za-z]\s*$/.test(given.trimEnd().slice(-1))) expect(held).toBe("");
      }
      expect(shown + redactor.flush()).toBe(text);
    }
    // A piece that ends a word is shown at once.
    const redactor = new StreamRedactor();
    expect(redactor.push("Hello wor")).toBe("Hello ");
    expect(redactor.push("ld. ")).toBe("world. ");
    expect(redactor.pending).toBe(0);
  });

  it("bounds the holdback for a run of key characters and masks the whole key", () => {
    const key = `sk-${"a1".repeat(400)}`;
    const redactor = new StreamRedactor();
    let shown = "";
    for (const piece of chunks(`key ${key} end`, 7)) {
      shown += redactor.push(piece);
      expect(redactor.pending).toBeLessThanOrEqual(STREAM_HOLDBACK_LIMIT + 7);
    }
    shown += redactor.flush();
    expect(shown).not.toContain("a1a1");
    expect(shown.startsWith(`key ${REDACTED}`)).toBe(true);
    expect(shown.endsWith(" end")).toBe(true);
  });

  it("reset drops what is held back", () => {
    registerSecret(SECRET);
    const redactor = new StreamRedactor();
    expect(redactor.push(`x ${SECRET.slice(0, 5)}`)).toBe("x ");
    redactor.reset();
    expect(redactor.flush()).toBe("");
  });
});
