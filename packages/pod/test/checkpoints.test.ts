import { mkdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient, pairToolResults } from "@yoi/llm-client";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { ConfigSchema } from "@yoi/manifest";
import { listSessions, loadSession, sessionBlobRefs } from "@yoi/worker-persistence";
import { afterEach, describe, expect, it } from "vitest";
import { forkSession, RewindError } from "../src/checkpoints/index.ts";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

const servers: ScriptedServer[] = [];
const pods: Pod[] = [];
afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.close().catch(() => {});
  for (const server of servers.splice(0)) await server.close();
});

const config = ConfigSchema.parse({
  permissions: { default: { write_file: "allow", edit_file: "allow", bash: "allow", read_file: "allow" } },
});

async function setup(script: ScriptStep[]) {
  const base = await tempDir();
  const root = path.join(base, "project");
  const dataDir = path.join(base, "data");
  await mkdir(root, { recursive: true });
  const server = await startScriptedServer({ provider: "anthropic", script, validate: true });
  servers.push(server);
  const client = () =>
    createClient({
      provider: "anthropic",
      model: "claude-haiku-4-5",
      apiKey: "k",
      baseURL: server.baseURL,
      retry: { maxAttempts: 1 },
    });
  const open = async (id?: string) => {
    const options = { cwd: root, dataDir, client: client(), config, fsync: "never" as const, bash: {} };
    const pod = id === undefined ? await Pod.create(options) : await Pod.restore(id, options);
    pods.push(pod);
    return pod;
  };
  return { root, dataDir, server, open };
}

const call = (id: string, name: string, args: Record<string, unknown>): ScriptStep => ({
  type: "reply",
  toolCalls: [{ id, name, arguments: args }],
});
const say = (text: string): ScriptStep => ({ type: "reply", text });

/** Once the session's first background command has ended: each file change in its log, as [file name, call]. */
async function changesWhenEnded(pod: Pod, dataDir: string): Promise<(string | undefined)[][]> {
  for (let i = 0; i < 400 && pod.background.get("bash_1")?.state === "running"; i++)
    await new Promise((r) => setTimeout(r, 25));
  await pod.flush();
  return (await loadSession({ dir: dataDir, id: pod.id })).records.flatMap((r) =>
    r.type === "file_change" ? [[path.basename(r.path), r.callId]] : [],
  );
}

/** Turn 1 writes a.txt; turn 2 edits it, and bash creates b.txt and deletes c.txt. */
const TWO_TURNS: ScriptStep[] = [
  call("t1", "write_file", { path: "a.txt", content: "one\n" }),
  say("wrote a"),
  call("t2", "edit_file", { path: "a.txt", old_string: "one", new_string: "two" }),
  call("t3", "bash", { command: "echo made > b.txt && rm c.txt" }),
  say("edited"),
];

const read = (root: string, name: string) => readFile(path.join(root, name), "utf8").catch(() => undefined);

