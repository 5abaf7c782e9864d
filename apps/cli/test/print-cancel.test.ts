import { spawn } from "node:child_process";
import { readdir } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { loadSession } from "@yoi/worker-persistence";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, tempWorld, yoiArgv } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe("yoi -p and Ctrl-C", () => {
  it("SIGINT while the model stalls exits 130 with one line, and the session log is valid", async () => {
    const server = await startScriptedServer({ provider: "anthropic", script: [{ type: "silence" }] });
    servers.push(server);
    const { home, project } = await tempWorld();
    const [node, ...argv] = yoiArgv();
    const child = spawn(node!, [...argv, "-p", "-m", "anthropic/claude-haiku-4-5", "wait for it"], {
      cwd: project,
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.baseURL }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    // The request is in flight and the server says nothing: only a cancel ends this run.
    await until(() => server.requests.length === 1);
    child.kill("SIGINT");
    const code = await exited;

    expect(code).toBe(130);
    expect(stdout).toBe("");
    expect(stderr.trim().split("\n")).toEqual(["yoi: cancelled"]);
    const dataDir = path.join(home, ".yoi");
    const [file] = (await readdir(path.join(dataDir, "sessions"))).filter((f) => f.endsWith(".jsonl"));
    const loaded = await loadSession({ dir: dataDir, id: (file as string).replace(/\.jsonl$/, "") });
    expect(loaded.warnings).toEqual([]);
    const types = loaded.records.map((r) => r.type);
    expect(types.slice(0, 3)).toEqual(["session_start", "checkpoint", "user_input"]);
    expect(types.at(-1)).toBe("cancel");
  }, 60_000);
});
