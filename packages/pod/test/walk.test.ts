import { readdirSync, statSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { ScopedFs } from "../src/fs/scoped-fs.ts";
import { walk } from "../src/tools/walk.ts";
import { tempDir } from "./helpers.ts";

/**
 * The walk's order written out plainly, one directory at a time: a
 * directory's entries in name order, then each subdirectory's, depth first.
 */
function reference(root: string, rel = ""): string[] {
  const out: string[] = [];
  const subdirs: string[] = [];
  const names = readdirSync(path.join(root, rel)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const name of names) {
    const child = rel === "" ? name : `${rel}/${name}`;
    const isDir = statSync(path.join(root, child)).isDirectory();
    out.push(`${isDir ? "d" : "f"} ${child}`);
    if (isDir && name !== "node_modules" && name !== ".git") subdirs.push(child);
  }
  for (const child of subdirs) out.push(...reference(root, child));
  return out;
}

async function tree(root: string, depth: number, fanout: number, rel = ""): Promise<void> {
  for (let i = 0; i < fanout; i++) {
    const dir = path.join(root, rel, `d${i}`);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, `f${i}.txt`), `${rel}/${i}`);
    if (depth > 1) await tree(root, depth - 1, fanout, path.join(rel, `d${i}`));
  }
}

async function entries(fs: ScopedFs, root: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of walk(fs, root)) out.push(`${e.kind === "directory" ? "d" : "f"} ${e.rel}`);
  return out;
}

describe("walk", () => {
  it("lists ahead but yields in the same order as one directory at a time", async () => {
    const root = await tempDir();
    await tree(root, 3, 6); // 258 directories, more than are listed ahead at once
    await mkdir(path.join(root, "node_modules", "x"), { recursive: true });
    await writeFile(path.join(root, "node_modules", "x", "skipped.js"), "");
    await writeFile(path.join(root, "top.txt"), "");
    const fs = await ScopedFs.create({ writeRoots: [root], cwd: root });
    const walked = await entries(fs, root);
    expect(walked).toStrictEqual(reference(root));
    expect(walked).toContain("d node_modules");
    expect(walked).not.toContain("f node_modules/x/skipped.js");
    expect(walked.filter((e) => e.startsWith("d "))).toHaveLength(6 + 36 + 216 + 1);
  });

  it("skips directories removed while it runs, and leaves no unhandled rejection when stopped early", async () => {
    const root = await tempDir();
    for (let i = 0; i < 30; i++) {
      await mkdir(path.join(root, `d${String(i).padStart(2, "0")}`, "sub"), { recursive: true });
      await writeFile(path.join(root, `d${String(i).padStart(2, "0")}`, "f.txt"), "x");
    }
    const fs = await ScopedFs.create({ writeRoots: [root], cwd: root });
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on("unhandledRejection", onRejection);
    try {
      // Removed after the root is listed: the walk still has them queued, and lists some of them ahead.
      const seen: string[] = [];
      for await (const e of walk(fs, root)) {
        seen.push(e.rel);
        if (e.rel === "d00") {
          for (let i = 5; i < 30; i++)
            await rm(path.join(root, `d${String(i).padStart(2, "0")}`), { recursive: true });
        }
        if (e.rel === "d01/sub") break; // by now d05.. were listed ahead and failed
      }
      expect(seen).toContain("d00/sub");
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(rejections).toStrictEqual([]);

      // Walked to the end, the removed directories are skipped, not fatal.
      const rest = await entries(fs, root);
      expect(rest).toStrictEqual(reference(root));
      expect(rest.filter((e) => /^d d\d\d$/.test(e))).toHaveLength(5);
    } finally {
      process.off("unhandledRejection", onRejection);
    }
  });
});
