/**
 * A host that lost its session must not act for it. The log fences its
 * appends by the lease; tools are fenced by a check just before they run:
 * a host stopped past its lease while a permission question waits, whose
 * session another host took over meanwhile, gets "allow" afterwards and
 * still runs nothing. Real PostgreSQL, two stores as two hosts.
 */
import { mkdir, stat } from "node:fs/promises";
import * as path from "node:path";
import { createClient } from "@yoi/llm-client";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { ConfigSchema } from "@yoi/manifest";
import { PgStore } from "@yoi/worker-persistence/postgres";
import {
  findPostgresBinDir,
  startTestPostgres,
  type TestPostgres,
} from "@yoi/worker-persistence/postgres/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

// Without PostgreSQL server binaries these tests skip, unless YOI_REQUIRE_POSTGRES=1 (CI sets it).
const withPostgres = findPostgresBinDir() !== undefined || process.env.YOI_REQUIRE_POSTGRES === "1";

let pg: TestPostgres;
const servers: ScriptedServer[] = [];
const stores: PgStore[] = [];
const pods: Pod[] = [];
beforeAll(async () => {
  if (withPostgres) pg = await startTestPostgres();
}, 120_000);
afterAll(async () => {
  await pg?.stop();
});
afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.close().catch(() => {});
  for (const store of stores.splice(0)) await store.close(0).catch(() => {});
  for (const server of servers.splice(0)) await server.close();
});

describe.skipIf(!withPostgres)("a tool on a host that lost its session", () => {
  it("does not run after the answer when another host took the session over meanwhile", async () => {
    const url = await pg.createDatabase();
    // The heartbeat comes late enough that the waiting host looks stalled in between.
    const hostA = await PgStore.connect({ url, holder: "host-a", leaseMs: 2000, heartbeatMs: 1999 });
    const hostB = await PgStore.connect({ url, holder: "host-b", leaseMs: 5000 });
    stores.push(hostA, hostB);
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        { type: "reply", toolCalls: [{ id: "toolu_1", name: "bash", arguments: { command: "touch ran" } }] },
        { type: "reply", text: "done" },
      ],
    });
    servers.push(server);
    const root = path.join(await tempDir(), "project");
    await mkdir(root, { recursive: true });
    let takenOver = false;
    const pod = await Pod.create({
      cwd: root,
      config: ConfigSchema.parse({}),
      sessionStore: hostA.sessions,
      blobStore: hostA.blobs,
      client: createClient({
        provider: "anthropic",
        model: "claude-haiku-4-5",
        apiKey: "k",
        baseURL: server.baseURL,
        retry: { maxAttempts: 1 },
      }),
      bash: {},
      ask: async () => {
        // While the question waits: the lease runs out and host B opens the session.
        await hostA.sql`UPDATE yoi_session_leases SET expires_at = now() - interval '1 second'`;
        await new Promise((r) => setTimeout(r, 1100));
        const opened = await hostB.sessions.open(pod.id);
        await opened.log.close();
        takenOver = true;
        return "allow";
      },
    });
    pods.push(pod);
    const result = await pod.run("make a file");
    expect(takenOver).toBe(true);
    // The run ends, saying why, and names no disk as the cause.
    expect(result.status).toBe("failed");
    expect(result.error?.message).toMatch(/^Another host took this session over \(.*lease.*\)/);
    await expect(stat(path.join(root, "ran"))).rejects.toMatchObject({ code: "ENOENT" });
    // one model request: nothing went on after the tool was refused
    expect(server.requests).toHaveLength(1);
  }, 60_000);
});
