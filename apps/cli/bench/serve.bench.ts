/**
 * `yoi serve` under load: 100 sessions run at once, half on each of two
 * hosts sharing one PostgreSQL database, against a scripted model server
 * that answers at once. Reported: runs completed, and the p50/p99 latency
 * yoi adds per run (a run's time from POST to its `result` event, minus the
 * median time of the same streamed answer fetched from the model server
 * directly, 100 at once too). Then one session's next run on a host that
 * kept it open against one that reopens it for each run (YOI_SERVE_IDLE_MS=0:
 * lease taken, log replayed). Skipped with a note when no PostgreSQL server
 * binaries are installed.
 *
 *   pnpm exec node --conditions=@yoi/source apps/cli/bench/serve.bench.ts
 */
import { rm } from "node:fs/promises";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { startScriptedServer } from "@yoi/llm-client/testing";
import { findPostgresBinDir, startTestPostgres } from "@yoi/worker-persistence/postgres/testing";
import { median, report } from "../../../scripts/bench-kit.ts";
import { freshBundle } from "../fresh-bundle.ts";
import { cleanEnv, tempWorld } from "../test/helpers.ts";
import { post, sseEvents, startServe } from "../test/serve-helpers.ts";

// startServe runs the shipped dist/bin.js.
freshBundle((line) => process.stderr.write(`serve.bench: ${line}\n`));

const GROUP = "cli";
const SESSIONS = 100;
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
const env = cleanEnv(home, { YOI_TRUST_PROJECT: "1" });
const hosts = await Promise.all([
  startServe(["--store", url], env, project),
  startServe(["--store", url], env, project),
]);

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};

try {
  // The model's own time for one streamed answer, under the same concurrency.
  const direct = async () => {
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
    await res.text();
    return performance.now() - start;
  };
  await Promise.all(Array.from({ length: 10 }, direct));
  const modelMs = median(await Promise.all(Array.from({ length: SESSIONS }, direct)));

  const ids = await Promise.all(
    Array.from({ length: SESSIONS }, async (_, i) => {
      const host = hosts[i % 2]!;
      const res = await post(`${host.url}/v1/sessions`, { model: MODEL, baseUrl: model.baseURL });
      return { host, id: ((await res.json()) as { id: string }).id };
    }),
  );
  // warm both hosts (SDK load, first connections)
  for (const host of hosts) {
    const { id } = (await (
      await post(`${host.url}/v1/sessions`, { model: MODEL, baseUrl: model.baseURL })
    ).json()) as {
      id: string;
    };
    for await (const _ of sseEvents(await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "warm up" })));
  }
  const latencies: number[] = [];
  let completed = 0;
  const wall = performance.now();
  await Promise.all(
    ids.map(async ({ host, id }) => {
      const start = performance.now();
      const res = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "what is the answer?" });
      let status = `HTTP ${res.status}`;
      for await (const { data } of sseEvents(res)) if (data.type === "result") status = String(data.status);
      latencies.push(performance.now() - start);
      if (status === "completed") completed++;
    }),
  );
  const wallMs = performance.now() - wall;
  report({
    group: GROUP,
    name: `serve: ${SESSIONS} concurrent runs on 2 hosts, runs completed`,
    subject: completed,
    unit: "x",
    note: `${SESSIONS} sessions on one PostgreSQL; all in ${Math.round(wallMs)} ms`,
  });
  const added = latencies.map((l) => Math.max(0, l - modelMs));
  report({
    group: GROUP,
    name: `serve: ${SESSIONS} concurrent runs, p50 latency added by yoi`,
    subject: percentile(added, 50),
    unit: "ms",
    note: `model answer alone ${modelMs.toFixed(1)} ms (median of ${SESSIONS} direct at once); includes lease, replay, stored records`,
  });
  report({
    group: GROUP,
    name: `serve: ${SESSIONS} concurrent runs, p99 latency added by yoi`,
    subject: percentile(added, 99),
    unit: "ms",
    note: "2 hosts on this machine's cores, the database and the model server beside them",
  });

  // ---- the next run of a session: kept open on its host vs reopened ----
  // two fresh hosts: neither holds the sessions of the runs above
  const keeping = await startServe(["--store", url], env, project);
  const reopening = await startServe(["--store", url], { ...env, YOI_SERVE_IDLE_MS: "0" }, project);
  hosts.push(keeping, reopening);
  const TURNS = 40;
  const runOnce = async (host: (typeof hosts)[number], id: string) => {
    const start = performance.now();
    const res = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "what is the answer?" });
    for await (const { data } of sseEvents(res))
      if (data.type === "result" && data.status !== "completed") throw new Error(JSON.stringify(data));
    return performance.now() - start;
  };
  const sessionOn = async (host: (typeof hosts)[number]) => {
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
