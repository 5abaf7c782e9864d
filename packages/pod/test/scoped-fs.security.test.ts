import { mkdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { Worker } from "node:worker_threads";
import { beforeEach, describe, expect, it } from "vitest";
import { ScopeError } from "../src/fs/scope-error.ts";
import { isInside, ScopedFs } from "../src/fs/scoped-fs.ts";
import { tempDir } from "./helpers.ts";

const SECRET = "TOP-SECRET-OUTSIDE";

let base: string;
let root: string;
let outside: string;
let fs: ScopedFs;

async function rejection(promise: Promise<unknown>): Promise<ScopeError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ScopeError);
    return error as ScopeError;
  }
  throw new Error("expected a ScopeError, but the operation succeeded");
}

beforeEach(async () => {
  base = await tempDir();
  root = path.join(base, "root");
  outside = path.join(base, "outside");
  await mkdir(path.join(root, "sub"), { recursive: true });
  await mkdir(outside);
  await mkdir(path.join(base, "rootab"));
  await writeFile(path.join(base, "rootab", "sibling.txt"), SECRET);
  await writeFile(path.join(outside, "secret.txt"), SECRET);
  await writeFile(path.join(root, "inside.txt"), "inside\n");
  await writeFile(path.join(root, "sub", "deep.txt"), "deep\n");
  await symlink("inside.txt", path.join(root, "link-in"));
  await symlink("sub", path.join(root, "dirlink-in"));
  await symlink("../outside/secret.txt", path.join(root, "link-out"));
  await symlink(path.join(outside, "secret.txt"), path.join(root, "link-out-abs"));
  await symlink("../outside", path.join(root, "dirlink-out"));
  await symlink("chain2", path.join(root, "chain1"));
  await symlink("sub/../chain3", path.join(root, "chain2"));
  await symlink("../outside/secret.txt", path.join(root, "chain3"));
  await symlink("../outside/nope.txt", path.join(root, "dangling-out"));
  await symlink("../outside/newdir", path.join(root, "dangling-dir-out"));
  await symlink("sub/created.txt", path.join(root, "dangling-in"));
  await symlink("loop2", path.join(root, "loop1"));
  await symlink("loop1", path.join(root, "loop2"));
  fs = await ScopedFs.create({ writeRoots: [root] });
});

describe("isInside", () => {
  it("uses path.relative, not a string prefix", () => {
    expect(isInside("/r/a", "/r/a")).toBe(true);
    expect(isInside("/r/a", "/r/a/b")).toBe(true);
    expect(isInside("/r/a", "/r/ab")).toBe(false);
    expect(isInside("/r/a", "/r")).toBe(false);
    expect(isInside("/r/a", "/r/a/..b")).toBe(true);
    expect(isInside("/", "/anything")).toBe(true);
  });
});

