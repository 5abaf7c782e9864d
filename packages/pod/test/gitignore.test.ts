import { mkdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import type { Tool, ToolExecutionContext } from "@yoi/llm-worker";
import { beforeEach, describe, expect, it } from "vitest";
import { PodFsView } from "../src/fs/fs-view.ts";
import { ScopedFs } from "../src/fs/scoped-fs.ts";
import { createBuiltinTools } from "../src/tools/builtin-tools.ts";
import { isIgnored, parseGitignore } from "../src/tools/gitignore.ts";
import { tempDir } from "./helpers.ts";

describe("gitignore rules", () => {
  const rules = parseGitignore(
    ["# build output", "dist/", "*.log", "!keep.log", "/root-only.txt", "docs/**/*.tmp", "\\#hash", ""].join(
      "\n",
    ),
    "",
  );
  it.each([
    ["dist", true, true],
    ["dist", false, false],
    ["a/dist", true, true],
    ["x.log", false, true],
    ["deep/x.log", false, true],
    ["keep.log", false, false],
    ["root-only.txt", false, true],
    ["sub/root-only.txt", false, false],
    ["docs/a/b.tmp", false, true],
    ["other/a/b.tmp", false, false],
    ["#hash", false, true],
    ["src/a.ts", false, false],
  ] as const)("%s (dir: %s) ignored: %s", (rel, isDir, expected) => {
    expect(isIgnored(rules, rel, isDir)).toBe(expected);
  });

  it("nested files apply below their directory; later rules win", () => {
    const all = [...parseGitignore("*.gen.ts", ""), ...parseGitignore("!special.gen.ts\nlocal/", "pkg")];
    expect(isIgnored(all, "pkg/a.gen.ts", false)).toBe(true);
    expect(isIgnored(all, "pkg/special.gen.ts", false)).toBe(false);
    expect(isIgnored(all, "special.gen.ts", false)).toBe(true);
    expect(isIgnored(all, "pkg/local", true)).toBe(true);
    expect(isIgnored(all, "local", true)).toBe(false);
  });
});

describe("glob and grep honour .gitignore", () => {
  let tools: Map<string, Tool>;
  const ctx: ToolExecutionContext = {
    callId: "c",
    batchId: "b",
    callIndex: 0,
    batchSize: 1,
    turnIndex: 0,
    signal: new AbortController().signal,
  };
  const run = async (name: string, args: unknown) => {
    const tool = tools.get(name)!;
    return String(await tool.execute(tool.inputSchema.parse(args), ctx));
  };

  beforeEach(async () => {
    const root = await tempDir();
    for (const dir of ["src/gen", "dist", "pkg/out", "node_modules/x"])
      await mkdir(path.join(root, dir), { recursive: true });
    await writeFile(path.join(root, ".gitignore"), "dist/\n*.gen.ts\n");
    await writeFile(path.join(root, "pkg", ".gitignore"), "out/\n");
    await writeFile(path.join(root, "src", "a.ts"), "needle\n");
    await writeFile(path.join(root, "src", "gen", "b.gen.ts"), "needle\n");
    await writeFile(path.join(root, "dist", "a.js"), "needle\n");
    await writeFile(path.join(root, "pkg", "out", "c.ts"), "needle\n");
    await writeFile(path.join(root, "pkg", "d.ts"), "needle\n");
    await writeFile(path.join(root, "node_modules", "x", "e.ts"), "needle\n");
    const fs = await ScopedFs.create({ writeRoots: [root] });
    tools = new Map(createBuiltinTools({ view: new PodFsView(fs), bash: false }).map((t) => [t.name, t]));
  });

  it("skips ignored files and directories by default", async () => {
    expect((await run("glob", { pattern: "**/*.ts" })).trim().split("\n").sort()).toEqual([
      "pkg/d.ts",
      "src/a.ts",
    ]);
    expect(await run("grep", { pattern: "needle", output_mode: "files_with_matches" })).toBe(
      "pkg/d.ts\nsrc/a.ts\n[2 files with matches]\n",
    );
  });

  it("applies the root .gitignore when the search starts in a subdirectory", async () => {
    expect(await run("grep", { pattern: "needle", path: "src", output_mode: "files_with_matches" })).toBe(
      "src/a.ts\n[1 file with matches]\n",
    );
  });

  it("include_ignored searches everything (VCS directories aside)", async () => {
    const all = (await run("glob", { pattern: "**/*.{ts,js}", include_ignored: true }))
      .trim()
      .split("\n")
      .sort();
    expect(all).toEqual([
      "dist/a.js",
      "node_modules/x/e.ts",
      "pkg/d.ts",
      "pkg/out/c.ts",
      "src/a.ts",
      "src/gen/b.gen.ts",
    ]);
  });
});
