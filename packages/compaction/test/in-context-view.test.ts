import { describe, expect, it } from "vitest";
import { buildInContextView } from "../src/index.ts";

const ID = "0193a5b0-1c2d-7e3f-8a4b-5c6d7e8f9a0b";
const limits = { maxMessageBytes: 2048, maxLineLength: 100 };

describe("buildInContextView", () => {
  it("passes a small output through unchanged, with its size and line count", () => {
    const view = buildInContextView("a\nb\nc\n", ID, limits);
    expect(view).toEqual({ text: "a\nb\nc\n", truncated: false, lineCount: 3, byteSize: 6 });
  });

  it("cuts long lines at maxLineLength and says how many characters were left out", () => {
    const long = "y".repeat(250);
    const view = buildInContextView(`short\n${long}\nend`, ID, limits);
    expect(view.truncated).toBe(true);
    const lines = view.text.split("\n");
    expect(lines[0]).toBe("short");
    expect(lines[1]).toBe(`${"y".repeat(100)}… [+150 chars]`);
    expect(lines[2]).toBe("end");
    expect(view.text).toContain("1 long line shortened");
    expect(view.text).toContain(`ref=${ID}`);
    expect(view.text).toContain("tool_output_cache_grep");
  });

  it("cuts the message at maxMessageBytes and tells where to continue, with both tool names", () => {
    const full = Array.from({ length: 500 }, (_, i) => `line ${i + 1}`).join("\n");
    const view = buildInContextView(full, ID, limits);
    expect(Buffer.byteLength(view.text)).toBeLessThanOrEqual(limits.maxMessageBytes);
    expect(view.lineCount).toBe(500);
    expect(view.byteSize).toBe(Buffer.byteLength(full));
    const shown = view.text.split("\n").filter((l) => l.startsWith("line ")).length;
    expect(view.text).toContain(`showing ${shown} of 500 lines`);
    expect(view.text).toContain(`tool_output_cache({"ref_id":"${ID}","offset":${shown + 1}})`);
    expect(view.text).toContain(`tool_output_cache_grep({"ref_id":"${ID}"`);
    // Whole lines only: the last shown line is complete.
    expect(view.text).toContain(`line ${shown}\n[`);
  });

  it("never splits a multi-byte character when cutting by bytes", () => {
    // One enormous line of 3-byte characters: cut by bytes, then by line length.
    const full = "語".repeat(5000);
    const view = buildInContextView(full, ID, { maxMessageBytes: 1024, maxLineLength: 5000 });
    expect(view.text).not.toContain("\uFFFD");
    expect(Buffer.byteLength(view.text)).toBeLessThanOrEqual(1024);
    expect(view.text).toContain("showing 1 of 1 lines");
    expect(view.text).toContain('"offset":1'); // the cut line is read again from its start
  });

  it("keeps surrogate pairs together when cutting a line", () => {
    const view = buildInContextView(`${"a".repeat(99)}😀😀`, ID, limits);
    expect(view.text.startsWith(`${"a".repeat(99)}… [+4 chars]`)).toBe(true);
    expect(view.text).not.toContain("\uFFFD");
  });
});