describe("ScopedFs escapes", () => {
  it("reads inside files and in-scope symlinks", async () => {
    expect((await fs.readFile("inside.txt")).bytes.toString()).toBe("inside\n");
    expect((await fs.readFile("link-in")).bytes.toString()).toBe("inside\n");
    expect((await fs.readFile("dirlink-in/deep.txt")).bytes.toString()).toBe("deep\n");
    expect((await fs.readFile("sub/../inside.txt")).bytes.toString()).toBe("inside\n");
    expect((await fs.readFile(path.join(root, "inside.txt"))).bytes.toString()).toBe("inside\n");
  });

  it.each([
    ["../outside/secret.txt", /is outside the scope/],
    ["sub/../../outside/secret.txt", /is outside the scope/],
    ["../rootab/sibling.txt", /is outside the scope/],
    ["/etc/passwd", /is outside the scope/],
  ])("rejects %s lexically", async (input, message) => {
    const error = await rejection(fs.readFile(input));
    expect(error.code).toBe("out_of_scope");
    expect(error.path).toBe(input);
    expect(error.message).toMatch(message);
    expect(error.message).toContain(input);
  });

  it("rejects an absolute path in a sibling directory sharing the root's prefix", async () => {
    const input = path.join(base, "rootab", "sibling.txt");
    const error = await rejection(fs.readFile(input));
    expect(error.code).toBe("out_of_scope");
    expect(error.message).not.toContain(SECRET);
  });

  it.each(["link-out", "link-out-abs", "dirlink-out/secret.txt", "chain1", "dangling-out"])(
    "rejects the symlink escape %s",
    async (input) => {
      const error = await rejection(fs.readFile(input));
      expect(error.code).toBe("out_of_scope");
      expect(error.message).toMatch(/through a symbolic link/);
      expect(error.path).toBe(input);
    },
  );

  it("rejects stat and list through links leading out", async () => {
    expect((await rejection(fs.stat("link-out"))).code).toBe("out_of_scope");
    expect((await rejection(fs.readdir("dirlink-out"))).code).toBe("out_of_scope");
    expect((await rejection(fs.readdir(".."))).code).toBe("out_of_scope");
  });

  it("rejects NUL bytes and empty paths as invalid", async () => {
    expect((await rejection(fs.readFile("inside.txt\0../../x"))).code).toBe("invalid_path");
    expect((await rejection(fs.readFile(""))).code).toBe("invalid_path");
  });

  it("reports a symlink loop as invalid, a missing file as not_found, a directory as invalid", async () => {
    expect((await rejection(fs.readFile("loop1"))).code).toBe("invalid_path");
    expect((await rejection(fs.readFile("missing.txt"))).code).toBe("not_found");
    expect((await rejection(fs.readFile("inside.txt/child"))).code).toBe("not_found");
    const dir = await rejection(fs.readFile("sub"));
    expect(dir.code).toBe("invalid_path");
    expect(dir.message).toMatch(/directory/);
  });

  it("writes atomically inside, creating parents inside the scope", async () => {
    await fs.writeFile("new/nested/file.txt", "hello");
    expect(await readFile(path.join(root, "new", "nested", "file.txt"), "utf8")).toBe("hello");
    await fs.writeFile("link-in", "through link");
    expect(await readFile(path.join(root, "inside.txt"), "utf8")).toBe("through link");
    expect((await stat(path.join(root, "link-in"), {})).isFile()).toBe(true);
    await fs.writeFile("dangling-in", "created via in-scope dangling link");
    expect(await readFile(path.join(root, "sub", "created.txt"), "utf8")).toBe(
      "created via in-scope dangling link",
    );
  });

  it("keeps the mode of an overwritten file", async () => {
    const { chmod } = await import("node:fs/promises");
    await chmod(path.join(root, "inside.txt"), 0o640);
    await fs.writeFile("inside.txt", "x");
    expect((await stat(path.join(root, "inside.txt"))).mode & 0o777).toBe(0o640);
  });

  it.each([
    ["../outside/new.txt", /is outside the scope/],
    ["link-out", /through a symbolic link/],
    ["dangling-out", /through a symbolic link/],
    ["dirlink-out/new.txt", /through a symbolic link/],
    ["dangling-dir-out/new.txt", /through a symbolic link/],
    ["chain1", /through a symbolic link/],
  ])("refuses to write %s", async (input, message) => {
    const error = await rejection(fs.writeFile(input, "pwned"));
    expect(error.code).toBe("out_of_scope");
    expect(error.message).toMatch(message);
    expect(await readFile(path.join(outside, "secret.txt"), "utf8")).toBe(SECRET);
    await expect(stat(path.join(outside, "new.txt"))).rejects.toThrow();
    await expect(stat(path.join(outside, "nope.txt"))).rejects.toThrow();
    await expect(stat(path.join(outside, "newdir"))).rejects.toThrow();
  });

  it("separates read roots from write roots", async () => {
    const ro = path.join(base, "outside");
    const scoped = await ScopedFs.create({ writeRoots: [root], readRoots: [ro] });
    expect((await scoped.readFile(path.join(ro, "secret.txt"))).bytes.toString()).toBe(SECRET);
    const error = await rejection(scoped.writeFile(path.join(ro, "secret.txt"), "x"));
    expect(error.code).toBe("out_of_scope");
    expect(error.message).toMatch(/read-only/);
    expect(await readFile(path.join(ro, "secret.txt"), "utf8")).toBe(SECRET);
  });

  it("realpaths its roots, so a root given through a symlink still contains its files", async () => {
    await symlink(root, path.join(base, "root-alias"));
    const scoped = await ScopedFs.create({ readRoots: [path.join(base, "root-alias")] });
    expect(scoped.readRoots).toEqual([root]);
    expect((await scoped.readFile("inside.txt")).bytes.toString()).toBe("inside\n");
    expect((await rejection(scoped.readFile("link-out"))).code).toBe("out_of_scope");
  });

  it("with the inode handle check, reads inside and refuses links out", async () => {
    const scoped = await ScopedFs.create({ writeRoots: [root], handleCheck: "inode" });
    expect((await scoped.readFile("link-in")).bytes.toString()).toBe("inside\n");
    expect((await rejection(scoped.readFile("dirlink-out/secret.txt"))).code).toBe("out_of_scope");
  });

  it("rejects a missing root with a clear error", async () => {
    const error = await rejection(ScopedFs.create({ readRoots: [path.join(base, "nope")] }));
    expect(error.code).toBe("not_found");
  });
});

