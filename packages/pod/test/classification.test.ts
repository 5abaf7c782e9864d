import { open, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { BinaryFileError, PodFsView } from "../src/fs/fs-view.ts";
import { ScopedFs } from "../src/fs/scoped-fs.ts";
import { classifyBytes, SNIFF_BYTES, utf8Boundary } from "../src/fs/text-sniff.ts";
import { tempDir } from "./helpers.ts";

const PNG_HEADER = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00,
  0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89,
]);

let root: string;
let view: PodFsView;

beforeEach(async () => {
  root = await tempDir();
  view = new PodFsView(await ScopedFs.create({ writeRoots: [root] }));
});

async function put(name: string, data: string | Buffer): Promise<string> {
  await writeFile(path.join(root, name), data);
  return name;
}

describe("classification", () => {
  it("PNG is binary, named as an image", async () => {
    const c = await view.classify(await put("a.png", PNG_HEADER));
    expect(c).toMatchObject({ kind: "binary", reason: "is a PNG image (binary)", cause: "magic" });
    await expect(view.readText("a.png")).rejects.toBeInstanceOf(BinaryFileError);
  });

  it("UTF-16 with a BOM is not UTF-8 text", async () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("hello wörld\n", "utf16le")]);
    expect(await view.classify(await put("le.txt", le))).toMatchObject({
      kind: "binary",
      reason: expect.stringMatching(/UTF-16LE/),
      cause: "bom",
    });
    const be = Buffer.from([0xfe, 0xff, 0x00, 0x68, 0x00, 0x69]);
    expect(await view.classify(await put("be.txt", be))).toMatchObject({
      kind: "binary",
      reason: expect.stringMatching(/UTF-16BE/),
    });
    const u32 = Buffer.from([0xff, 0xfe, 0x00, 0x00, 0x68, 0x00, 0x00, 0x00]);
    expect(await view.classify(await put("u32.txt", u32))).toMatchObject({
      kind: "binary",
      reason: expect.stringMatching(/UTF-32LE/),
    });
  });

  it("UTF-8 with CJK and emoji is text, read back intact", async () => {
    const text = "日本語のテキスト 🎉👩‍👩‍👧\n第二行 ✓\n";
    expect(await view.classify(await put("cjk.txt", text))).toMatchObject({ kind: "text", bom: false });
    const read = await view.readText("cjk.txt");
    expect(read.lines).toEqual(["日本語のテキスト 🎉👩‍👩‍👧", "第二行 ✓"]);
  });

  it("a multi-byte character cut at the sniff boundary is still text", async () => {
    // 8191 ASCII bytes, then a 3-byte character straddling byte 8192.
    const text = `${"a".repeat(SNIFF_BYTES - 1)}日本\n`;
    expect(await view.classify(await put("edge.txt", text))).toMatchObject({ kind: "text" });
    // ...but the same cut at the end of the file is invalid UTF-8.
    const cut = Buffer.from("abc日").subarray(0, 5);
    expect(classifyBytes(cut, true).kind).toBe("binary");
    expect(classifyBytes(cut, false).kind).toBe("text");
  });

  it("Latin-1 is not UTF-8 text", async () => {
    const latin1 = Buffer.from("caf\xe9 cr\xe8me br\xfbl\xe9e\n", "latin1");
    expect(await view.classify(await put("latin1.txt", latin1))).toMatchObject({
      kind: "binary",
      reason: "is not valid UTF-8 text",
      cause: "utf8",
    });
  });

  it("an empty file is text with no lines", async () => {
    expect(await view.classify(await put("empty.txt", ""))).toMatchObject({ kind: "text", size: 0 });
    const read = await view.readText("empty.txt");
    expect(read).toMatchObject({ lines: [], stoppedBy: "eof", totalLines: 0 });
  });

  it("a UTF-8 BOM is text and stripped", async () => {
    await put("bom.txt", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("first\nsecond\n")]));
    expect(await view.classify("bom.txt")).toMatchObject({ kind: "text", bom: true });
    expect((await view.readText("bom.txt")).lines).toEqual(["first", "second"]);
  });

  it("a large sparse file is classified and read without loading it", async () => {
    const file = path.join(root, "sparse.bin");
    const handle = await open(file, "w");
    await handle.truncate(8 * 1024 * 1024 * 1024); // 8 GiB of holes (NUL bytes)
    await handle.close();
    const before = process.memoryUsage().rss;
    expect(await view.classify("sparse.bin")).toMatchObject({ kind: "binary", size: 8 * 1024 * 1024 * 1024 });
    await expect(view.readText("sparse.bin")).rejects.toThrow(/NUL bytes/);
    expect(process.memoryUsage().rss - before).toBeLessThan(256 * 1024 * 1024);
  });

  it("a large sparse file that starts with text reads only the requested lines", async () => {
    const file = path.join(root, "sparse.log");
    const handle = await open(file, "w");
    // More text than the sniff window, then 4 GiB of holes.
    const text = Array.from({ length: 2000 }, (_, i) => `log line ${i + 1}`).join("\n");
    await handle.write(`${text}\n`);
    await handle.truncate(4 * 1024 * 1024 * 1024);
    await handle.close();
    const read = await view.readText("sparse.log", { limit: 2, offset: 1999 });
    expect(read.lines).toEqual(["log line 1999", "log line 2000"]);
    expect(read.stoppedBy).toBe("limit");
    expect(read.totalLines).toBeUndefined();
  });

  it("utf8Boundary never splits a character", () => {
    const bytes = Buffer.from("ab日本🎉");
    for (let max = 0; max <= bytes.length; max++) {
      const cut = utf8Boundary(bytes, max);
      expect(cut).toBeLessThanOrEqual(max);
      expect(() => new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, cut))).not.toThrow();
    }
  });
});

describe("readText limits", () => {
  beforeEach(async () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`);
    await put("hundred.txt", `${lines.join("\n")}\n`);
  });

  it("offset and limit select lines (1-based)", async () => {
    const read = await view.readText("hundred.txt", { offset: 10, limit: 3 });
    expect(read.lines).toEqual(["line 10", "line 11", "line 12"]);
    expect(read.firstLine).toBe(10);
    expect(read.stoppedBy).toBe("limit");
  });

  it("reports the total at the end of the file", async () => {
    const read = await view.readText("hundred.txt", { offset: 99 });
    expect(read.lines).toEqual(["line 99", "line 100"]);
    expect(read).toMatchObject({ stoppedBy: "eof", totalLines: 100 });
  });

  it("stops at the byte cap on a line boundary", async () => {
    const read = await view.readText("hundred.txt", { maxBytes: 30 });
    expect(read.lines).toEqual(["line 1", "line 2", "line 3", "line 4"]);
    expect(read.stoppedBy).toBe("bytes");
  });

  it("cuts long lines and says so", async () => {
    await put("long.txt", `${"x".repeat(5000)}\nshort\n`);
    const read = await view.readText("long.txt", { maxLineLength: 100 });
    expect(read.lines[0]).toBe(`${"x".repeat(100)}… [line cut, 5000 characters]`);
    expect(read.lines[1]).toBe("short");
    expect(read.cutLines).toBe(1);
  });

  it("handles CRLF and a last line without a newline", async () => {
    await put("crlf.txt", "a\r\nb\r\nc");
    expect((await view.readText("crlf.txt")).lines).toEqual(["a", "b", "c"]);
  });
});
