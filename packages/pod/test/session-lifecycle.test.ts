import { readdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient } from "@yoi/llm-client";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { ConfigSchema } from "@yoi/manifest";
import { listSessions, loadSession } from "@yoi/worker-persistence";
import { afterEach, describe, expect, it } from "vitest";
import type { ResolvedFileRef } from "../src/input/file-ref.ts";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

const servers: ScriptedServer[] = [];
const pods: Pod[] = [];

afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.close().catch(() => {});
  for (const server of servers.splice(0)) await server.close();
});

async function server(script: ScriptStep[]): Promise<ScriptedServer> {
  const s = await startScriptedServer({ provider: "anthropic", script, validate: true });
  servers.push(s);
  return s;
}

function client(s: ScriptedServer, model = "claude-haiku-4-5") {
  return createClient({
    provider: "anthropic",
    model,
    apiKey: "test-key",
    baseURL: s.baseURL,
    retry: { maxAttempts: 1 },
  });
}

async function project() {
  const base = await tempDir();
  const root = path.join(base, "project");
  const dataDir = path.join(base, "data");
  const { mkdir } = await import("node:fs/promises");
  await mkdir(root, { recursive: true });
  return { root, dataDir };
}

async function sessionFiles(dataDir: string): Promise<string[]> {
  return (await readdir(path.join(dataDir, "sessions")).catch(() => [])).filter((f) => f.endsWith(".jsonl"));
}

describe("the session log is created by the first input", () => {
  it("a pod opened and closed without input leaves no session behind", async () => {
    const { root, dataDir } = await project();
    const s = await server([]);
    const pod = await Pod.create({ cwd: root, dataDir, client: client(s), fsync: "never" });
    pod.alerts.info("test", "an alert before any input");
    expect(pod.log).toBeUndefined();
    await pod.close();
    expect(await sessionFiles(dataDir)).toEqual([]);
    expect(await listSessions({ dir: dataDir })).toEqual([]);
  });

  it("the first run creates it (early alerts after session_start) and restore continues it", async () => {
    const { root, dataDir } = await project();
    const s = await server([
      { type: "reply", text: "Hello." },
      { type: "reply", text: "Again." },
    ]);
    const pod = await Pod.create({ cwd: root, dataDir, client: client(s), fsync: "never" });
    pods.push(pod);
    pod.alerts.info("test", "raised before any input");
    expect((await pod.run("hi")).status).toBe("completed");
    expect(pod.log?.id).toBe(pod.id);
    await pod.close();

    const loaded = await loadSession({ dir: dataDir, id: pod.id });
    const types = loaded.records.map((r) => r.type);
    // each turn opens with a checkpoint (what a rewind goes back to)
    expect(types.slice(0, 4)).toEqual(["session_start", "alert", "checkpoint", "user_input"]);
    expect(loaded.records[0]).toMatchObject({ model: "claude-haiku-4-5", provider: "anthropic" });

    const restored = await Pod.restore(pod.id, { cwd: root, dataDir, client: client(s), fsync: "never" });
    pods.push(restored);
    expect(restored.log?.id).toBe(pod.id);
    expect(restored.history).toHaveLength(2);
    expect((await restored.run("again")).status).toBe("completed");
    expect(restored.history).toHaveLength(4);
    expect(await sessionFiles(dataDir)).toEqual([`${pod.id}.jsonl`]);
  });
});

describe("Pod.setModel", () => {
  it("switches the model, keeps history, logs config_change, and listSessions shows the new model", async () => {
    const { root, dataDir } = await project();
    const s = await server([
      { type: "reply", text: "From haiku." },
      { type: "reply", text: "From sonnet." },
    ]);
    // The new model is not in the catalog: its window is declared, as the strict context limit requires.
    const config = ConfigSchema.parse({
      models: { "claude-next-1": { provider: "anthropic", contextWindow: 200_000, maxOutputTokens: 8_192 } },
    });
    const pod = await Pod.create({ cwd: root, dataDir, client: client(s), fsync: "never", config });
    pods.push(pod);
    const seenModels: string[] = [];
    pod.subscribe((e) => {
      if (e.type === "usage") seenModels.push(pod.client.model);
    });
    await pod.run("first");
    pod.setModel(client(s, "claude-next-1"));
    expect(pod.client.model).toBe("claude-next-1");
    expect((await pod.run("second")).status).toBe("completed");
    expect(pod.history).toHaveLength(4);

    // The second request went to the new model with the whole conversation.
    const second = s.requests[1] as { model: string; messages: unknown[] };
    expect(second.model).toBe("claude-next-1");
    expect(JSON.stringify(second.messages)).toContain("From haiku.");
    await pod.close();

    const loaded = await loadSession({ dir: dataDir, id: pod.id });
    const change = loaded.records.find((r) => r.type === "config_change");
    expect(change).toMatchObject({
      model: "claude-next-1",
      changes: { model: "anthropic/claude-next-1", previous: "anthropic/claude-haiku-4-5" },
    });
    const usages = loaded.records
      .filter((r) => r.type === "usage")
      .map((r) => (r as { model?: string }).model);
    expect(usages).toEqual(["claude-haiku-4-5", "claude-next-1"]);
    const [row] = await listSessions({ dir: dataDir });
    expect(row?.model).toBe("claude-next-1");

    // A restored session runs on whatever client it is given; history is intact.
    const restored = await Pod.restore(pod.id, { cwd: root, dataDir, client: client(s), fsync: "never" });
    pods.push(restored);
    expect(restored.history).toHaveLength(4);
  });

  it("resolves a ref through the config, refuses during a run and for an unknown provider", async () => {
    const { root, dataDir } = await project();
    const s = await server([{ type: "silence" }]);
    const config = ConfigSchema.parse({
      providers: { local: { kind: "anthropic", baseURL: s.baseURL, apiKeyEnv: "LOCAL_KEY" } },
      models: { "tiny-model": { provider: "local", contextWindow: 8000, maxOutputTokens: 1000 } },
    });
    const pod = await Pod.create({
      config,
      cwd: root,
      dataDir,
      client: client(s),
      env: { LOCAL_KEY: "k" },
      fsync: "never",
    });
    pods.push(pod);
    expect(() => pod.setModel("nowhere/some-model")).toThrow(/nowhere/);
    expect(pod.client.model).toBe("claude-haiku-4-5");
    pod.setModel("local/tiny-model");
    expect(pod.client.model).toBe("tiny-model");

    const run = pod.run("hello");
    expect(() => pod.setModel(client(s))).toThrow(/a run is in progress/);
    pod.cancel();
    expect((await run).status).toBe("cancelled");
    await pod.close();
    // Switched before the log existed: session_start names the model in use.
    const loaded = await loadSession({ dir: dataDir, id: pod.id });
    expect(loaded.records[0]).toMatchObject({ type: "session_start", model: "tiny-model" });
    expect(loaded.records.some((r) => r.type === "config_change")).toBe(false);
  });
});