/**
 * The race tests race for a fixed wall-clock time (not a fixed number of
 * swaps), so a loaded 2-core machine makes them check fewer interleavings,
 * never time out: the swapper is stopped once the time is up and at least a
 * few operations have completed.
 */
const RACE_MS = 3000;
const MIN_ROUNDS = 20;
const RACE_TEST_TIMEOUT_MS = 120_000;

// Only the /proc check is exact; the inode fallback is best-effort against this race (see ScopedFsOptions).
describe("ScopedFs read race", () => {
  // Another thread swaps (a) a file with a symlink to a secret and (b) a directory
  // with a symlink to an outside directory, as fast as it can, while we read.
  // No read may ever return a byte of the secret.
  it(
    "never returns bytes from outside while links are swapped in",
    async () => {
      const INSIDE = "inside-bytes-only";
      await writeFile(path.join(outside, "f.txt"), SECRET);
      await writeFile(path.join(root, "race.txt"), INSIDE);
      await mkdir(path.join(root, "racedir"));
      await writeFile(path.join(root, "racedir", "f.txt"), INSIDE);
      fs = await ScopedFs.create({ writeRoots: [root] });
      expect(fs.handleCheck).toBe("proc");
      const iterations = 1_000_000;
      const worker = new Worker(
        `
      const fs = require("node:fs");
      const path = require("node:path");
      const { root, outside, iterations, inside } = require("node:worker_threads").workerData;
      const file = path.join(root, "race.txt");
      const dir = path.join(root, "racedir");
      for (let i = 0; i < iterations; i++) {
        try {
          fs.writeFileSync(file + ".f", inside);
          fs.renameSync(file + ".f", file);
          fs.symlinkSync(path.join(outside, "secret.txt"), file + ".l");
          fs.renameSync(file + ".l", file);
          fs.renameSync(dir, dir + ".real");
          fs.symlinkSync(outside, dir);
          fs.unlinkSync(dir);
          fs.renameSync(dir + ".real", dir);
        } catch (e) {}
      }
      `,
        { eval: true, workerData: { root, outside, iterations, inside: INSIDE } },
      );
      let done = false;
      const exited = new Promise<void>((resolve, reject) => {
        worker.on("exit", () => {
          done = true;
          resolve();
        });
        worker.on("error", reject);
      });
      let ok = 0;
      let refused = 0;
      let reads = 0;
      const deadline = Date.now() + RACE_MS;
      try {
        while (!done && (Date.now() < deadline || reads < MIN_ROUNDS)) {
          reads += 1;
          const results = await Promise.allSettled([fs.readFile("race.txt"), fs.readFile("racedir/f.txt")]);
          for (const r of results) {
            if (r.status === "fulfilled") {
              const text = r.value.bytes.toString();
              expect(text).not.toContain("SECRET");
              expect(text === INSIDE || text === "").toBe(true);
              ok += 1;
            } else {
              expect(r.reason).toBeInstanceOf(ScopeError);
              refused += 1;
            }
          }
        }
      } finally {
        // Never leave the swapper running into the next test's cleanup.
        if (!done) await worker.terminate();
        await exited;
      }
      expect(ok).toBeGreaterThan(0);
      expect(ok + refused).toBe(reads * 2);
    },
    RACE_TEST_TIMEOUT_MS,
  );
});

