import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { type Tool, ToolError, type ToolExecutionContext, type ToolReturn } from "@yoi/llm-worker";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PodFsView } from "../src/fs/fs-view.ts";
import { ScopedFs } from "../src/fs/scoped-fs.ts";
import { BACKGROUND_KEEP_BYTES, BackgroundShells } from "../src/tools/background-shells.ts";
import { createBuiltinTools } from "../src/tools/builtin-tools.ts";
import { tempDir } from "./helpers.ts";

let root: string;
let shells: BackgroundShells;
let tools: Map<string, Tool>;
let progress: string[];

function ctx(): ToolExecutionContext {
  return {
    callId: "c1",
    batchId: "b1",
    callIndex: 0,
    batchSize: 1,
    turnIndex: 0,
    signal: new AbortController().signal,
    progress: (text) => progress.push(text),
  };
}

async function text(name: string, args: unknown): Promise<string> {
  const tool = tools.get(name)!;
  const out: ToolReturn = await tool.execute(tool.inputSchema.parse(args), ctx());
  if (typeof out === "string") return out;
  if (out.kind === "inline") return out.text;
  throw new Error("stored output");
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeEach(async () => {
  root = await tempDir();
  shells = new BackgroundShells();
  progress = [];
  const fs = await ScopedFs.create({ writeRoots: [root] });
  tools = new Map(
    createBuiltinTools({ view: new PodFsView(fs), bash: { background: shells } }).map((t) => [t.name, t]),
  );
});

afterEach(async () => {
  await shells.killAll();
});

describe("live bash output", () => {
  it("reports the output as it arrives, and the result still carries all of it", async () => {
    const out = await text("bash", { command: "echo one; sleep 0.3; echo two" });
    expect(out).toBe("one\ntwo\n[exit code: 0]");
    expect(progress.join("")).toBe("one\ntwo\n");
    expect(progress.length).toBeGreaterThanOrEqual(2);
  });
});

describe("background bash", () => {
  it("answers at once with an id; bash_output returns only what is new, then the end and its exit code", async () => {
    const started = await text("bash", {
      command: "for i in 1 2 3; do echo tick $i; sleep 0.4; done; exit 4",
      run_in_background: true,
    });
    expect(started).toMatch(/^Started in the background with id: bash_1\n/);
    const first = await text("bash_output", { id: "bash_1", wait_ms: 5000 });
    expect(first).toContain("tick 1");
    expect(first).toMatch(/\[bash_1: running for \d+ s\]$/);
    await until(() => shells.get("bash_1")!.state !== "running", "the end");
    const second = await text("bash_output", { id: "bash_1" });
    expect(second).not.toContain("tick 1");
    expect(second).toContain("tick 3");
    expect(second).toMatch(/\[bash_1: ended: exit code 4\]$/);
    expect(await text("bash_output", { id: "bash_1" })).toBe("(no new output)\n[bash_1: ended: exit code 4]");
  });

  it("refuses an unknown id and a wait_ms out of range with messages that say what to do", async () => {
    const tool = tools.get("bash_output")!;
    await expect(tool.execute({ id: "bash_9" }, ctx())).rejects.toThrow(ToolError);
    await expect(tool.execute({ id: "bash_9" }, ctx())).rejects.toThrow(/None was started in this session/);
    expect(tool.inputSchema.safeParse({ id: "bash_1", wait_ms: 600_000 }).success).toBe(false);
    expect(tool.inputSchema.safeParse({ id: "bash_1", wait_ms: -1 }).success).toBe(false);
    await text("bash", { command: "sleep 5", run_in_background: true });
    await expect(tools.get("kill_bash")!.execute({ id: "nope" }, ctx())).rejects.toThrow(
      /ids of this session: bash_1/,
    );
  });

  it("kill_bash stops the command and what it started; killAll leaves no process behind", async () => {
    const pids = path.join(root, "pids");
    await text("bash", { command: `sleep 60 & echo $! > ${pids}; wait`, run_in_background: true });
    await until(async () => (await readFile(pids, "utf8").catch(() => "")).trim() !== "", "the pid file");
    const grandchild = Number((await readFile(pids, "utf8")).trim());
    expect(alive(grandchild)).toBe(true);
    expect(await text("kill_bash", { id: "bash_1" })).toMatch(/^bash_1 stopped/);
    await until(() => !alive(grandchild), "the grandchild to die");
    expect(shells.get("bash_1")!.state).toBe("killed");
    expect(await text("kill_bash", { id: "bash_1" })).toMatch(/had already ended/);

    const more = path.join(root, "more");
    await text("bash", { command: `sleep 60 & echo $! > ${more}; wait`, run_in_background: true });
    await until(async () => (await readFile(more, "utf8").catch(() => "")).trim() !== "", "the pid file");
    const other = Number((await readFile(more, "utf8")).trim());
    await shells.killAll();
    await until(() => !alive(other), "the second grandchild to die");
    expect(shells.running).toBe(0);
    expect(() => shells.start({ command: "true", callId: "x", spawn: () => undefined as never })).toThrow(
      /session has ended/,
    );
  });

  it("a shell that ends while what it started runs on: said in the output, stopped by kill_bash or the session's end", async () => {
    const pids = path.join(root, "left");
    await text("bash", { command: `sleep 60 & echo $! > ${pids}; echo shell done`, run_in_background: true });
    await until(() => shells.get("bash_1")!.state !== "running", "the shell to end");
    const left = Number((await readFile(pids, "utf8")).trim());
    expect(shells.get("bash_1")).toMatchObject({ state: "exited", exitCode: 0, leftRunning: true });
    expect(alive(left)).toBe(true);
    const out = await text("bash_output", { id: "bash_1" });
    expect(out).toContain("shell done\n");
    expect(out).toContain("processes it started still run");
    expect(await text("kill_bash", { id: "bash_1" })).toMatch(
      /the processes it left running were stopped\.$/,
    );
    await until(() => !alive(left), "what it left running to die");

    const again = path.join(root, "again");
    await text("bash", {
      command: `sleep 60 & echo $! > ${again}; echo shell done`,
      run_in_background: true,
    });
    await until(() => shells.get("bash_2")?.leftRunning === true, "the second shell to end");
    const other = Number((await readFile(again, "utf8")).trim());
    await shells.killAll();
    await until(() => !alive(other), "the session's end to stop it");
  });

  it("keeps only the tail of a large output and says how much was dropped", async () => {
    const lines = Math.ceil((BACKGROUND_KEEP_BYTES * 2) / 8);
    await text("bash", { command: `seq -w 1 ${lines} | sed 's/^/x/'; echo last`, run_in_background: true });
    await until(() => shells.get("bash_1")!.state !== "running", "the end");
    const out = await text("bash_output", { id: "bash_1" });
    expect(out).toMatch(/^\[\d+ bytes of earlier output dropped/);
    expect(out).toContain("last\n");
    expect(Buffer.byteLength(out)).toBeLessThan(BACKGROUND_KEEP_BYTES + 500);
  });
});
