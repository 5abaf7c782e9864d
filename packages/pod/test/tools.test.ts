import { mkdir, readFile, stat, symlink, utimes, writeFile } from "node:fs/promises";
import * as path from "node:path";
import {
  isToolOutput,
  type Tool,
  ToolError,
  type ToolExecutionContext,
  type ToolReturn,
} from "@yoi/llm-worker";
import { beforeEach, describe, expect, it } from "vitest";
import { PodFsView } from "../src/fs/fs-view.ts";
import { ScopedFs } from "../src/fs/scoped-fs.ts";
import { defaultBashEnv } from "../src/tools/bash.ts";
import { createBuiltinTools } from "../src/tools/builtin-tools.ts";
import { tempDir } from "./helpers.ts";

let base: string;
let root: string;
let tools: Map<string, Tool>;

function ctx(signal: AbortSignal = new AbortController().signal): ToolExecutionContext {
  return { callId: "c1", batchId: "b1", callIndex: 0, batchSize: 1, turnIndex: 0, signal };
}

async function call(name: string, args: unknown, signal?: AbortSignal): Promise<ToolReturn> {
  const tool = tools.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool.execute(tool.inputSchema.parse(args), ctx(signal));
}

async function text(name: string, args: unknown): Promise<string> {
  const out = await call(name, args);
  if (typeof out === "string") return out;
  if (out.kind === "inline") return out.text;
  throw new Error("stored output");
}

async function toolError(name: string, args: unknown): Promise<string> {
  try {
    await call(name, args);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return (error as Error).message;
  }
  throw new Error(`expected ${name} to fail`);
}

beforeEach(async () => {
  base = await tempDir();
  root = path.join(base, "root");
  await mkdir(path.join(root, "src", "lib"), { recursive: true });
  await mkdir(path.join(root, "node_modules", "dep"), { recursive: true });
  await mkdir(path.join(base, "outside"));
  await writeFile(path.join(base, "outside", "secret.ts"), "export const SECRET = 'x';\n");
  await writeFile(
    path.join(root, "src", "a.ts"),
    "export const a = 1;\nexport function hello() {\n  return 'hi';\n}\n",
  );
  await writeFile(
    path.join(root, "src", "lib", "b.ts"),
    "import { a } from '../a';\nexport const b = a + 1; // TODO\n",
  );
  await writeFile(path.join(root, "README.md"), "# Title\nTODO: write docs\n");
  await writeFile(path.join(root, "node_modules", "dep", "index.ts"), "TODO in a dependency\n");
  await writeFile(
    path.join(root, "logo.png"),
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0x54, 0x4f, 0x44, 0x4f]),
  );
  await symlink(path.join(base, "outside"), path.join(root, "escape"));
  await symlink(path.join(base, "outside", "secret.ts"), path.join(root, "secret-link.ts"));
  const fs = await ScopedFs.create({ writeRoots: [root] });
  tools = new Map(createBuiltinTools({ view: new PodFsView(fs) }).map((t) => [t.name, t]));
});