describe("ScopedFs write race", () => {
  // Another thread swaps the directory being written into with a symlink to an
  // outside directory, as fast as it can, while we write files and create
  // directories below it. Nothing may ever appear outside the root.
  it(
    "never creates a file or directory outside while a parent is swapped",
    async () => {
      const scoped = await ScopedFs.create({ writeRoots: [root] });
      expect(scoped.handleCheck).toBe("proc");
      const target = path.join(outside, "target");
      await mkdir(target);
      await mkdir(path.join(root, "wdir"));
      const iterations = 1_000_000;
      const worker = new Worker(
        `
      const fs = require("node:fs");
      const path = require("node:path");
      const { root, target, iterations } = require("node:worker_threads").workerData;
      const dir = path.join(root, "wdir");
      for (let i = 0; i < iterations; i++) {
        try {
          fs.renameSync(dir, dir + ".real");
          fs.symlinkSync(target, dir);
          fs.unlinkSync(dir);
          fs.renameSync(dir + ".real", dir);
        } catch (e) {}
      }
      `,
        { eval: true, workerData: { root, target, iterations } },
      );
      let done = false;
      const exited = new Promise<void>((resolve, reject) => {
        worker.on("exit", () => {
          done = true;
          resolve();
        });
        worker.on("error", reject);
      });
      let ok = 0;
      let i = 0;
      const deadline = Date.now() + RACE_MS;
      try {
        while (!done && (Date.now() < deadline || i < MIN_ROUNDS)) {
          i += 1;
          const results = await Promise.allSettled([
            scoped.writeFile(`wdir/f${i % 7}.txt`, "data"),
            scoped.writeFile(`wdir/new${i % 5}/deep/g.txt`, "data"),
            scoped.mkdir(`wdir/made${i % 3}`),
          ]);
          for (const r of results) {
            if (r.status === "fulfilled") ok += 1;
            else expect(r.reason).toBeInstanceOf(ScopeError);
          }
        }
      } finally {
        if (!done) await worker.terminate();
        await exited;
      }
      const { readdir } = await import("node:fs/promises");
      expect(await readdir(target)).toEqual([]);
      expect(ok).toBeGreaterThan(0);
    },
    RACE_TEST_TIMEOUT_MS,
  );
});

describe("hidden places inside the roots", () => {
  it("are not read, listed, stat'ed or written, by any path to them; the rest of the root is", async () => {
    const priv = path.join(root, "private");
    await mkdir(path.join(priv, "store"), { recursive: true });
    await writeFile(path.join(priv, "keys.json"), SECRET);
    await writeFile(path.join(priv, "store", "log.jsonl"), SECRET);
    await symlink("private/keys.json", path.join(root, "keys-link"));
    await symlink("private", path.join(root, "private-link"));
    const scoped = await ScopedFs.create({
      writeRoots: [root],
      hidden: [path.join(priv, "keys.json"), path.join(priv, "store")],
    });
    for (const input of [
      "private/keys.json",
      "keys-link",
      "private-link/keys.json",
      "sub/../private/keys.json",
    ]) {
      const error = await rejection(scoped.readFile(input));
      expect(error.code).toBe("out_of_scope");
      expect(error.message).toMatch(/is private: this session's tools cannot open it$/);
    }
    expect((await rejection(scoped.readFile("private/store/log.jsonl"))).message).toBe(
      "private/store/log.jsonl is inside private/store, which is private: this session's tools cannot open it",
    );
    expect((await rejection(scoped.readdir("private/store"))).code).toBe("out_of_scope");
    expect((await rejection(scoped.stat("private/keys.json"))).code).toBe("out_of_scope");
    expect((await rejection(scoped.writeFile("private/keys.json", "planted"))).code).toBe("out_of_scope");
    expect((await rejection(scoped.writeFile("private/store/new.jsonl", "planted"))).code).toBe(
      "out_of_scope",
    );
    // Left out of listings; their neighbours are not.
    await writeFile(path.join(priv, "notes.txt"), "ok\n");
    expect((await scoped.readdir("private")).entries.map((e) => e.name)).toEqual(["notes.txt"]);
    expect((await scoped.readFile("private/notes.txt")).bytes.toString()).toBe("ok\n");
    expect(await readFile(path.join(priv, "keys.json"), "utf8")).toBe(SECRET);
  });

  it("one that holds a root is ignored: the scope's own root is never hidden", async () => {
    const scoped = await ScopedFs.create({ writeRoots: [root], hidden: [base, path.join(root, "sub")] });
    expect(scoped.hidden).toEqual([path.join(root, "sub")]);
    expect((await scoped.readFile("inside.txt")).bytes.toString()).toBe("inside\n");
  });
});
