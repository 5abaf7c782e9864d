/**
 * `yoi serve` under load: 200 sessions run at once, half on each of two
 * hosts sharing one PostgreSQL database, against a scripted model server
 * that answers at once. For each run, the time to its first event and to
 * its `result`, minus the model server's own time for the same streamed
 * answer (its first byte and its end, the median of as many fetched
 * directly at once): the p50 and p99 latency yoi adds. Measured for the
 * sessions' first runs (each host takes the lease and replays the log) and
 * for their next runs (kept open on their hosts). Then how the hosts' CPU
 * time per run grows with concurrent runs (50 against 200 at once), and one
 * session's next run on a host that kept it open against one that reopens
 * it for each run (YOI_SERVE_IDLE_MS=0: lease taken, log replayed).
 * Skipped with a note when no PostgreSQL server binaries are installed.
 *
 *   pnpm exec node --conditions=@yoi/source apps/cli/bench/serve.bench.ts
 */
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { startScriptedServer } from "@yoi/llm-client/testing";
import { findPostgresBinDir, startTestPostgres } from "@yoi/worker-persistence/postgres/testing";
import { median, pairedRatio, report } from "../../../scripts/bench-kit.ts";
import { freshBundle } from "../fresh-bundle.ts";
import { cleanEnv, tempWorld } from "../test/helpers.ts";
import { post, sseEvents, startServe } from "../test/serve-helpers.ts";

// startServe runs the shipped dist/bin.js.
freshBundle((line) => process.stderr.write(`serve.bench: ${line}\n`));

const GROUP = "cli";
const SESSIONS = Number(process.env.YOI_BENCH_SESSIONS ?? 200);
const MODEL = "openai-chat/gpt-4.1-mini";

if (findPostgresBinDir() === undefined) {
  process.stderr.write("serve.bench: no PostgreSQL server binaries; skipped\n");
  process.exit(0);
}

const pg = await startTestPostgres();
const model = await startScriptedServer({
  provider: "openai-chat",
  script: () => ({ type: "reply", text: "Done: the answer is 42." }),
});
const url = await pg.createDatabase();
const { home, project } = await tempWorld({ "a.txt": "alpha\n" });
const env = cleanEnv(home, {
  YOI_TRUST_PROJECT: "1",
  ...(process.env.YOI_BENCH_HOST_NODE_OPTIONS
    ? { NODE_OPTIONS: process.env.YOI_BENCH_HOST_NODE_OPTIONS }
    : {}),
});
const hosts = await Promise.all([
  startServe(["--store", url], env, project),
  startServe(["--store", url], env, project),
]);

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};

type Host = (typeof hosts)[number];

/** CPU time (user + system) both hosts used so far, ms (Linux /proc; clock ticks of 10 ms). */
function hostsCpuMs(): number {
  let ticks = 0;
  for (const host of hosts.slice(0, 2)) {
    const stat = readFileSync(`/proc/${host.child.pid}/stat`, "utf8");
    // fields after the command name, which is in parentheses and may hold spaces
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10;
}
interface Timing {
  /** POST to the first event. */
  first: number;
  /** POST to `result`. */
  end: number;
  status: string;
}

/** One run, timed from the POST to its first event and to its `result`. */
async function timedRun(host: Host, id: string): Promise<Timing> {
  const start = performance.now();
  const res = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "what is the answer?" });
  let status = `HTTP ${res.status}`;
  let first = Number.NaN;
  for await (const { data } of sseEvents(res)) {
    if (Number.isNaN(first)) first = performance.now() - start;
    if (data.type === "result") status = String(data.status);
  }
  return { first, end: performance.now() - start, status };
}

