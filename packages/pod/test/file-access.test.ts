/**
 * PodOptions.fileAccess: read_file, edit_file and write_file read and write
 * file text through the hook (an editor's buffers), still behind the scope
 * check and the read-before-write guard.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type Tool, ToolError } from "@yoi/llm-worker";
import { beforeEach, describe, expect, it } from "vitest";
import type { FileAccess } from "../src/fs/file-access.ts";
import { PodFsView } from "../src/fs/fs-view.ts";
import { ScopedFs } from "../src/fs/scoped-fs.ts";
import { createBuiltinTools } from "../src/tools/builtin-tools.ts";
import { tempDir } from "./helpers.ts";

let root: string;
let outside: string;
let tools: Map<string, Tool>;
/** The "editor": buffers by real path; a write also saves to disk, as editors do. */
let buffers: Map<string, string>;
let calls: string[];

async function run(name: string, args: unknown): Promise<string> {
  const tool = tools.get(name) as Tool;
  const parsed = tool.inputSchema.parse(args);
  await tool.check?.(parsed, { callId: "c", signal: new AbortController().signal });
  const out = await tool.execute(parsed, {
    callId: "c",
    batchId: "b",
    callIndex: 0,
    batchSize: 1,
    turnIndex: 0,
    signal: new AbortController().signal,
  });
  return typeof out === "string" ? out : out.kind === "inline" ? out.text : "";
}

async function refused(name: string, args: unknown): Promise<string> {
  const error = await run(name, args).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolError);
  return (error as Error).message;
}

beforeEach(async () => {
  const base = await tempDir();
  root = path.join(base, "root");
  outside = path.join(base, "outside");
  await mkdir(root);
  await mkdir(outside);
  await writeFile(path.join(root, "a.ts"), "on disk\n");
  await writeFile(path.join(outside, "secret.ts"), "secret\n");
  buffers = new Map();
  calls = [];
  const access: FileAccess = {
    readText: async (real) => {
      calls.push(`read ${path.relative(base, real)}`);
      return buffers.get(real) ?? (await readFile(real, "utf8"));
    },
    writeText: async (real, text) => {
      calls.push(`write ${path.relative(base, real)}`);
      buffers.set(real, text);
      await writeFile(real, text);
    },
  };
  const fs = await ScopedFs.create({ writeRoots: [root] });
  tools = new Map(
    createBuiltinTools({ view: new PodFsView(fs, access), bash: false }).map((t) => [t.name, t]),
  );
});

describe("fileAccess", () => {
  it("read_file sees the unsaved buffer, paged like a file", async () => {
    buffers.set(path.join(root, "a.ts"), "\uFEFFunsaved one\nunsaved two\nthree\n");
    expect(await run("read_file", { path: "a.ts", offset: 2, limit: 1 })).toBe(
      "     2\tunsaved two\n[line limit reached: showed lines 2-2; continue with offset=3]\n",
    );
    expect(calls).toEqual(["read root/a.ts"]);
  });

  it("edit_file reads and writes through it, and the result is on the disk the editor saved", async () => {
    buffers.set(path.join(root, "a.ts"), "const x = 1;\n");
    await run("read_file", { path: "a.ts" });
    const out = await run("edit_file", { path: "a.ts", old_string: "x = 1", new_string: "x = 2" });
    expect(out).toMatch(/^Edited a.ts: replaced 1 occurrence/);
    expect(calls).toEqual(["read root/a.ts", "read root/a.ts", "write root/a.ts"]);
    expect(await readFile(path.join(root, "a.ts"), "utf8")).toBe("const x = 2;\n");
  });

  it("keeps the scope check and the read-before-write guard", async () => {
    expect(await refused("read_file", { path: "../outside/secret.ts" })).toMatch(/outside/);
    expect(await refused("write_file", { path: "../outside/new.ts", content: "x" })).toMatch(/outside/);
    // Not read in this session: refused before the hook is asked.
    expect(await refused("edit_file", { path: "a.ts", old_string: "on", new_string: "off" })).toMatch(
      /has not been read/,
    );
    expect(await refused("write_file", { path: "a.ts", content: "x" })).toMatch(/has not been read/);
    // Read, then changed on disk by someone else: refused too.
    await run("read_file", { path: "a.ts" });
    await new Promise((r) => setTimeout(r, 20));
    await writeFile(path.join(root, "a.ts"), "changed elsewhere, longer\n");
    expect(await refused("write_file", { path: "a.ts", content: "x" })).toMatch(/changed on disk/);
    expect(calls.filter((c) => c.startsWith("write"))).toEqual([]);
    expect(await readFile(path.join(root, "a.ts"), "utf8")).toBe("changed elsewhere, longer\n");
  });

  it("write_file creates a new file through it", async () => {
    expect(await run("write_file", { path: "new/b.ts", content: "b\n" })).toMatch(/^Created new\/b.ts/);
    expect(calls).toEqual(["write root/new/b.ts"]);
  });

  it("a hook that fails is the tool's error, naming the file", async () => {
    const fs = await ScopedFs.create({ writeRoots: [root] });
    const failing: FileAccess = {
      readText: async () => {
        throw new Error("buffer closed");
      },
    };
    tools = new Map(
      createBuiltinTools({ view: new PodFsView(fs, failing), bash: false }).map((t) => [t.name, t]),
    );
    expect(await refused("read_file", { path: "a.ts" })).toBe("cannot read a.ts: buffer closed");
  });
});