describe("checkpoints and rewind", () => {
  it("keeps prior content of every tool change and rewinds files and conversation to before the last turn", async () => {
    const { root, dataDir, open } = await setup([...TWO_TURNS, say("after the rewind")]);
    await writeFile(path.join(root, "c.txt"), "keep me\n");
    const pod = await open();
    await pod.run("write a");
    const afterTurn1 = [...pod.history];
    await pod.run("edit a, make b, drop c");
    expect(await read(root, "a.txt")).toBe("two\n");
    expect(await read(root, "b.txt")).toBe("made\n");
    expect(await read(root, "c.txt")).toBeUndefined();

    const checkpoints = await pod.checkpoints();
    expect(checkpoints.map((c) => [c.kind, c.turn, c.label])).toEqual([
      ["turn", 1, "write a"],
      ["turn", 2, "edit a, make b, drop c"],
    ]);
    expect(checkpoints[1]!.files.map((f) => path.basename(f)).sort()).toEqual(["a.txt", "b.txt", "c.txt"]);

    const result = await pod.rewind();
    expect(result.checkpoint.turn).toBe(2);
    expect(await read(root, "a.txt")).toBe("one\n");
    expect(await read(root, "b.txt")).toBeUndefined();
    expect(await read(root, "c.txt")).toBe("keep me\n");
    expect(pod.history).toEqual(afterTurn1);

    // the log is append-only: the rewind is records, and a resume sees the rewound conversation
    const loaded = await loadSession({ dir: dataDir, id: pod.id });
    expect(loaded.records.filter((r) => r.type === "rewind")).toHaveLength(1);
    expect(loaded.history).toEqual(afterTurn1);
    // gc keeps the prior contents
    const refs = await sessionBlobRefs({ dir: dataDir });
    const kept = loaded.records.flatMap((r) =>
      r.type === "file_change" && r.before.kind === "file" && r.before.blob ? [r.before.blob] : [],
    );
    expect(kept.length).toBeGreaterThan(0);
    for (const blob of kept) expect(refs.has(blob)).toBe(true);

    // the session goes on after the rewind, with a request the provider accepts
    const next = await pod.run("carry on");
    expect(next.status).toBe("completed");
  });

  it("a background command's changes are checkpointed when it ends, under its call, and a rewind undoes them", async () => {
    const { root, open } = await setup([
      call("t1", "bash", { command: "sleep 0.5; echo late > late.txt", run_in_background: true }),
      say("started"),
      say("later"),
    ]);
    const pod = await open();
    await pod.run("start it");
    expect(await read(root, "late.txt")).toBeUndefined();
    for (let i = 0; i < 400 && pod.background.get("bash_1")?.state === "running"; i++)
      await new Promise((r) => setTimeout(r, 25));
    expect(pod.background.get("bash_1")?.state).toBe("exited");
    await pod.run("anything else?");
    expect(await read(root, "late.txt")).toBe("late\n");
    const checkpoints = await pod.checkpoints();
    const change = checkpoints.flatMap((c) => c.files).find((f) => path.basename(f) === "late.txt");
    expect(change).toBeDefined();
    await pod.rewind({ target: { kind: "turn", turn: 1 } });
    expect(await read(root, "late.txt")).toBeUndefined();
  });

  it("a background command's change is kept when a foreground command runs before it ends", async () => {
    const { root, dataDir, open } = await setup([
      call("t1", "bash", {
        command: "echo early > early.txt; while [ ! -e go ]; do sleep 0.05; done",
        run_in_background: true,
      }),
      say("started"),
      call("t2", "bash", { command: "touch go" }),
      say("went"),
    ]);
    const pod = await open();
    await pod.run("start it");
    // `>` creates the file before echo writes to it: wait for the content, not for the file.
    for (let i = 0; i < 400 && (await read(root, "early.txt")) !== "early\n"; i++)
      await new Promise((r) => setTimeout(r, 25));
    expect(await read(root, "early.txt")).toBe("early\n");
    // The foreground command's scan comes first: early.txt is the background command's change, not lost.
    await pod.run("let it go");
    const changes = await changesWhenEnded(pod, dataDir);
    expect(changes).toContainEqual(["early.txt", "t1"]);
    expect(changes).toContainEqual(["go", "t2"]);
    await pod.rewind({ target: { kind: "turn", turn: 1 } });
    expect(await read(root, "early.txt")).toBeUndefined();
  });

  it("a foreground command's change is its own even when a background command ends while it runs", async () => {
    const { root, dataDir, open } = await setup([
      call("t1", "bash", {
        command: "while [ ! -e go ]; do sleep 0.05; done; echo done > done.txt",
        run_in_background: true,
      }),
      say("started"),
      // The background command sees `go` and ends while this one still runs: its end is heard first.
      call("t2", "bash", { command: "touch go; sleep 0.5" }),
      say("went"),
    ]);
    const pod = await open();
    await pod.run("start it");
    await pod.run("let it go");
    const changes = await changesWhenEnded(pod, dataDir);
    expect(changes).toContainEqual(["go", "t2"]);
    // What the background command wrote on its way out is still recorded, under one of the two calls.
    expect(changes.map(([file]) => file)).toContain("done.txt");
    await pod.rewind({ target: { kind: "turn", turn: 2 } });
    expect(await read(root, "go")).toBeUndefined();
  });

  it("a rewind can be undone, and /undo walks back turn by turn", async () => {
    const { root, open } = await setup(TWO_TURNS);
    await writeFile(path.join(root, "c.txt"), "keep me\n");
    const pod = await open();
    await pod.run("write a");
    await pod.run("edit a, make b, drop c");
    const full = [...pod.history];
    await pod.rewind();
    const rewindPoint = (await pod.checkpoints()).findLast((c) => c.kind === "rewind");
    expect(rewindPoint).toBeDefined();
    await pod.rewind({ target: { kind: "seq", seq: rewindPoint!.seq } });
    expect(await read(root, "a.txt")).toBe("two\n");
    expect(await read(root, "b.txt")).toBe("made\n");
    expect(await read(root, "c.txt")).toBeUndefined();
    expect(pod.history).toEqual(full);

    // undo twice: before turn 2, then before turn 1
    await pod.rewind();
    expect(await read(root, "a.txt")).toBe("one\n");
    const second = await pod.rewind();
    expect(second.checkpoint.turn).toBe(1);
    expect(await read(root, "a.txt")).toBeUndefined();
    expect(pod.history).toEqual([]);
    await expect(pod.rewind()).rejects.toMatchObject({ code: "no_checkpoint" });
  });

  it("does not overwrite a file changed outside yoi unless forced; files-only and conversation-only rewinds", async () => {
    const { root, open } = await setup(TWO_TURNS);
    await writeFile(path.join(root, "c.txt"), "keep me\n");
    const pod = await open();
    await pod.run("write a");
    await pod.run("edit a, make b, drop c");
    await writeFile(path.join(root, "a.txt"), "my own edit\n");
    const error = await pod.rewind().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RewindError);
    expect((error as RewindError).code).toBe("conflict");
    expect((error as RewindError).message).toContain("a.txt (changed outside yoi since)");
    expect(await read(root, "a.txt")).toBe("my own edit\n");
    expect(await read(root, "b.txt")).toBe("made\n"); // nothing was touched

    // asked, and the answer is no
    await expect(pod.rewind({ confirm: async () => false })).rejects.toMatchObject({ code: "conflict" });
    const history = [...pod.history];
    const filesOnly = await pod.rewind({ files: true, conversation: false, confirm: async () => true });
    expect(filesOnly.forced.map((f) => path.basename(f))).toEqual(["a.txt"]);
    expect(await read(root, "a.txt")).toBe("one\n");
    expect(pod.history).toEqual(history);
    const convOnly = await pod.rewind({ files: false, conversation: true });
    expect(convOnly.restored).toEqual([]);
    expect(pod.history.length).toBeLessThan(history.length);
  });

  it("a restored session continues turn numbers and rewinds across the restart", async () => {
    const { root, open } = await setup([...TWO_TURNS]);
    await writeFile(path.join(root, "c.txt"), "keep me\n");
    const first = await open();
    await first.run("write a");
    await first.close();
    const again = await open(first.id);
    await again.run("edit a, make b, drop c");
    expect((await again.checkpoints()).map((c) => c.turn)).toEqual([1, 2]);
    await again.rewind({ target: { kind: "turn", turn: 1 } });
    expect(await read(root, "a.txt")).toBeUndefined();
    expect(await read(root, "c.txt")).toBe("keep me\n");
    await expect(again.rewind({ target: { kind: "turn", turn: 9 } })).rejects.toThrow(
      /no turn 9 in this session/,
    );
  });

  it("fork copies the history up to a turn into a new session that records its parent", async () => {
    const { dataDir, open } = await setup([...TWO_TURNS, say("in the fork")]);
    const pod = await open();
    await pod.run("write a");
    const afterTurn1 = [...pod.history];
    await pod.run("edit a, make b, drop c");
    await pod.close();
    const fork = await forkSession({ dataDir, parent: pod.id.slice(0, 13), beforeTurn: 2 });
    expect(fork.parentId).toBe(pod.id);
    const child = await open(fork.id);
    expect(child.history).toEqual(afterTurn1);
    const run = await child.run("go on differently");
    expect(run.status).toBe("completed");
    const rows = await listSessions({ dir: dataDir });
    expect(rows.find((r) => r.id === fork.id)?.parentSessionId).toBe(pod.id);
    // the parent is untouched
    expect((await loadSession({ dir: dataDir, id: pod.id })).history.length).toBeGreaterThan(
      afterTurn1.length,
    );
    expect(pairToolResults([...child.history]).repairs).toEqual([]);
    await expect(forkSession({ dataDir, parent: "zzzz" })).rejects.toMatchObject({ code: "not_found" });
  });
});
