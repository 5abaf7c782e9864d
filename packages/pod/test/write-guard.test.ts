/**
 * The read-before-overwrite guard across processes: a write lands only if the
 * file is still what the session saw (absent, or the size and mtime it read).
 */
import { execFile } from "node:child_process";
import { readFile, stat, utimes, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ScopeError } from "../src/fs/scope-error.ts";
import { ScopedFs } from "../src/fs/scoped-fs.ts";
import { tempDir } from "./helpers.ts";

const SCOPED_FS = fileURLToPath(new URL("../src/fs/scoped-fs.ts", import.meta.url));

async function conflict(work: Promise<unknown>): Promise<ScopeError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ScopeError);
  expect((error as ScopeError).code).toBe("conflict");
  return error as ScopeError;
}

describe("ScopedFs.writeFile with an expectation", () => {
  it("create-only fails when the file exists, and leaves it alone", async () => {
    const root = await tempDir();
    const fs = await ScopedFs.create({ writeRoots: [root] });
    await writeFile(path.join(root, "a.txt"), "theirs");
    await conflict(fs.writeFile("a.txt", "mine", { expect: "absent" }));
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("theirs");
    await fs.writeFile("b.txt", "mine", { expect: "absent" });
    expect(await readFile(path.join(root, "b.txt"), "utf8")).toBe("mine");
  });

  it("replace-only fails when size or mtime moved since the read, and leaves the file alone", async () => {
    const root = await tempDir();
    const fs = await ScopedFs.create({ writeRoots: [root] });
    const file = path.join(root, "a.txt");
    await writeFile(file, "seen");
    const seen = await stat(file);
    await writeFile(file, "changed by another process");
    await conflict(fs.writeFile("a.txt", "mine", { expect: { size: seen.size, mtimeMs: seen.mtimeMs } }));
    expect(await readFile(file, "utf8")).toBe("changed by another process");
    const now = await stat(file);
    await fs.writeFile("a.txt", "mine", { expect: { size: now.size, mtimeMs: now.mtimeMs } });
    expect(await readFile(file, "utf8")).toBe("mine");
  });

  it("waits for another process's lock, and removes a stale one", async () => {
    const root = await tempDir();
    const fs = await ScopedFs.create({ writeRoots: [root] });
    const file = path.join(root, "a.txt");
    const lock = path.join(root, ".a.txt.yoi-lock");
    await writeFile(file, "seen");
    const seen = await stat(file);
    const expectSeen = { size: seen.size, mtimeMs: seen.mtimeMs };
    await writeFile(lock, "");
    const pending = fs.writeFile("a.txt", "mine", { expect: expectSeen });
    await new Promise((r) => setTimeout(r, 200));
    expect(await readFile(file, "utf8")).toBe("seen");
    const { unlink } = await import("node:fs/promises");
    await unlink(lock);
    await pending;
    expect(await readFile(file, "utf8")).toBe("mine");
    // A lock from a crashed process (old mtime) does not block forever.
    await writeFile(lock, "");
    const old = new Date(Date.now() - 120_000);
    await utimes(lock, old, old);
    const again = await stat(file);
    await fs.writeFile("a.txt", "again", { expect: { size: again.size, mtimeMs: again.mtimeMs } });
    expect(await readFile(file, "utf8")).toBe("again");
  });

  it("across processes: of several writers creating the same files, exactly one wins each", async () => {
    const root = await tempDir();
    const files = 15;
    const script = `
      const { ScopedFs } = await import(${JSON.stringify(SCOPED_FS)});
      const fs = await ScopedFs.create({ writeRoots: [${JSON.stringify(root)}] });
      const won = [];
      await Promise.all(Array.from({ length: ${files} }, async (_, i) => {
        try { await fs.writeFile("f" + i + ".txt", process.argv[1], { expect: "absent" }); won.push(i); }
        catch (e) { if (e.code !== "conflict") throw e; }
      }));
      process.stdout.write(JSON.stringify(won));
    `;
    const writers = ["w1", "w2", "w3", "w4"];
    const results = await Promise.all(
      writers.map(
        (name) =>
          new Promise<number[]>((resolve, reject) => {
            execFile(
              process.execPath,
              // scoped-fs.ts imports sibling packages, read from their sources like everywhere in tests.
              ["--conditions=@yoi/source", "--input-type=module", "-e", script, name],
              { timeout: 60_000 },
              (error, stdout, stderr) =>
                error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
            );
          }),
      ),
    );
    const wins = results.flat().sort((a, b) => a - b);
    expect(wins).toEqual(Array.from({ length: files }, (_, i) => i));
    for (let i = 0; i < files; i++) {
      const winner = writers[results.findIndex((r) => r.includes(i))];
      expect(await readFile(path.join(root, `f${i}.txt`), "utf8")).toBe(winner);
    }
  }, 120_000);
});
