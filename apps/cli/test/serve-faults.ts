/**
 * The faults of the `yoi serve` campaign on PostgreSQL, one function each,
 * shared by the CI tests (a few trials, asserted) and the campaign bench
 * (`apps/cli/bench/serve-faults.bench.ts`, every trial, counted):
 * - a host SIGKILLed mid-run, at a different point of the stream each trial;
 * - a host SIGSTOPped mid-run past its lease, another host taking the
 *   session over, then SIGCONT;
 * - the database restarted mid-run.
 * Each returns what happened (what the client was acknowledged, what the
 * store holds, what the clients were told); the caller judges it.
 */
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import type { TestPostgres } from "@yoi/worker-persistence/postgres/testing";
import type postgres from "postgres";
import { post, type ServeProcess, sseEvents, startServe } from "./serve-helpers.ts";

export const FAULT_MODEL = "openai-chat/gpt-4.1-mini";

interface Message {
  role: string;
  content: unknown;
  tool_calls?: { function: { name: string } }[];
}

/**
 * The model of every trial, by the conversation: "read a.txt" calls
 * read_file, whose result is never answered (the host is killed while it
 * waits, or earlier); "write x.txt" calls write_file (a permission
 * question), whose result gets "noted"; "continue" gets "resumed".
 */
export function startFaultModel(): Promise<ScriptedServer> {
  return startScriptedServer({
    provider: "openai-chat",
    script: (_index, body): ScriptStep => {
      const messages = (body as { messages: Message[] }).messages;
      const last = messages.at(-1);
      if (last?.role === "tool") {
        const called = messages.findLast((m) => m.role === "assistant")?.tool_calls?.[0]?.function.name;
        return called === "read_file" ? { type: "silence" } : { type: "reply", text: "noted" };
      }
      const text = typeof last?.content === "string" ? last.content : JSON.stringify(last?.content);
      if (text.includes("continue")) return { type: "reply", text: "resumed" };
      if (text.includes("write x.txt"))
        return {
          type: "reply",
          toolCalls: [
            { id: `call_${messages.length}`, name: "write_file", arguments: { path: "x.txt", content: "x" } },
          ],
        };
      return {
        type: "reply",
        text: "Reading.",
        toolCalls: [{ id: `call_${messages.length}`, name: "read_file", arguments: { path: "a.txt" } }],
      };
    },
  });
}

/** What one trial needs: the database, the model, and how to start a host. */
export interface FaultWorld {
  url: string;
  model: ScriptedServer;
  env: Record<string, string>;
  project: string;
  /** Hosts started for the trial are registered here (the caller ends them). */
  hosts: ServeProcess[];
}

type Sql = ReturnType<typeof postgres>;

async function host(world: FaultWorld, env: Record<string, string> = {}): Promise<ServeProcess> {
  const started = await startServe(["--store", world.url], { ...world.env, ...env }, world.project);
  world.hosts.push(started);
  return started;
}

async function newSession(world: FaultWorld, on: ServeProcess): Promise<string> {
  const created = await post(`${on.url}/v1/sessions`, { model: FAULT_MODEL, baseUrl: world.model.baseURL });
  if (created.status !== 201) throw new Error(`create: HTTP ${created.status} ${await created.text()}`);
  return ((await created.json()) as { id: string }).id;
}

async function records(sql: Sql, id: string): Promise<{ seq: number; line: string }[]> {
  return [
    ...(await sql<{ seq: number; line: string }[]>`
    SELECT seq, line FROM yoi_session_records WHERE session_id = ${id} ORDER BY seq`),
  ];
}

/** Acknowledged seqs (0 through `ack`) that the store does not hold. */
function lostOf(rows: { seq: number }[], ack: number): number {
  const held = new Set(rows.map((r) => r.seq));
  let lost = 0;
  for (let seq = 0; seq <= ack; seq++) if (!held.has(seq)) lost++;
  return lost;
}

/** Whether the seqs are 0, 1, 2, ... with no gap. */
function contiguous(rows: { seq: number }[]): boolean {
  return rows.every((r, k) => r.seq === k);
}

export interface KillOutcome {
  /** The highest SSE id the client received before the kill (-1: none). */
  ack: number;
  /** Records stored when the host died. */
  stored: number;
  /** Acknowledged records missing from the store. */
  lost: number;
  /** Whether the stored seqs have no gap. */
  contiguous: boolean;
  /** Takeover attempts answered 409 naming the dead host while its lease was live. */
  busy: number;
  /** Attempts that got something else than 409 while the dead host's lease was still live (must be 0). */
  earlyTakeovers: number;
  /** A 409 that named another holder than the dead host. */
  wrongHolder: string | undefined;
  /** The takeover run's result event. */
  result: Record<string, unknown> | undefined;
  /** The records of the dead host, unchanged after the takeover appended its own. */
  prefixKept: boolean;
  /** Records the takeover appended. */
  appended: number;
  /** ms from the kill to the takeover's accepted run. */
  takeoverMs: number;
}