describe("the strict context limit after a model switch", () => {
  it("a model whose window is unknown is refused before anything is sent, with the entry to declare", async () => {
    const { root, dataDir } = await project();
    const s = await server([
      { type: "reply", text: "From haiku." },
      { type: "reply", text: "never sent" },
    ]);
    const pod = await Pod.create({ cwd: root, dataDir, client: client(s), fsync: "never" });
    pods.push(pod);
    // A todo list, so its re-attachment is part of the policy (it once hid the limit check).
    pod.todos.replace([{ content: "switch models", status: "in_progress" }]);
    expect((await pod.run("first")).status).toBe("completed");
    pod.setModel(client(s, "claude-unlisted-7"));
    const result = await pod.run("second");
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe("context_policy");
    expect(result.error?.message).toContain('Unknown model "claude-unlisted-7"');
    expect(result.error?.message).toContain('"models"');
    expect(s.requests).toHaveLength(1);
  });

  it("a window given with the switch is the new model's; the next switch without one goes by the catalog", async () => {
    const { root, dataDir } = await project();
    const s = await server([
      { type: "reply", text: "From the unlisted model." },
      { type: "reply", text: "never sent" },
    ]);
    // The pod starts with a window of its own (a model the catalog lacks, as the CLI does on a custom server).
    const pod = await Pod.create({
      cwd: root,
      dataDir,
      client: client(s, "local-start"),
      contextWindow: 64_000,
      fsync: "never",
    });
    pods.push(pod);
    // A bad window changes nothing: neither the model nor the window.
    expect(() => pod.setModel(client(s, "claude-unlisted-7"), { contextWindow: 0 })).toThrow(
      /positive integer/,
    );
    expect(pod.client.model).toBe("local-start");
    pod.setModel(client(s, "claude-unlisted-7"), { contextWindow: 100_000 });
    expect((await pod.run("first")).status).toBe("completed");
    // Switched again without a window: the start's 64k no longer stands in for an unknown model.
    pod.setModel(client(s, "claude-unlisted-8"));
    const refused = await pod.run("second");
    expect(refused.status).toBe("failed");
    expect(refused.error?.message).toContain('Unknown model "claude-unlisted-8"');
    expect(s.requests).toHaveLength(1);
  });
});

describe("cancel while @path refs are read", () => {
  it("does not wait for a slow read", async () => {
    const { root, dataDir } = await project();
    await writeFile(path.join(root, "a.txt"), "a\n");
    await writeFile(path.join(root, "b.txt"), "b\n");
    const s = await server([{ type: "reply", text: "never asked" }]);
    const pod = await Pod.create({ cwd: root, dataDir, client: client(s), fsync: "never" });
    pods.push(pod);
    // A read that hangs (a slow network mount): only the signal can end the wait.
    let release: (() => void) | undefined;
    const reads: string[] = [];
    const real = pod.view.resolveFileRef.bind(pod.view);
    pod.view.resolveFileRef = (ref: string, maxBytes?: number): Promise<ResolvedFileRef> => {
      reads.push(ref);
      return new Promise<void>((resolve) => {
        release = resolve;
      }).then(() => real(ref, maxBytes));
    };
    const run = pod.run("compare @a.txt with @b.txt");
    while (reads.length === 0) await new Promise((r) => setTimeout(r, 5));
    pod.cancel();
    const result = await run;
    expect(result.status).toBe("cancelled");
    expect(reads).toEqual(["a.txt"]); // stopped between refs too
    expect(s.requests).toHaveLength(0);
    release?.();
  });
});
