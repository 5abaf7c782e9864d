/**
 * The fault campaign of `yoi serve` on PostgreSQL, whole (the CI tests in
 * `test/serve-crash.test.ts` run a few trials of each): 20 hosts SIGKILLed
 * mid-run at different points of the stream, 5 hosts SIGSTOPped mid-run
 * past their lease then SIGCONTed after another host took the session, 5
 * database restarts mid-run. Reported: acknowledged records lost (the SSE
 * ids clients received that the store does not hold), records a stale host
 * appended after losing its lease, the clients told a clear error, and the
 * sessions that continued. Skipped with a note when no PostgreSQL server
 * binaries are installed.
 *
 *   pnpm bench serve-faults
 */
import { rm } from "node:fs/promises";
import * as path from "node:path";
import { findPostgresBinDir, startTestPostgres } from "@yoi/worker-persistence/postgres/testing";
import postgres from "postgres";
import { median, report } from "../../../scripts/bench-kit.ts";
import { freshBundle } from "../fresh-bundle.ts";
import { cleanEnv, tempWorld } from "../test/helpers.ts";
import {
  type FaultWorld,
  type KillOutcome,
  killMidRun,
  type RestartOutcome,
  restartDatabase,
  type StopOutcome,
  startFaultModel,
  stopPastLease,
} from "../test/serve-faults.ts";
import { startServe } from "../test/serve-helpers.ts";

// The hosts run the shipped dist/bin.js.
freshBundle((line) => process.stderr.write(`serve-faults.bench: ${line}\n`));

const GROUP = "cli";
const KILLS = 20;
const STOPS = 5;
const RESTARTS = 5;
/** Kill trials run this many at a time (each with its own doomed host). */
const PARALLEL = 7;
const KILL_LEASE_MS = 2500;
const STOP_LEASE_MS = 1500;

if (findPostgresBinDir() === undefined) {
  process.stderr.write("serve-faults.bench: no PostgreSQL server binaries; skipped\n");
  process.exit(0);
}

const pg = await startTestPostgres();
const model = await startFaultModel();
const { home, project } = await tempWorld({ "a.txt": "alpha\n" });
const worlds: FaultWorld[] = [];
const sqls: ReturnType<typeof postgres>[] = [];

