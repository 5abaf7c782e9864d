import { getEventListeners } from "node:events";
import { mkdir } from "node:fs/promises";
import * as path from "node:path";
import { createClient } from "@yoi/llm-client";
import { startScriptedServer } from "@yoi/llm-client/testing";
import { listSessions, loadSession } from "@yoi/worker-persistence";
import { describe, expect, it } from "vitest";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

describe("what a resume reuses is in the session", () => {
  it("records the base URL and the permission mode, and logs mode switches", async () => {
    const base = await tempDir();
    const root = path.join(base, "project");
    const dataDir = path.join(base, "data");
    await mkdir(root, { recursive: true });
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "reply", text: "one" }],
    });
    try {
      const pod = await Pod.create({
        cwd: root,
        dataDir,
        fsync: "never",
        permissionMode: "acceptEdits",
        sessionStart: { baseURL: server.baseURL },
        client: createClient({
          provider: "anthropic",
          model: "claude-haiku-4-5",
          apiKey: "k",
          baseURL: server.baseURL,
        }),
      });
      pod.permissions.setMode("plan"); // before the log exists: session_start says plan
      await pod.run("hello");
      pod.permissions.setMode("default");
      await pod.close();
      const loaded = await loadSession({ dir: dataDir, id: pod.id });
      expect(loaded.records[0]).toMatchObject({
        type: "session_start",
        permissionMode: "plan",
        baseURL: server.baseURL,
      });
      expect(loaded.records.at(-1)).toMatchObject({
        type: "config_change",
        changes: { permissionMode: "default" },
      });
      expect(loaded.meta.permissionMode).toBe("default");
      const [row] = await listSessions({ dir: dataDir });
      expect(row).toMatchObject({ permissionMode: "default", baseURL: server.baseURL });
    } finally {
      await server.close();
    }
  });
});

describe("a caller's signal across runs", () => {
  it("is left as it was found when each run ends: one signal may serve many runs", async () => {
    const base = await tempDir();
    const root = path.join(base, "project");
    await mkdir(root, { recursive: true });
    const server = await startScriptedServer({
      provider: "anthropic",
      script: () => ({ type: "reply", text: "ok" }),
    });
    try {
      const pod = await Pod.create({
        cwd: root,
        dataDir: path.join(base, "data"),
        fsync: "never",
        client: createClient({
          provider: "anthropic",
          model: "claude-haiku-4-5",
          apiKey: "k",
          baseURL: server.baseURL,
        }),
      });
      const session = new AbortController();
      for (let i = 0; i < 12; i++) {
        const result = await pod.run(`turn ${i}`, { signal: session.signal });
        expect(result.status).toBe("completed");
      }
      // Each run used to leave its listener behind (and its controller with it): Node warns past 10.
      expect(getEventListeners(session.signal, "abort")).toHaveLength(0);
      // The signal still cancels the run it is given.
      const running = pod.run("one more", { signal: session.signal });
      session.abort(new Error("stop"));
      expect((await running).status).toBe("cancelled");
      await pod.close();
    } finally {
      await server.close();
    }
  });
});