describe("read_file", () => {
  it("numbers lines like cat -n", async () => {
    expect(await text("read_file", { path: "src/a.ts" })).toBe(
      "     1\texport const a = 1;\n     2\texport function hello() {\n     3\t  return 'hi';\n     4\t}\n",
    );
  });

  it("pages with offset/limit and says how to continue", async () => {
    const out = await text("read_file", { path: "src/a.ts", offset: 2, limit: 2 });
    expect(out).toBe(
      "     2\texport function hello() {\n     3\t  return 'hi';\n[line limit reached: showed lines 2-3; continue with offset=4]\n",
    );
  });

  it("reads a file past the binary sniff whole: a BOM, a character split by the sniff's end, every line", async () => {
    // 8 KiB is what the binary check reads first: lines up to byte 8191, then a 3-byte character across the cut.
    const lines = ["\uFEFFfirst"];
    const bytes = () => Buffer.byteLength(`${lines.join("\n")}\n`);
    while (bytes() < 8191 - 100) lines.push(`line ${lines.length + 1}: ${"x".repeat(50)}`);
    lines.push(`${"y".repeat(8191 - bytes())}\u4e2d\u6587 caf\u00e9`);
    for (let i = 0; i < 30; i++) lines.push(`after ${i}: \u4e2d caf\u00e9`);
    const content = Buffer.from(`${lines.join("\n")}\n`);
    expect(content[8192]! & 0xc0).toBe(0x80); // a continuation byte: the cut is inside a character
    await writeFile(path.join(root, "long.txt"), content);
    const want = lines
      .map((line, i) => `${String(i + 1).padStart(6)}\t${line.replace("\uFEFF", "")}\n`)
      .join("");
    expect(await text("read_file", { path: "long.txt" })).toBe(want);
    expect(await text("read_file", { path: "long.txt", offset: lines.length })).toBe(
      `${String(lines.length).padStart(6)}\t${lines.at(-1)}\n`,
    );
  });

  it("refuses binary files and paths out of scope with clear messages", async () => {
    expect(await toolError("read_file", { path: "logo.png" })).toBe(
      "logo.png is a damaged PNG image (the file is cut off)",
    );
    expect(await toolError("read_file", { path: "../outside/secret.ts" })).toMatch(/outside the scope/);
    expect(await toolError("read_file", { path: "secret-link.ts" })).toMatch(/through a symbolic link/);
    expect(await toolError("read_file", { path: "nope.ts" })).toBe("nope.ts: no such file or directory");
    expect(await toolError("read_file", { path: "src" })).toMatch(/is a directory; use list_dir/);
  });
});

describe("list_dir and glob", () => {
  it("lists directories first, marking dirs and links", async () => {
    const out = await text("list_dir", {});
    expect(out.split("\n")).toEqual([
      "./ (6 entries)",
      "node_modules/",
      "src/",
      "README.md",
      "escape@",
      "logo.png",
      "secret-link.ts@",
      "",
    ]);
    expect(await toolError("list_dir", { path: "escape" })).toMatch(/outside the scope/);
  });

  it("globs recursively without following links out or entering node_modules", async () => {
    const out = await text("glob", { pattern: "**/*.ts" });
    expect(out.trim().split("\n").sort()).toEqual(["src/a.ts", "src/lib/b.ts"]);
    expect((await text("glob", { pattern: "src/**/*.ts" })).trim().split("\n").sort()).toEqual([
      "src/a.ts",
      "src/lib/b.ts",
    ]);
    expect(await text("glob", { pattern: "nothing/**" })).toMatch(/No files match/);
  });
});

describe("grep", () => {
  it("finds matches as path:line:text, skipping binary files and node_modules", async () => {
    const out = await text("grep", { pattern: "TODO" });
    expect(out).toBe(
      "README.md:2:TODO: write docs\nsrc/lib/b.ts:2:export const b = a + 1; // TODO\n[2 matching lines in 2 files; 1 binary file skipped]\n",
    );
  });

  it("filters by glob, ignores case, lists files, caps matches", async () => {
    expect(await text("grep", { pattern: "todo", glob: "*.ts", ignore_case: true })).toMatch(
      /^src\/lib\/b.ts:2:/,
    );
    expect(await text("grep", { pattern: "export", output_mode: "files_with_matches" })).toBe(
      "src/a.ts\nsrc/lib/b.ts\n[2 files with matches; 1 binary file skipped]\n",
    );
    const capped = await text("grep", { pattern: "export", max_matches: 1 });
    expect(capped).toMatch(/^src\/a.ts:1:export const a = 1;\n\[stopped after 1 matching line/);
  });

  it("anchors and lookarounds match per line (the whole-file pre-check never hides a match)", async () => {
    expect(await text("grep", { pattern: "^export function", path: "src" })).toMatch(
      /^src\/a.ts:2:export function hello/,
    );
    expect(await text("grep", { pattern: "\\}$", path: "src/a.ts" })).toMatch(/^src\/a.ts:4:\}/);
    expect(await text("grep", { pattern: "(?<!\\n)^  return", path: "src/a.ts" })).toMatch(/^src\/a.ts:3:/);
    expect(await text("grep", { pattern: "hi'", path: "src/a.ts", context: 1 })).toBe(
      "src/a.ts-2-export function hello() {\nsrc/a.ts:3:  return 'hi';\nsrc/a.ts-4-}\n[1 matching line in 1 file]\n",
    );
  });

  it("reports a bad regex clearly", async () => {
    expect(await toolError("grep", { pattern: "(unclosed" })).toBe(
      "invalid regular expression /(unclosed/: Unterminated group. It is a JavaScript regular expression: put a backslash before ( ) [ ] { } . * + ? ^ $ | \\ to match one literally.",
    );
  });
});