/**
 * SIGKILLs a fresh host after the `i % 7`-th event of a run (0: the session
 * event ... up to the tool's end), then sends "continue" to `survivor`
 * until it takes the session over (409 while the dead host's lease lives).
 */
export async function killMidRun(
  world: FaultWorld,
  sql: Sql,
  survivor: ServeProcess,
  i: number,
): Promise<KillOutcome> {
  const doomed = await host(world);
  let ack = -1;
  let id = "";
  let killedAt = 0;
  try {
    id = await newSession(world, doomed);
    const run = await post(`${doomed.url}/v1/sessions/${id}/runs`, { prompt: `task ${i}: read a.txt` });
    if (run.status !== 200) throw new Error(`run: HTTP ${run.status} ${await run.text()}`);
    const killAfter = i % 7;
    let seen = 0;
    try {
      for await (const event of sseEvents(run)) {
        if (event.id !== undefined) ack = Math.max(ack, event.id);
        if (seen++ >= killAfter || event.data.type === "tool_end") {
          // killed while the client still listens (a disconnect would cancel the run instead)
          killedAt = performance.now();
          await doomed.kill();
          break;
        }
      }
    } catch (error) {
      if (killedAt === 0) throw error; // the torn connection of the killed host is expected
    }
  } finally {
    await doomed.kill();
    killedAt ||= performance.now();
  }
  const rows = await records(sql, id);
  const outcome: KillOutcome = {
    ack,
    stored: rows.length,
    lost: lostOf(rows, ack),
    contiguous: contiguous(rows),
    busy: 0,
    earlyTakeovers: 0,
    wrongHolder: undefined,
    result: undefined,
    prefixKept: false,
    appended: 0,
    takeoverMs: Number.NaN,
  };
  // bounded, and far past the lease: hosts take turns on loaded cores
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    // How long the dead host's lease still runs, by the database's clock: an attempt answered
    // within that time was decided while the lease was live, so it must be refused.
    const [lease] = await sql<{ left_ms: number }[]>`
      SELECT (extract(epoch FROM expires_at - now()) * 1000)::float8 AS left_ms
      FROM yoi_session_leases WHERE session_id = ${id}`;
    const asked = performance.now();
    const attempt = await post(`${survivor.url}/v1/sessions/${id}/runs`, { prompt: "continue" });
    const live = lease !== undefined && performance.now() - asked < lease.left_ms;
    if (attempt.status === 409) {
      const error = ((await attempt.json()) as { error: { holder: string } }).error;
      if (!error.holder.endsWith(`:${doomed.child.pid}`)) outcome.wrongHolder = error.holder;
      outcome.busy++;
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    if (live) outcome.earlyTakeovers++;
    outcome.takeoverMs = performance.now() - killedAt;
    for await (const { data } of sseEvents(attempt)) if (data.type === "result") outcome.result = data;
    break;
  }
  const after = await records(sql, id);
  outcome.prefixKept = rows.every((r, k) => after[k]?.seq === r.seq && after[k]?.line === r.line);
  outcome.appended = after.length - rows.length;
  return outcome;
}

export interface StopOutcome {
  /** The highest SSE id the stopped host's client received. */
  ack: number;
  /** Acknowledged records missing from the store at the end. */
  lost: number;
  /** Records stored once the second host's run ended, and at the end. */
  storedAtTakeover: number;
  storedAtEnd: number;
  /** Records the stopped host appended after it lost the lease (must be 0). */
  staleAppends: number;
  /** The stopped host's client: the last event of its stream after SIGCONT. */
  staleResult: Record<string, unknown> | undefined;
  /** The taking host's run result, and a later one there. */
  takeoverResult: Record<string, unknown> | undefined;
  nextResult: Record<string, unknown> | undefined;
  /** What the stopped host answers a new run for the session afterwards (409 naming the new holder). */
  staleHostAnswer: { status: number; holder?: string };
  /** Whether the stopped host logged that it lost the lease. */
  saidLost: boolean;
}

async function resultOf(response: Response): Promise<Record<string, unknown> | undefined> {
  let result: Record<string, unknown> | undefined;
  for await (const { data } of sseEvents(response)) if (data.type === "result") result = data;
  return result;
}

/** Sends a run until a host accepts it (409 while another holds the session); its result. */
async function runWhenFree(on: ServeProcess, id: string, prompt: string) {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    const response = await post(`${on.url}/v1/sessions/${id}/runs`, { prompt });
    if (response.status === 409) {
      await response.body?.cancel();
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    if (response.status !== 200) throw new Error(`run: HTTP ${response.status} ${await response.text()}`);
    return resultOf(response);
  }
  throw new Error(`session ${id} was still held after 90 s`);
}