async function world(leaseMs: number) {
  const url = await pg.createDatabase();
  const env = cleanEnv(home, { YOI_TRUST_PROJECT: "1", YOI_SERVE_LEASE_MS: String(leaseMs) });
  const made: FaultWorld = { url, model, env, project, hosts: [] };
  worlds.push(made);
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  sqls.push(sql);
  return { w: made, sql };
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const completed = (result: Record<string, unknown> | undefined) => result?.status === "completed";
/** A failed result with the store error code and a message: what a client is told. */
const clearError = (result: Record<string, unknown> | undefined) => {
  const error = result?.error as { code?: string; message?: string } | undefined;
  return result?.status === "failed" && error?.code === "store_unavailable" && (error.message ?? "") !== "";
};
const messageOf = (result: Record<string, unknown> | undefined) =>
  String((result?.error as { message?: string } | undefined)?.message ?? "none").slice(0, 160);

try {
  // ---- SIGKILL mid-run ----
  {
    const { w, sql } = await world(KILL_LEASE_MS);
    const survivor = await startServe(["--store", w.url], w.env, w.project);
    w.hosts.push(survivor);
    const kills: KillOutcome[] = [];
    for (let start = 0; start < KILLS; start += PARALLEL) {
      const batch = Array.from({ length: Math.min(PARALLEL, KILLS - start) }, (_, k) =>
        killMidRun(w, sql, survivor, start + k),
      );
      kills.push(...(await Promise.all(batch)));
      // the doomed hosts of the batch are dead: forget them
      w.hosts.splice(1);
    }
    const acked = sum(kills.map((k) => k.ack + 1));
    report({
      group: GROUP,
      name: `serve faults: ${KILLS} SIGKILLs mid-run, acknowledged records lost`,
      subject: sum(kills.map((k) => k.lost)),
      unit: "x",
      note: `${acked} records acknowledged to clients before the kills; gaps in stored seqs ${kills.filter((k) => !k.contiguous).length}; dead hosts' records changed by the takeover ${kills.filter((k) => !k.prefixKept).length}`,
    });
    report({
      group: GROUP,
      name: `serve faults: ${KILLS} SIGKILLs mid-run, sessions continued on another host`,
      subject: kills.filter((k) => completed(k.result) && k.result?.text === "resumed").length,
      unit: "x",
      note: `409 naming the dead host ${sum(kills.map((k) => k.busy))} times while its lease lived, a takeover before it expired ${sum(kills.map((k) => k.earlyTakeovers))} times, a 409 naming another holder ${kills.filter((k) => k.wrongHolder !== undefined).length} times; kill to takeover p50 ${Math.round(median(kills.map((k) => k.takeoverMs)))} ms (lease ${KILL_LEASE_MS} ms)`,
    });
  }

  // ---- SIGSTOP past the lease, then SIGCONT ----
  {
    const { w, sql } = await world(STOP_LEASE_MS);
    const stops: StopOutcome[] = [];
    for (let i = 0; i < STOPS; i++) {
      stops.push(await stopPastLease(w, sql));
      for (const h of w.hosts.splice(0)) await h.kill();
    }
    report({
      group: GROUP,
      name: `serve faults: ${STOPS} SIGSTOPs mid-run past the lease, records the stale host appended after SIGCONT`,
      subject: sum(stops.map((s) => s.staleAppends)),
      unit: "x",
      note: `acknowledged records lost ${sum(stops.map((s) => s.lost))}; the stale host logged the lost lease ${stops.filter((s) => s.saidLost).length}/${STOPS} and answered later runs 409 naming the new holder ${stops.filter((s) => s.staleHostAnswer.status === 409).length}/${STOPS}`,
    });
    report({
      group: GROUP,
      name: `serve faults: ${STOPS} SIGSTOPs mid-run past the lease, stale clients told a clear error`,
      subject: stops.filter((s) => clearError(s.staleResult)).length,
      unit: "x",
      note: `sessions continued on the new host ${stops.filter((s) => completed(s.takeoverResult) && completed(s.nextResult)).length}/${STOPS}; the stale client read: "${messageOf(stops[0]?.staleResult)}"`,
    });
  }

  // ---- the database restarted mid-run ----
  {
    const { w, sql } = await world(30_000);
    const restarts: RestartOutcome[] = [];
    for (let i = 0; i < RESTARTS; i++) {
      restarts.push(await restartDatabase(w, sql, pg));
      for (const h of w.hosts.splice(0)) await h.kill();
    }
    report({
      group: GROUP,
      name: `serve faults: ${RESTARTS} PostgreSQL restarts mid-run, acknowledged records lost`,
      subject: sum(restarts.map((r) => r.lost)),
      unit: "x",
      note: `${sum(restarts.map((r) => r.ack + 1))} records acknowledged; gaps ${restarts.filter((r) => !r.contiguous).length}; hosts still up ${restarts.filter((r) => r.hostAlive).length}/${RESTARTS}`,
    });
    report({
      group: GROUP,
      name: `serve faults: ${RESTARTS} PostgreSQL restarts mid-run, clients told a clear error and resumed`,
      subject: restarts.filter((r) => clearError(r.failedResult) && completed(r.resumedResult)).length,
      unit: "x",
      note: `listing answered 503 while down ${restarts.filter((r) => r.downStatus === 503).length}/${RESTARTS}; the client read: "${messageOf(restarts[0]?.failedResult)}"`,
    });
  }
} finally {
  for (const w of worlds) for (const h of w.hosts) await h.kill();
  for (const sql of sqls) await sql.end({ timeout: 0 });
  await model.close();
  await pg.stop();
  // tempWorld cleans up after vitest only: the home and project are this script's to remove.
  await rm(path.dirname(home), { recursive: true, force: true });
}