describe("write_file and edit_file", () => {
  it("creates new files with parents, refuses to overwrite unread files", async () => {
    expect(await text("write_file", { path: "new/dir/c.ts", content: "x\ny\n" })).toBe(
      "Created new/dir/c.ts (4 bytes, 2 lines).",
    );
    expect(await readFile(path.join(root, "new", "dir", "c.ts"), "utf8")).toBe("x\ny\n");
    expect(await toolError("write_file", { path: "src/a.ts", content: "gone" })).toMatch(/has not been read/);
    await text("read_file", { path: "src/a.ts" });
    expect(await text("write_file", { path: "src/a.ts", content: "new" })).toMatch(/^Overwrote src\/a.ts/);
    expect(await toolError("write_file", { path: "escape/x.ts", content: "x" })).toMatch(/outside the scope/);
  });

  it("edits exactly once, requiring a fresh read", async () => {
    expect(
      await toolError("edit_file", { path: "src/a.ts", old_string: "'hi'", new_string: "'hey'" }),
    ).toMatch(/has not been read/);
    await text("read_file", { path: "src/a.ts" });
    const out = await text("edit_file", { path: "src/a.ts", old_string: "'hi'", new_string: "'hey'" });
    expect(out).toMatch(/^Edited src\/a.ts: replaced 1 occurrence.\n/);
    expect(out).toContain("     3\t  return 'hey';");
    expect(await readFile(path.join(root, "src", "a.ts"), "utf8")).toContain("return 'hey';");
    // A second edit right after our own edit needs no re-read.
    await text("edit_file", { path: "src/a.ts", old_string: "'hey'", new_string: "'yo'" });
  });

  it("fails on missing or ambiguous text unless replace_all", async () => {
    await text("read_file", { path: "src/a.ts" });
    expect(await toolError("edit_file", { path: "src/a.ts", old_string: "nope", new_string: "x" })).toMatch(
      /was not found in src\/a.ts/,
    );
    expect(await toolError("edit_file", { path: "src/a.ts", old_string: "export", new_string: "x" })).toBe(
      "old_string occurs 2 times in src/a.ts (lines 1, 2); include more surrounding text to make it unique, or set replace_all",
    );
    await text("edit_file", { path: "src/a.ts", old_string: "export ", new_string: "", replace_all: true });
    expect(await readFile(path.join(root, "src", "a.ts"), "utf8")).toBe(
      "const a = 1;\nfunction hello() {\n  return 'hi';\n}\n",
    );
  });

  it("refuses when the file changed since it was read", async () => {
    await text("read_file", { path: "src/a.ts" });
    await writeFile(path.join(root, "src", "a.ts"), "changed by someone else\n");
    const later = new Date(Date.now() + 5000);
    await utimes(path.join(root, "src", "a.ts"), later, later);
    expect(
      await toolError("edit_file", { path: "src/a.ts", old_string: "changed", new_string: "x" }),
    ).toMatch(/changed on disk since you last read it/);
  });

  it("keeps CRLF line endings and a BOM", async () => {
    await writeFile(path.join(root, "win.txt"), "\uFEFFone\r\ntwo\r\nthree\r\n");
    await text("read_file", { path: "win.txt" });
    await text("edit_file", { path: "win.txt", old_string: "one\ntwo", new_string: "1\n2" });
    expect(await readFile(path.join(root, "win.txt"), "utf8")).toBe("\uFEFF1\r\n2\r\nthree\r\n");
  });

  it("serializes parallel edits of one file", async () => {
    await writeFile(path.join(root, "p.txt"), "a b c d\n");
    await text("read_file", { path: "p.txt" });
    await Promise.all(
      ["a", "b", "c", "d"].map((w) =>
        call("edit_file", { path: "p.txt", old_string: w, new_string: w.toUpperCase() }),
      ),
    );
    expect(await readFile(path.join(root, "p.txt"), "utf8")).toBe("A B C D\n");
  });
});

