/**
 * A full disk is an error: when the session log (or the blob store beside
 * it) cannot be written, the run stops, fails with `storage` and a message
 * that says what to do, and the next run refuses to start; nothing goes on
 * as done that is not recorded. The data directory is a small tmpfs the
 * test mounts (tests run as root in CI; elsewhere they are skipped).
 */
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient } from "@yoi/llm-client";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

const root = process.getuid?.() === 0;
const mounts: string[] = [];
const servers: ScriptedServer[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of mounts.splice(0)) execFileSync("umount", ["-l", dir]);
});

/** A data directory on a tmpfs of `size`, filled to the last few bytes. */
async function fullDisk(size: string): Promise<string> {
  const dir = path.join(await tempDir(), "data");
  await mkdir(dir, { recursive: true });
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir]);
  mounts.push(dir);
  // Fill it: the write stops at ENOSPC with whatever fitted.
  try {
    execFileSync("dd", ["if=/dev/zero", `of=${path.join(dir, "filler")}`, "bs=4k"], { stdio: "ignore" });
  } catch {
    // dd exits non-zero when the disk is full: that is the point.
  }
  return dir;
}

describe.runIf(root && process.platform === "linux")("a full disk", () => {
  it("fails the run with `storage` and a message that says what to do; the next run does not start", async () => {
    const dataDir = await fullDisk("256k");
    const project = await tempDir();
    await writeFile(path.join(project, "a.txt"), "hello\n");
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        { type: "reply", toolCalls: [{ id: "c1", name: "read_file", arguments: { path: "a.txt" } }] },
        { type: "reply", text: "the file says hello" },
      ],
    });
    servers.push(server);
    const client = createClient({
      provider: "anthropic",
      model: "claude-haiku-4-5",
      apiKey: "k",
      baseURL: server.baseURL,
      retry: { maxAttempts: 1 },
    });
    const pod = await Pod.create({ cwd: project, dataDir, client, fsync: "never", sandbox: false });
    try {
      const result = await pod.run("read a.txt");
      expect(result.status).toBe("failed");
      expect(result.error?.code).toBe("storage");
      expect(result.error?.message).toMatch(
        /session log could not be written \(.*(ENOSPC|no space).*\).*Free disk space/i,
      );
      const again = await pod.run("and again");
      expect(again).toMatchObject({ status: "failed", turns: 0, error: { code: "storage" } });
    } finally {
      await pod.close().catch(() => {});
    }
  }, 60_000);
});