/** The model server's own time for one streamed answer: its first byte and its end. */
async function direct(): Promise<{ first: number; end: number }> {
  const start = performance.now();
  const res = await fetch(`${model.baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "gpt-4.1-mini",
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    }),
  });
  let first = Number.NaN;
  for await (const _ of res.body as unknown as AsyncIterable<Uint8Array>)
    if (Number.isNaN(first)) first = performance.now() - start;
  return { first, end: performance.now() - start };
}

/** `count` sessions' runs at once, the i-th on host i % 2. */
async function batch(sessions: { host: Host; id: string }[]): Promise<{ runs: Timing[]; wallMs: number }> {
  const wall = performance.now();
  const runs = await Promise.all(sessions.map(({ host, id }) => timedRun(host, id)));
  return { runs, wallMs: performance.now() - wall };
}

try {
  await Promise.all(Array.from({ length: 10 }, direct));
  const alone = await Promise.all(Array.from({ length: SESSIONS }, direct));
  const modelFirst = median(alone.map((t) => t.first));
  const modelEnd = median(alone.map((t) => t.end));

  const newSession = async (host: Host) => {
    const res = await post(`${host.url}/v1/sessions`, { model: MODEL, baseUrl: model.baseURL });
    return { host, id: ((await res.json()) as { id: string }).id };
  };
  // warm both hosts (SDK load, first connections)
  for (const host of hosts) {
    const { id } = await newSession(host);
    await timedRun(host, id);
  }
  const sessions = await Promise.all(Array.from({ length: SESSIONS }, (_, i) => newSession(hosts[i % 2]!)));

  const reportBatch = (label: string, { runs, wallMs }: { runs: Timing[]; wallMs: number }, note: string) => {
    const completed = runs.filter((r) => r.status === "completed").length;
    if (completed !== runs.length) {
      const failed = runs.find((r) => r.status !== "completed");
      throw new Error(
        `${runs.length - completed} of ${runs.length} runs did not complete (${failed?.status})`,
      );
    }
    const first = runs.map((r) => Math.max(0, r.first - modelFirst));
    const end = runs.map((r) => Math.max(0, r.end - modelEnd));
    for (const [what, values] of [
      ["first event", first],
      ["run end", end],
    ] as const) {
      report({
        group: GROUP,
        name: `serve: ${SESSIONS} concurrent ${label} on 2 hosts, ${what}, p50 added`,
        subject: percentile(values, 50),
        unit: "ms",
        note: `p99 ${percentile(values, 99).toFixed(0)} ms; ${completed} of ${runs.length} completed in ${Math.round(wallMs)} ms; ${note}`,
      });
      report({
        group: GROUP,
        name: `serve: ${SESSIONS} concurrent ${label} on 2 hosts, ${what}, p99 added`,
        subject: percentile(values, 99),
        unit: "ms",
        note: `model server alone: first byte ${modelFirst.toFixed(1)} ms, end ${modelEnd.toFixed(1)} ms (median of ${SESSIONS} fetched at once)`,
      });
    }
  };
  reportBatch("first runs", await batch(sessions), "each host takes the lease and replays the log");
  reportBatch("next runs", await batch(sessions), "sessions kept open on their hosts");

  // A host's CPU time per run as concurrent runs grow, 50 at once (25 a host)
  // against all of them: first runs (fresh sessions each batch) and next runs.
  // CPU time, from /proc, holds better than wall time on a shared machine.
  const perRun = async (group: typeof sessions) => {
    const before = hostsCpuMs();
    await batch(group);
    return (hostsCpuMs() - before) / group.length;
  };
  const fresh = (count: number) =>
    Promise.all(Array.from({ length: count }, (_, i) => newSession(hosts[i % 2]!)));
  const firstSmall: number[] = [];
  const firstLarge: number[] = [];
  const nextSmall: number[] = [];
  const nextLarge: number[] = [];
  for (let i = 0; i < 3; i++) {
    firstSmall.push(await perRun(await fresh(50)));
    firstLarge.push(await perRun(await fresh(SESSIONS)));
    nextSmall.push(await perRun(sessions.slice(0, 50)));
    nextLarge.push(await perRun(sessions));
  }
  for (const [what, large, small] of [
    ["first runs", firstLarge, firstSmall],
    ["next runs", nextLarge, nextSmall],
  ] as const) {
    report({
      group: GROUP,
      name: `serve: host CPU per run, ${SESSIONS} concurrent ${what} vs 50`,
      subject: median(large),
      baseline: median(small),
      ratio: pairedRatio(large, small),
      baselineName: `50 concurrent ${what}`,
      unit: "ms",
      note: `CPU time of both hosts (/proc) over a batch / its runs; 3 interleaved batches each (all: ${large.map((v) => v.toFixed(1)).join(", ")} vs ${small.map((v) => v.toFixed(1)).join(", ")})`,
    });
  }

  // ---- the next run of a session: kept open on its host vs reopened ----
  // two fresh hosts: neither holds the sessions of the runs above
  const keeping = await startServe(["--store", url], env, project);
  const reopening = await startServe(["--store", url], { ...env, YOI_SERVE_IDLE_MS: "0" }, project);
  hosts.push(keeping, reopening);
  const TURNS = 40;
  const runOnce = async (host: Host, id: string) => {
    const start = performance.now();
    const res = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "what is the answer?" });
    for await (const { data } of sseEvents(res))
      if (data.type === "result" && data.status !== "completed") throw new Error(JSON.stringify(data));
    return performance.now() - start;
  };
  const sessionOn = async (host: Host) => {
    const res = await post(`${host.url}/v1/sessions`, { model: MODEL, baseUrl: model.baseURL });
    const { id } = (await res.json()) as { id: string };
    for (let i = 0; i < TURNS; i++) await runOnce(host, id);
    return id;
  };
  const keptId = await sessionOn(keeping);
  const reopenedId = await sessionOn(reopening);
  const kept: number[] = [];
  const reopened: number[] = [];
  for (let i = 0; i < 15; i++) {
    reopened.push(await runOnce(reopening, reopenedId));
    kept.push(await runOnce(keeping, keptId));
  }
  report({
    group: GROUP,
    name: `serve: the next run of a ${TURNS}-run session, kept open vs reopened`,
    subject: median(kept),
    baseline: median(reopened),
    baselineName: "YOI_SERVE_IDLE_MS=0 (lease and replay each run)",
    unit: "ms",
    note: "POST to result, model answers at once; median of 15 interleaved runs each",
  });
} finally {
  await Promise.all(hosts.map((h) => h.stop()));
  await model.close();
  await pg.stop();
  // tempWorld cleans up after vitest only: the home and project are this script's to remove.
  await rm(path.dirname(home), { recursive: true, force: true });
}