describe("bash", () => {
  it("runs in the scope root and reports the exit code", async () => {
    expect(await text("bash", { command: "pwd; echo err >&2; exit 3" })).toBe(`${root}\nerr\n[exit code: 3]`);
  });

  it("does not pass provider API keys to commands", async () => {
    process.env.ANTHROPIC_API_KEY = "sk-should-not-leak";
    try {
      const fs = await ScopedFs.create({ writeRoots: [root] });
      const bash = createBuiltinTools({ view: new PodFsView(fs) }).find((t) => t.name === "bash")!;
      const out = await bash.execute({ command: "env" }, ctx());
      expect(JSON.stringify(out)).not.toContain("sk-should-not-leak");
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
    }
  });

  it("defaultBashEnv drops anything named like a credential, and keeps look-alikes", () => {
    const env = defaultBashEnv({
      PATH: "/bin",
      GITHUB_TOKEN: "g",
      NPM_TOKEN: "n",
      AWS_SECRET_ACCESS_KEY: "a",
      DB_PASSWORD: "p",
      MY_SERVICE_API_KEY: "k",
      TOKENIZERS_PARALLELISM: "false",
      KEYBOARD: "us",
    });
    expect(Object.keys(env).sort()).toEqual(
      ["GIT_PAGER", "GIT_TERMINAL_PROMPT", "KEYBOARD", "PAGER", "PATH", "TOKENIZERS_PARALLELISM"].sort(),
    );
  });

  it("defaultBashEnv drops known and configured key variables, keeps the rest", () => {
    const env = defaultBashEnv({ PATH: "/bin", OPENAI_API_KEY: "a", MY_GATEWAY_KEY: "b", HOME: "/h" }, [
      "MY_GATEWAY_KEY",
    ]);
    expect(env).toEqual({
      PATH: "/bin",
      HOME: "/h",
      PAGER: "cat",
      GIT_PAGER: "cat",
      GIT_TERMINAL_PROMPT: "0",
    });
  });

  it("kills the whole process group on timeout", async () => {
    const pidFile = path.join(root, "child.pid");
    const out = await call("bash", { command: `sleep 30 & echo $! > ${pidFile}; wait`, timeout_ms: 300 });
    expect(isToolOutput(out) && out.kind === "inline" && out.isError).toBe(true);
    expect(JSON.stringify(out)).toContain("[killed: timed out after 300 ms]");
    const pid = Number((await readFile(pidFile, "utf8")).trim());
    await expect.poll(() => alive(pid), { timeout: 5000 }).toBe(false);
  });

  it("kills the process group on cancel", async () => {
    const ac = new AbortController();
    const pidFile = path.join(root, "cancel.pid");
    const pending = call("bash", { command: `echo $$ > ${pidFile}; sleep 30` }, ac.signal);
    await expect.poll(async () => (await stat(pidFile).catch(() => undefined))?.size ?? 0).toBeGreaterThan(0);
    ac.abort();
    const out = await pending;
    expect(JSON.stringify(out)).toContain("[killed: cancelled]");
    const pid = Number((await readFile(pidFile, "utf8")).trim());
    await expect.poll(() => alive(pid), { timeout: 5000 }).toBe(false);
  });

  it("stores output over the cap with a head/tail summary", async () => {
    const out = await call("bash", { command: "seq 1 20000" });
    expect(isToolOutput(out) && out.kind === "stored").toBe(true);
    if (!isToolOutput(out) || out.kind !== "stored") return;
    expect(out.content).toMatchObject({ kind: "text" });
    const full = (out.content as { text: string }).text;
    expect(full.startsWith("1\n2\n")).toBe(true);
    expect(full.endsWith("20000\n[exit code: 0]")).toBe(true);
    expect(out.summary).toMatch(/^\[exit code: 0\] Output: 108894 bytes, 20000 lines/);
    expect(out.summary).toContain("inspect");
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
