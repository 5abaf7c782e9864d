/**
 * One recorder of worker events: the pod writes its session log through
 * worker-persistence's WorkerEventRecords, the same mapping `recordWorker`
 * uses, so a resumed history and the records that carry it are the same
 * whichever path wrote them. Both paths run the same scripted conversation
 * (a client retry after output included) through the real client and SDK.
 */
import * as path from "node:path";
import { createClient } from "@yoi/llm-client";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { Worker } from "@yoi/llm-worker";
import {
  createSession,
  loadSession,
  recordWorker,
  replayHistory,
  type SessionRecord,
} from "@yoi/worker-persistence";
import { afterEach, describe, expect, it } from "vitest";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

function script(): ScriptStep[] {
  const first = "Hello there, this is the first answer.";
  return [
    // Torn after some output: the client retries it from the start.
    { type: "reply", text: first, options: { chunkSize: 4 }, truncateBytes: 400, end: "close" },
    { type: "reply", text: first, options: { chunkSize: 4 } },
    { type: "reply", text: "And a second one." },
  ];
}

async function clientFor() {
  const s = await startScriptedServer({ provider: "anthropic", script: script() });
  servers.push(s);
  return createClient({
    provider: "anthropic",
    model: "claude-haiku-4-5",
    apiKey: "test-key",
    baseURL: s.baseURL,
    retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 2 },
  });
}

/** Records that are not the pod's own (session start, config, checkpoints, title). */
const POD_ONLY = new Set(["session_start", "config_change", "checkpoint", "title"]);

/** What a resumed session is built from: the worker's records, without ids, times and alerts' wording. */
function shape(records: SessionRecord[]): string[] {
  return records
    .filter((r) => !POD_ONLY.has(r.type))
    .map((r) => {
      const t = r as SessionRecord & { reason?: string; index?: number; turn?: number; source?: string };
      if (r.type === "item") return `item:${t.reason}:${t.index}:${t.turn}`;
      if (r.type === "alert") return `alert:${t.source}`;
      return r.type;
    });
}

describe("the pod and recordWorker write the same session", () => {
  it("a resumed history, and the records it comes from, are the same from both paths", async () => {
    const base = await tempDir();
    const root = path.join(base, "project");
    const { mkdir } = await import("node:fs/promises");
    await mkdir(root, { recursive: true });

    // Path 1: the pod.
    const podData = path.join(base, "pod-data");
    const pod = await Pod.create({ cwd: root, dataDir: podData, client: await clientFor(), fsync: "never" });
    expect((await pod.run("hi")).status).toBe("completed");
    expect((await pod.run("again")).status).toBe("completed");
    const podHistory = [...pod.history];
    await pod.close();
    const podLog = await loadSession({ dir: podData, id: pod.id });

    // Path 2: a plain worker with recordWorker.
    const plainData = path.join(base, "plain-data");
    const worker = new Worker({ client: await clientFor(), tools: pod.worker.tools.slice() });
    const log = await createSession({ dir: plainData, model: "claude-haiku-4-5", cwd: root, fsync: "never" });
    const recorder = recordWorker(log, worker, { model: () => "claude-haiku-4-5" });
    for (const input of ["hi", "again"]) {
      await log.userInput(input, [{ type: "text", text: input }]);
      expect((await worker.run(input)).status).toBe("completed");
    }
    await recorder.stop();
    await log.close();
    const plainLog = await loadSession({ dir: plainData, id: log.id });

    expect(replayHistory(podLog.records)).toEqual(podHistory);
    expect(replayHistory(plainLog.records)).toEqual([...worker.history]);
    expect(replayHistory(podLog.records)).toEqual(replayHistory(plainLog.records));
    expect(shape(podLog.records)).toEqual(shape(plainLog.records));
    // The client's retry is in both logs, once.
    expect(shape(podLog.records).filter((r) => r === "alert:retry:client")).toHaveLength(1);
  });
});