/**
 * Host A waits on a permission question of a run when it is SIGSTOPped;
 * host B takes the session over once A's lease (`leaseMs`, set in the
 * world's env) has run out and completes a run; A is SIGCONTed and its
 * client denies the question, so A's run tries to append.
 */
export async function stopPastLease(world: FaultWorld, sql: Sql): Promise<StopOutcome> {
  const a = await host(world);
  const b = await host(world);
  const id = await newSession(world, a);
  const run = await post(`${a.url}/v1/sessions/${id}/runs`, { prompt: "write x.txt" });
  if (run.status !== 200) throw new Error(`run: HTTP ${run.status} ${await run.text()}`);
  let ack = -1;
  let staleResult: Record<string, unknown> | undefined;
  let takeoverResult: Record<string, unknown> | undefined;
  let storedAtTakeover = 0;
  for await (const event of sseEvents(run)) {
    if (event.id !== undefined) ack = Math.max(ack, event.id);
    if (event.data.type === "result") staleResult = event.data;
    if (event.data.type !== "permission_request") continue;
    a.child.kill("SIGSTOP");
    try {
      takeoverResult = await runWhenFree(b, id, "continue");
      storedAtTakeover = (await records(sql, id)).length;
    } finally {
      a.child.kill("SIGCONT");
    }
    // the question is answered: the stopped run goes on, and its next append meets B's lease
    const denied = await post(`${a.url}/v1/sessions/${id}/permissions/${event.data.request_id}`, {
      decision: "deny",
    });
    await denied.body?.cancel();
  }
  // A notices (its heartbeat, or its refused append) and drops the session.
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && !a.stderr().includes(`lost the lease on session ${id}`))
    await new Promise((r) => setTimeout(r, 100));
  const again = await post(`${a.url}/v1/sessions/${id}/runs`, { prompt: "mine again" });
  const staleHostAnswer: StopOutcome["staleHostAnswer"] = { status: again.status };
  if (again.status === 409)
    staleHostAnswer.holder = ((await again.json()) as { error: { holder: string } }).error.holder;
  else await again.body?.cancel();
  const storedAtEnd = (await records(sql, id)).length;
  const nextResult = await runWhenFree(b, id, "continue");
  const rows = await records(sql, id);
  return {
    ack,
    lost: lostOf(rows, ack),
    storedAtTakeover,
    storedAtEnd,
    staleAppends: storedAtEnd - storedAtTakeover,
    staleResult,
    takeoverResult,
    nextResult,
    staleHostAnswer,
    saidLost: a.stderr().includes(`lost the lease on session ${id}`),
  };
}

export interface RestartOutcome {
  ack: number;
  /** Acknowledged records missing once the database is back. */
  lost: number;
  contiguous: boolean;
  /** The run's result event while the database was down. */
  failedResult: Record<string, unknown> | undefined;
  /** What listing sessions answered while it was down. */
  downStatus: number;
  /** The next run on the same host once it is back. */
  resumedResult: Record<string, unknown> | undefined;
  /** Whether the host process is still running. */
  hostAlive: boolean;
}

/**
 * A run waits on a permission question when the database is stopped
 * (immediate mode: connections drop); the client denies, so the run's next
 * append fails; the database restarts and the client sends the next run to
 * the same host.
 */
export async function restartDatabase(
  world: FaultWorld,
  sql: Sql,
  pg: TestPostgres,
): Promise<RestartOutcome> {
  const on = await host(world);
  const id = await newSession(world, on);
  const run = await post(`${on.url}/v1/sessions/${id}/runs`, { prompt: "write x.txt" });
  if (run.status !== 200) throw new Error(`run: HTTP ${run.status} ${await run.text()}`);
  let ack = -1;
  let failedResult: Record<string, unknown> | undefined;
  let downStatus = 0;
  let restarted = false;
  try {
    for await (const event of sseEvents(run)) {
      if (event.id !== undefined) ack = Math.max(ack, event.id);
      if (event.data.type === "result") failedResult = event.data;
      if (event.data.type !== "permission_request") continue;
      await pg.kill();
      const denied = await post(`${on.url}/v1/sessions/${id}/permissions/${event.data.request_id}`, {
        decision: "deny",
      });
      await denied.body?.cancel();
    }
    const list = await fetch(`${on.url}/v1/sessions`);
    downStatus = list.status;
    await list.body?.cancel();
  } finally {
    await pg.restart();
    restarted = true;
  }
  let resumedResult: Record<string, unknown> | undefined;
  if (restarted) resumedResult = await runWhenFree(on, id, "continue");
  const rows = await records(sql, id);
  return {
    ack,
    lost: lostOf(rows, ack),
    contiguous: contiguous(rows),
    failedResult,
    downStatus,
    resumedResult,
    hostAlive: on.child.exitCode === null && on.child.signalCode === null,
  };
}
