import { symlink, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { messageText } from "@yoi/llm-client";
import { TOOL_OUTPUT_MAX_BYTES } from "@yoi/manifest";
import { beforeEach, describe, expect, it } from "vitest";
import { PodFsView } from "../src/fs/fs-view.ts";
import { ScopedFs } from "../src/fs/scoped-fs.ts";
import { FileRefError } from "../src/input/file-ref.ts";
import { tempDir } from "./helpers.ts";

let base: string;
let root: string;
let view: PodFsView;

beforeEach(async () => {
  base = await tempDir();
  root = path.join(base, "root");
  const { mkdir } = await import("node:fs/promises");
  await mkdir(root);
  await writeFile(path.join(base, "secret.txt"), "SECRET");
  view = new PodFsView(await ScopedFs.create({ writeRoots: [root] }));
});

async function refError(p: string): Promise<FileRefError> {
  try {
    await view.resolveFileRef(p);
  } catch (error) {
    expect(error).toBeInstanceOf(FileRefError);
    return error as FileRefError;
  }
  throw new Error("expected a FileRefError");
}

describe("resolveFileRef", () => {
  it("returns a system message [File: <path>] with the body", async () => {
    await writeFile(path.join(root, "a.ts"), "export const a = 1;\n");
    const ref = await view.resolveFileRef("a.ts");
    expect(ref.item.role).toBe("system");
    expect(messageText(ref.item)).toBe("[File: a.ts]\nexport const a = 1;\n");
    expect(ref.truncated).toBe(false);
  });

  it("cuts at 16 KiB on a character boundary with the truncation note", async () => {
    // 3-byte characters: 16384 is not a multiple of 3, so a naive cut would split one.
    const body = "日".repeat(10_000);
    await writeFile(path.join(root, "big.txt"), body);
    const total = Buffer.byteLength(body);
    const ref = await view.resolveFileRef("big.txt", TOOL_OUTPUT_MAX_BYTES);
    const text = messageText(ref.item);
    const note = `[...truncated, ${total} bytes total — use read_file for the rest]`;
    expect(text.endsWith(`\n${note}`)).toBe(true);
    const kept = text.slice("[File: big.txt]\n".length, -(note.length + 1));
    expect(kept).toBe("日".repeat(Math.floor(TOOL_OUTPUT_MAX_BYTES / 3)));
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(TOOL_OUTPUT_MAX_BYTES);
    expect(ref).toMatchObject({ truncated: true, totalBytes: total });
  });

  it("a file of exactly the cap is not truncated", async () => {
    await writeFile(path.join(root, "exact.txt"), "a".repeat(100));
    const ref = await view.resolveFileRef("exact.txt", 100);
    expect(messageText(ref.item)).toBe(`[File: exact.txt]\n${"a".repeat(100)}`);
  });

  it("typed errors: out of scope, not found, binary", async () => {
    await symlink(path.join(base, "secret.txt"), path.join(root, "leak"));
    await writeFile(
      path.join(root, "img.png"),
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]),
    );
    await writeFile(path.join(root, "latin1.txt"), Buffer.from("caf\xe9", "latin1"));
    expect((await refError("../secret.txt")).code).toBe("out_of_scope");
    expect((await refError("leak")).code).toBe("out_of_scope");
    expect((await refError("missing.ts")).code).toBe("not_found");
    const bin = await refError("img.png");
    expect(bin.code).toBe("binary");
    expect(bin.message).toBe("img.png is a PNG image (binary)");
    expect((await refError("latin1.txt")).code).toBe("binary");
    for (const e of [await refError("../secret.txt"), await refError("leak")]) {
      expect(e.message).not.toContain("SECRET");
    }
  });

  it("invalid UTF-8 past the sniff window but inside the cap is rejected", async () => {
    const data = Buffer.concat([Buffer.from("a".repeat(10_000)), Buffer.from([0xff]), Buffer.from("tail")]);
    await writeFile(path.join(root, "late.txt"), data);
    expect((await refError("late.txt")).code).toBe("binary");
  });

  it("a NUL byte past the 8 KiB sniff but inside the cap is rejected as binary (the whole body is checked)", async () => {
    const data = Buffer.concat([Buffer.from("a".repeat(10_000)), Buffer.from([0]), Buffer.from("tail")]);
    await writeFile(path.join(root, "late-nul.txt"), data);
    const err = await refError("late-nul.txt");
    expect(err.code).toBe("binary");
    expect(err.message).toBe("late-nul.txt is binary (a NUL byte at offset 10000)");
    // Past the cap the NUL is never sent, so the capped body is fine.
    const ref = await view.resolveFileRef("late-nul.txt", 9_000);
    expect(messageText(ref.item)).toContain("[...truncated, 10005 bytes total");
  });

  it("read_file refuses a file whose NUL byte lies past the sniff, in the lines it would send", async () => {
    const lines = Array.from({ length: 400 }, (_, i) => `line ${i} ${"x".repeat(30)}`).join("\n");
    await writeFile(path.join(root, "late-nul.log"), `${lines}\nbad\u0000line\nend\n`);
    await expect(view.readText("late-nul.log")).rejects.toThrow(
      /late-nul\.log is binary \(a NUL byte on line 401\)/,
    );
    // Lines before it still read: the NUL is not in what is sent.
    const head = await view.readText("late-nul.log", { limit: 10 });
    expect(head.lines).toHaveLength(10);
  });
});
