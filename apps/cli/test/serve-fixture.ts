/**
 * The set-up every `yoi serve` test file shares: one throwaway PostgreSQL
 * server for the file (when its binaries are there, or CI requires them),
 * and the serve hosts and scripted model servers a test started, ended
 * after each test.
 */
import type { ScriptedServer } from "@yoi/llm-client/testing";
import {
  findPostgresBinDir,
  startTestPostgres,
  type TestPostgres,
} from "@yoi/worker-persistence/postgres/testing";
import { afterAll, afterEach, beforeAll } from "vitest";
import type { ServeProcess } from "./serve-helpers.ts";

// Without PostgreSQL server binaries the PostgreSQL cases skip, unless YOI_REQUIRE_POSTGRES=1 (CI sets it).
export const withPostgres = findPostgresBinDir() !== undefined || process.env.YOI_REQUIRE_POSTGRES === "1";
/** The stores a case runs on: the local files, and PostgreSQL when there is one. */
export const STORES = withPostgres ? (["files", "postgres"] as const) : (["files"] as const);

export interface ServeFixture {
  /** The file's PostgreSQL server (undefined without one). */
  readonly pg: TestPostgres | undefined;
  /** Hosts to end after the test. */
  readonly hosts: ServeProcess[];
  /** Model servers to close after the test. */
  readonly models: ScriptedServer[];
}

/**
 * Registers the hooks. `end: "stop"` ends hosts with SIGTERM, so a host
 * stops the background commands of the sessions it holds; the default
 * SIGKILL is quicker.
 */
export function serveFixture(options: { end?: "kill" | "stop" } = {}): ServeFixture {
  const fixture = {
    pg: undefined as TestPostgres | undefined,
    hosts: [] as ServeProcess[],
    models: [] as ScriptedServer[],
  };
  beforeAll(async () => {
    if (withPostgres) fixture.pg = await startTestPostgres();
  }, 120_000);
  afterAll(async () => {
    await fixture.pg?.stop();
  });
  afterEach(async () => {
    for (const h of fixture.hosts.splice(0)) await (options.end === "stop" ? h.stop() : h.kill());
    for (const m of fixture.models.splice(0)) await m.close();
  });
  return fixture;
}
