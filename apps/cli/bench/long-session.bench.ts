/**
 * The agent's own cost per turn over a long session (issue 38). A scripted
 * model server on 127.0.0.1 answers every request at once with one call of
 * the agent's file-reading tool, until turn N, which it answers with text.
 * For each response the server records when its last byte was handed to
 * the socket, and for each request when its headers arrived: the gap
 * between the two is the agent's own work for that turn (parse the stream,
 * run the tool, log the session, build and send the next request).
 *
 * Subjects, each run once per round, rounds interleaved (floor, yoi, floor,
 * yoi ...) so a machine whose speed drifts hits all alike:
 * - the floor: long-session-floor.ts, a bare loop (fetch, parse SSE, read
 *   the file, append to the history, loop) on the same Node;
 * - `yoi -p`: the published bundle, apps/cli/dist/bin.js, rebuilt first
 *   when its sources changed (fresh-bundle.ts), on `node` with the flags its
 *   launcher line gives an installed `yoi` (and any YOI_BENCH_NODE_ARGS);
 * - the same bundle as `yoi serve` (the bench creates a session over HTTP,
 *   posts the prompt as a run and reads its SSE stream to the result) and
 *   as `yoi acp` (the bench is the editor: initialize, session/new,
 *   session/prompt over stdio JSON-RPC); their gaps are also reported
 *   against print mode's of the same rounds (issue 38 wants each within
 *   1.5x). YOI_BENCH_HOSTS=0 leaves them out;
 * - pi and Claude Code, when `pnpm bench:peers` installed them (see
 *   bench-peers.ts; never a CI step).
 *
 * Reported against the floor of the same round (median of the rounds'
 * ratios): the median gap per turn over the first 10% of turns (from turn
 * 10, past the first turns' compilation) and over the last 10%, and how
 * much it grew between the two (issue 38 wants it flat), the mean gap over
 * all turns (the median leaves out the rare slow turns), the CPU time per
 * turn (the steadiest figure on a busy machine: waiting for a core does not
 * count), the wall time from spawn to exit, and the peak RSS (VmHWM and
 * utime + stime of the process, read from /proc while it runs). Medians,
 * because on a shared 2-core machine single turns stall for tens of ms.
 *
 *   pnpm bench long-session                            1000 turns, 3 rounds
 *   YOI_BENCH_TURNS=100 YOI_BENCH_ROUNDS=1 pnpm bench long-session   a quick look
 *   YOI_BENCH_CPU_PROF=/tmp/prof pnpm bench long-session  also write --cpu-prof files of yoi and the floor there
 *   YOI_CONFIG__toolOutputCache__enabled=false pnpm bench long-session   YOI_CONFIG__* variables reach yoi
 *   YOI_BENCH_COMPARE=apps/cli/dist/before pnpm bench long-session   also run a copy of an earlier dist/ (its bin.js) in
 *                                                      the same rounds: what a change bought, measured side by side
 *                                                      (kept under apps/cli, where it finds the CLI's dependencies)
 *   YOI_BENCH_KEEP=1 ...                               keep the temp homes (session logs, blobs) and each run's
 *                                                      gaps (<home>.gaps.json), output (<home>.out.txt) and last
 *                                                      request body (<home>.last-request.json); path on stderr
 *   YOI_BENCH_NODE_ARGS="--trace-gc-nvp" ...           Node flags for every run (heap profiles, GC traces, V8 sizes)
 *   YOI_BENCH_HOSTS=0 ...                              only print mode: no `yoi serve` and `yoi acp` rows
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { stripTypeScriptTypes } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { ProviderKind } from "@yoi/llm-client";
import { closeServer, frameLines, WIRE_FORMATS } from "@yoi/llm-client/testing";
import { errorMessage } from "@yoi/manifest/errors";
import { median, pairedRatio, report } from "../../../scripts/bench-kit.ts";
import { freshBundle, launcherNodeArgs } from "../fresh-bundle.ts";
import { post, sseEvents } from "../test/serve-helpers.ts";
import { type Peer, peers } from "./bench-peers.ts";

const DIST = freshBundle((line) => process.stderr.write(`long-session.bench: ${line}\n`));
const FLOOR = fileURLToPath(new URL("./long-session-floor.ts", import.meta.url));

function intEnv(name: string, fallback: number, least: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < least) {
    process.stderr.write(`long-session: ${name} must be an integer of at least ${least}, found "${raw}"\n`);
    process.exit(2);
  }
  return n;
}

/** Model calls per session: N-1 tool calls, then the answer. */
const TURNS = intEnv("YOI_BENCH_TURNS", 1000, 20);
const ROUNDS = intEnv("YOI_BENCH_ROUNDS", 3, 1);
const PROFILE_DIR = process.env.YOI_BENCH_CPU_PROF;
const KEEP = process.env.YOI_BENCH_KEEP === "1";
const COMPARE_DIST = process.env.YOI_BENCH_COMPARE;
/** Whether the `yoi serve` and `yoi acp` subjects run (YOI_BENCH_HOSTS=0 leaves them out). */
const HOSTS = process.env.YOI_BENCH_HOSTS !== "0";
/** Extra Node flags for every run, the floor's too (e.g. `--heap-prof`, `--trace-gc-nvp`), split on spaces. */
const NODE_ARGS = (process.env.YOI_BENCH_NODE_ARGS ?? "").split(" ").filter((arg) => arg !== "");
/** Turns in each window of the first/last 10%. */
const WINDOW = Math.max(1, Math.floor(TURNS / 10));
/** The first window starts at this turn: the first turns pay compilation, not the loop. */
const FIRST_TURN = 10;
const ANSWER = "All notes read.";
const PROMPT = "Read notes.md again and again until told to stop.";

const world = mkdtempSync(path.join(tmpdir(), "yoi-bench-long-session-"));
const project = path.join(world, "project");
mkdirSync(project);
// A small file (10 lines, about 500 bytes): each turn adds one copy of it to the history, so the floor's last
// request is about 0.6 MB; a bigger file makes the floor's own JSON serialisation the figure that is measured.
const NOTES = Array.from(
  { length: 10 },
  (_, i) => `- note ${i + 1}: read once per turn; line ${i + 1} of 10.`,
).join("\n");
writeFileSync(path.join(project, "notes.md"), `${NOTES}\n`);
// The floor runs as plain JavaScript, as yoi's bundle does: run as .ts, Node's type stripping alone adds
// about 17 MB to its peak RSS.
const floorScript = path.join(world, "long-session-floor.mjs");
writeFileSync(floorScript, stripTypeScriptTypes(readFileSync(FLOOR, "utf8")));

/**
 * What one run of one subject needs: how to start it and what its model asks for, and for a subject that is a
 * server (`yoi serve`, `yoi acp`), the client that drives the session: it returns the answer's text and then
 * ends the process.
 */
interface Subject extends Peer {
  drive?(child: ChildProcessWithoutNullStreams, prompt: string): Promise<string>;
}

/** Node's flags for a CPU profile of one run (a 250 µs interval: a turn is a few ms), when YOI_BENCH_CPU_PROF asks. */
function profileArgs(name: string): string[] {
  if (PROFILE_DIR === undefined) return [];
  return [
    "--cpu-prof",
    "--cpu-prof-interval=250",
    `--cpu-prof-dir=${PROFILE_DIR}`,
    `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`,
  ];
}

/** A fresh HOME per run (its own session store); one cache for all runs, as on a machine in use (code caches). */
const baseEnv = (home: string): Record<string, string> => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  XDG_CACHE_HOME: path.join(world, "cache"),
  LANG: "C.UTF-8",
});

const floor: Subject = {
  name: "the floor",
  provider: "openai-chat",
  toolCall: { name: "read_file", arguments: { path: "notes.md" } },
  start: ({ origin, env, prompt }) => ({
    command: process.execPath,
    args: [...profileArgs("floor"), ...NODE_ARGS, floorScript, `${origin}/v1`, "bench-model", prompt],
    env,
  }),
};

/** `YOI_CONFIG__*` variables of the bench's environment, passed to yoi: what a setting costs per turn. */
function yoiConfigEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[0].startsWith("YOI_CONFIG__") && entry[1] !== undefined,
    ),
  );
}

const yoiAt = (name: string, bin: string): Subject => ({
  name,
  provider: "openai-chat",
  toolCall: { name: "read_file", arguments: { path: "notes.md" } },
  start: ({ origin, env, prompt }) => ({
    command: process.execPath,
    args: [
      ...profileArgs(name === "yoi -p" ? "yoi" : "yoi-compare"),
      ...launcherNodeArgs(bin, ["-p"]),
      ...NODE_ARGS,
      bin,
      "-p",
      prompt,
      "--model",
      "openai-chat/bench-model",
      "--base-url",
      `${origin}/v1`,
    ],
    env: {
      ...env,
      // A bundle of its own cache: a copy of dist/ has the same build id, and the two would replace each other's code packs.
      ...(bin === DIST ? {} : { XDG_CACHE_HOME: path.join(world, "cache-compare") }),
      ...yoiConfigEnv(),
      YOI_TRUST_PROJECT: "0",
      YOI_MAX_TURNS: String(TURNS + 10),
    },
  }),
});
const yoi = yoiAt("yoi -p", DIST);

const MODEL = "openai-chat/bench-model";
/** The environment of a yoi process, as print mode's. */
const yoiEnv = (env: Record<string, string>): Record<string, string> => ({
  ...env,
  ...yoiConfigEnv(),
  YOI_TRUST_PROJECT: "0",
  YOI_MAX_TURNS: String(TURNS + 10),
});

/** `yoi serve` on a free port: one session created over HTTP, the prompt posted as a run, its SSE read to the result. */
const yoiServe: Subject = {
  name: "yoi serve",
  provider: "openai-chat",
  toolCall: { name: "read_file", arguments: { path: "notes.md" } },
  start: ({ env }) => ({
    command: process.execPath,
    args: [
      ...profileArgs("yoi-serve"),
      ...launcherNodeArgs(DIST, ["serve"]),
      ...NODE_ARGS,
      DIST,
      "serve",
      "--port",
      "0",
    ],
    env: yoiEnv(env),
  }),
  async drive(child, prompt) {
    let seen = "";
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (d: string) => {
        seen += d;
        const match = /listening on (http:\/\/\S+)/.exec(seen);
        if (match === null) return;
        child.stderr.off("data", onData);
        resolve(match[1]!);
      };
      child.stderr.on("data", onData);
      child.once("exit", (code) => reject(new Error(`yoi serve exited ${code} before listening`)));
    });
    const created = await post(`${url}/v1/sessions`, { model: MODEL, baseUrl: `${origin}/v1` });
    if (!created.ok) throw new Error(`POST /v1/sessions: HTTP ${created.status} ${await created.text()}`);
    const { id } = (await created.json()) as { id: string };
    const res = await post(`${url}/v1/sessions/${id}/runs`, { prompt });
    if (!res.ok) throw new Error(`POST /v1/sessions/${id}/runs: HTTP ${res.status} ${await res.text()}`);
    let text = "";
    for await (const { data } of sseEvents(res)) {
      if (data.type !== "result") continue;
      if (data.status !== "completed") throw new Error(`the run ended ${JSON.stringify(data)}`);
      text = String(data.text);
    }
    child.kill("SIGTERM");
    return text;
  },
};

/** `yoi acp` on stdio: the bench is the editor (initialize, session/new, session/prompt) and collects the message chunks. */
const yoiAcp: Subject = {
  name: "yoi acp",
  provider: "openai-chat",
  toolCall: { name: "read_file", arguments: { path: "notes.md" } },
  start: ({ origin, env }) => ({
    command: process.execPath,
    args: [
      ...profileArgs("yoi-acp"),
      ...launcherNodeArgs(DIST, ["acp"]),
      ...NODE_ARGS,
      DIST,
      "acp",
      "--model",
      MODEL,
      "--base-url",
      `${origin}/v1`,
    ],
    env: yoiEnv(env),
  }),
  async drive(child, prompt) {
    let nextId = 1;
    const waiting = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
    let text = "";
    let partial = "";
    const send = (message: object) =>
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    const request = (method: string, params: object) =>
      new Promise<unknown>((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { resolve, reject });
        send({ id, method, params });
      });
    child.stdout.on("data", (d: string) => {
      const lines = (partial + d).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        if (line.trim() === "") continue;
        const message = JSON.parse(line) as {
          id?: number;
          method?: string;
          params?: { update?: { sessionUpdate?: string; content?: { type?: string; text?: string } } } & {
            options?: { optionId: string; kind: string }[];
          };
          result?: unknown;
          error?: { message: string };
        };
        if (message.method === "session/update") {
          const update = message.params?.update;
          if (update?.sessionUpdate === "agent_message_chunk" && update.content?.type === "text")
            text += update.content.text ?? "";
        } else if (message.method === "session/request_permission" && message.id !== undefined) {
          const allow = message.params?.options?.find((o) => o.kind === "allow_once");
          send({
            id: message.id,
            result: {
              outcome: allow ? { outcome: "selected", optionId: allow.optionId } : { outcome: "cancelled" },
            },
          });
        } else if (message.method !== undefined && message.id !== undefined) {
          send({
            id: message.id,
            error: { code: -32601, message: `the bench does not offer ${message.method}` },
          });
        } else if (message.id !== undefined) {
          const waiter = waiting.get(message.id);
          waiting.delete(message.id);
          if (message.error) waiter?.reject(new Error(`ACP error: ${message.error.message}`));
          else waiter?.resolve(message.result);
        }
      }
    });
    await request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = (await request("session/new", { cwd: project, mcpServers: [] })) as {
      sessionId: string;
    };
    const done = (await request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: prompt }],
    })) as {
      stopReason: string;
    };
    if (done.stopReason !== "end_turn") throw new Error(`session/prompt ended with ${done.stopReason}`);
    child.stdin.end();
    return text;
  },
};

/** One session's record, as the server saw it. */
interface Run {
  subject: Subject;
  /** performance.now() when each turn's request headers arrived. */
  arrived: number[];
  /** performance.now() when each turn's response was fully handed to the socket. */
  ended: number[];
  /** Request body bytes of each turn. */
  bytes: number[];
  /** The last request body (checked: it carries the history). */
  lastBody: string;
  sideRequests: number;
  /** Model calls of this session. */
  turns: number;
  /** The TCP connections its requests came on (an agent that reuses its connection has one). */
  sockets: Set<unknown>;
}

let current: Run | undefined;

function responseFor(provider: ProviderKind, turn: number, call: Subject["toolCall"] | undefined): string {
  const wire = WIRE_FORMATS[provider];
  const lines =
    call === undefined
      ? wire.response(ANSWER)
      : wire.response("", [{ id: `call_${turn}`, name: call.name, arguments: call.arguments }]);
  return frameLines(provider, lines);
}

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  const arrived = performance.now();
  const chunks: Buffer[] = [];
  req.on("data", (d: Buffer) => chunks.push(d));
  req.on("end", () => {
    const run = current;
    if (run === undefined || req.method !== "POST") {
      res.writeHead(404).end();
      return;
    }
    const body = Buffer.concat(chunks).toString("utf8");
    const { provider } = run.subject;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    if (run.subject.isSideRequest?.(body)) {
      run.sideRequests++;
      res.end(responseFor(provider, 0, undefined));
      return;
    }
    const turn = run.arrived.length;
    run.sockets.add(req.socket);
    run.arrived.push(arrived);
    run.bytes.push(body.length);
    run.lastBody = body;
    res.on("finish", () => {
      run.ended[turn] = performance.now();
    });
    res.end(responseFor(provider, turn, turn < run.turns - 1 ? run.subject.toolCall : undefined));
  });
});
await new Promise<void>((resolve, reject) => {
  server.once("error", reject);
  server.listen(0, "127.0.0.1", () => resolve());
});
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/**
 * The peak RSS (VmHWM) of `pid` so far in MB, and the CPU time (user + system, all threads) it used so far in
 * ms; undefined once it is gone.
 */
function sample(pid: number): { peakMB: number; cpuMs: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
    // Fields after the command name (which may hold spaces): state is the 3rd field, utime the 14th, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    if (kb === undefined || !Number.isFinite(ticks)) return undefined;
    return { peakMB: Number(kb) / 1024, cpuMs: (ticks * 1000) / CLOCK_TICKS };
  } catch {
    return undefined;
  }
}

/** USER_HZ of /proc/<pid>/stat: 100 on Linux for x86 and arm. */
const CLOCK_TICKS = 100;

interface Result {
  wallMs: number;
  peakMB: number;
  /** CPU time of the process per turn (start-up included), ms. */
  cpuPerTurn: number;
  /** Median gap per turn over turns FIRST_TURN.. (WINDOW of them), and over the last WINDOW turns, ms. */
  firstGap: number;
  lastGap: number;
  /** lastGap - firstGap: how the agent's own work per turn grew with the history, ms. */
  growth: number;
  /** Mean gap over all turns, ms (the median leaves out the rare slow turns; this does not). */
  meanGap: number;
  /** Request body bytes at the first and the last turn of those windows. */
  firstBytes: number;
  lastBytes: number;
  /** TCP connections the session's requests came on. */
  connections: number;
}

async function runOnce(subject: Subject, turns = TURNS): Promise<Result> {
  const home = mkdtempSync(path.join(world, "home-"));
  const run: Run = {
    subject,
    arrived: [],
    ended: [],
    bytes: [],
    lastBody: "",
    sideRequests: 0,
    turns,
    sockets: new Set(),
  };
  current = run;
  const { command, args, env } = subject.start({ origin, home, env: baseEnv(home), prompt: PROMPT });
  const start = performance.now();
  const child = spawn(command, args, { cwd: project, env, stdio: "pipe" });
  if (subject.drive === undefined) child.stdin.end();
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  // A server subject's client: what it read as the answer counts as the output; a failure ends the process.
  let driveError: unknown;
  const driven = subject.drive?.(child, PROMPT).then(
    (text) => {
      stdout += `\n${text}`;
    },
    (error: unknown) => {
      driveError = error;
      child.kill("SIGKILL");
    },
  );
  let peak = 0;
  let cpuMs = 0;
  const poll = setInterval(() => {
    const now = child.pid === undefined ? undefined : sample(child.pid);
    if (now === undefined) return;
    peak = Math.max(peak, now.peakMB);
    cpuMs = Math.max(cpuMs, now.cpuMs);
  }, 20);
  // A session that stalls (a peer waiting on the network it cannot reach) fails its run instead of the bench hanging.
  // Generous: Claude Code took 28 s for 1000 turns on an idle machine and over 160 s on a busy one.
  const limitMs = 60_000 + turns * 500;
  const timer = setTimeout(() => child.kill("SIGKILL"), limitMs);
  const closed = new Promise((resolve) => child.on("close", resolve));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", resolve);
  });
  const wallMs = performance.now() - start;
  clearInterval(poll);
  clearTimeout(timer);
  await closed;
  await driven;
  current = undefined;
  if (!KEEP) rmSync(home, { recursive: true, force: true });

  const what = `${subject.name} (${turns} turns)`;
  if (driveError !== undefined)
    throw new Error(`${what}: ${errorMessage(driveError)}\n${stderr.slice(-2000)}`);
  if (code !== 0) {
    const how = code === null ? `was stopped after ${limitMs / 1000} s` : `exited ${code}`;
    throw new Error(`${what} ${how}:\n${stderr.slice(-2000)}`);
  }
  if (run.arrived.length !== turns) {
    throw new Error(`${what} made ${run.arrived.length} model calls, not ${turns}:\n${stderr.slice(-2000)}`);
  }
  if (!stdout.includes(ANSWER))
    throw new Error(`${what} did not print the answer; stdout: ${stdout.slice(-500)}`);
  // The last request must carry the history: the last tool call's id and the file's text.
  if (!run.lastBody.includes(`call_${turns - 2}`) || !run.lastBody.includes("line 10 of 10")) {
    throw new Error(`${what}: the last request does not carry the last tool call and its result`);
  }
  const gaps = run.arrived.slice(1).map((a, i) => a - (run.ended[i] ?? Number.NaN));
  if (KEEP) {
    writeFileSync(`${home}.gaps.json`, JSON.stringify({ subject: subject.name, gaps, bytes: run.bytes }));
    writeFileSync(`${home}.out.txt`, `${stdout}\n--- stderr\n${stderr}`);
    writeFileSync(`${home}.last-request.json`, run.lastBody);
  }
  // gaps[k] is the gap before turn k + 2 (turns counted from 1).
  const firstFrom = Math.min(FIRST_TURN - 2, gaps.length - WINDOW);
  const firstGap = median(gaps.slice(firstFrom, firstFrom + WINDOW));
  const lastGap = median(gaps.slice(-WINDOW));
  return {
    wallMs,
    peakMB: peak,
    cpuPerTurn: cpuMs / turns,
    firstGap,
    lastGap,
    growth: lastGap - firstGap,
    meanGap: gaps.reduce((sum, g) => sum + g, 0) / gaps.length,
    firstBytes: run.bytes[firstFrom + 1] ?? 0,
    lastBytes: run.bytes.at(-1) ?? 0,
    connections: run.sockets.size,
  };
}

const subjects: Subject[] = [floor, yoi];
if (HOSTS) subjects.push(yoiServe, yoiAcp);
if (COMPARE_DIST !== undefined)
  subjects.push(yoiAt(`yoi -p (${COMPARE_DIST})`, path.resolve(COMPARE_DIST, "bin.js")));
const installed = peers(project);
subjects.push(...installed.available);
for (const line of installed.skipped) process.stderr.write(`long-session: ${line}\n`);

try {
  // Warm-up: disk caches, yoi's code cache (written at exit), each peer's first start.
  for (const s of [...subjects]) {
    try {
      await runOnce(s, 20);
    } catch (error) {
      if (s === floor || s === yoi || s === yoiServe || s === yoiAcp) throw error;
      // A peer that cannot run here (offline, a changed CLI) is left out, not a failed bench.
      subjects.splice(subjects.indexOf(s), 1);
      process.stderr.write(
        `long-session: ${s.name} failed its warm-up session; its rows are skipped: ${error}\n`,
      );
    }
  }
  const results = new Map<Subject, Result[]>(subjects.map((s) => [s, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of [...subjects]) {
      let r: Result;
      try {
        r = await runOnce(s);
      } catch (error) {
        if (s === floor || s === yoi || s === yoiServe || s === yoiAcp) throw error;
        subjects.splice(subjects.indexOf(s), 1);
        process.stderr.write(
          `long-session: ${s.name} failed in round ${round + 1}; its rows are skipped: ${error}\n`,
        );
        continue;
      }
      results.get(s)!.push(r);
      process.stderr.write(
        `long-session: round ${round + 1} ${s.name}: wall ${r.wallMs.toFixed(0)} ms, gap ${r.firstGap.toFixed(2)} / ${r.lastGap.toFixed(2)} ms (mean ${r.meanGap.toFixed(2)}), CPU ${r.cpuPerTurn.toFixed(2)} ms/turn, peak RSS ${r.peakMB.toFixed(0)} MB, request ${(r.firstBytes / 1024).toFixed(0)} -> ${(r.lastBytes / 1024).toFixed(0)} KB, ${r.connections} connection(s)\n`,
      );
    }
  }
  const base = results.get(floor)!;
  const pick = (rs: Result[], key: keyof Result) => rs.map((r) => r[key]);
  const spread = (xs: number[]) => `${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}`;
  const kb = (rs: Result[], key: "firstBytes" | "lastBytes") =>
    `${(median(pick(rs, key)) / 1024).toFixed(0)} KB`;
  const first = `turns ${FIRST_TURN}-${FIRST_TURN + WINDOW - 1}`;
  for (const s of subjects) {
    if (s === floor) continue;
    const rs = results.get(s)!;
    const row = (
      name: string,
      key: keyof Result,
      unit: "ms" | "MB",
      options: { target?: number; note?: string; paired?: boolean } = {},
    ) => {
      const subject = pick(rs, key);
      const baseline = pick(base, key);
      const note = `${ROUNDS} rounds: ${spread(subject)} vs ${spread(baseline)}${options.note ? `; ${options.note}` : ""}`;
      if (median(baseline) <= 0) {
        // A ratio to nothing (the floor's gap did not grow in this run, e.g. a short one) says nothing.
        report({
          group: "cli",
          name: `long session, ${TURNS} turns, ${s.name}: ${name}`,
          subject: median(subject),
          unit,
          note: `the floor's is ${median(baseline).toFixed(2)}: no ratio; ${note}`,
        });
        return;
      }
      report({
        group: "cli",
        name: `long session, ${TURNS} turns, ${s.name}: ${name}`,
        subject: median(subject),
        baseline: median(baseline),
        ...(options.paired === false ? {} : { ratio: pairedRatio(subject, baseline) }),
        baselineName: "bare fetch loop, same run",
        unit,
        ...(s === yoi && options.target !== undefined ? { target: options.target } : {}),
        note,
      });
    };
    row(`gap per turn, ${first} (median)`, "firstGap", "ms", {
      note: `requests ${kb(rs, "firstBytes")} vs ${kb(base, "firstBytes")}`,
    });
    row(`gap per turn, last ${WINDOW} turns (median)`, "lastGap", "ms", {
      target: 2,
      note: `requests ${kb(rs, "lastBytes")} vs ${kb(base, "lastBytes")}`,
    });
    // Flat: the gap may grow by what serialising a longer request costs, which the floor (whose request is
    // never shorter: it keeps every tool output) pays too. A ratio of two small differences: read the ms.
    row(`gap growth, ${first} -> last ${WINDOW} turns`, "growth", "ms", {
      target: 1,
      paired: false,
      note: "last minus first median gap",
    });
    row("gap per turn, all turns (mean)", "meanGap", "ms", { note: "counts the rare slow turns" });
    row("CPU time per turn", "cpuPerTurn", "ms", {
      note: "user + system of the process / turns, start-up included",
    });
    row("wall, spawn to exit", "wallMs", "ms");
    row("peak RSS", "peakMB", "MB", { target: 1.3 });
  }
  // The same loop through the servers, against print mode of the same rounds: issue 38 wants each gap within 1.5x.
  const print = results.get(yoi)!;
  for (const s of [yoiServe, yoiAcp]) {
    const rs = results.get(s);
    if (rs === undefined || rs.length === 0) continue;
    const rows: [string, "firstGap" | "lastGap" | "meanGap" | "cpuPerTurn", number | undefined][] = [
      [`gap per turn, ${first} (median)`, "firstGap", undefined],
      [`gap per turn, last ${WINDOW} turns (median)`, "lastGap", 1.5],
      ["gap per turn, all turns (mean)", "meanGap", undefined],
      ["CPU time per turn", "cpuPerTurn", undefined],
    ];
    for (const [name, key, target] of rows) {
      const subject = pick(rs, key);
      const baseline = pick(print, key);
      report({
        group: "cli",
        name: `long session, ${TURNS} turns, ${s.name} vs yoi -p: ${name}`,
        subject: median(subject),
        baseline: median(baseline),
        ratio: pairedRatio(subject, baseline),
        baselineName: "yoi -p, same run",
        unit: "ms",
        ...(target === undefined ? {} : { target }),
        note: `${ROUNDS} rounds: ${spread(subject)} vs ${spread(baseline)}`,
      });
    }
  }
} finally {
  await closeServer(server);
  if (KEEP) process.stderr.write(`long-session: kept ${world}\n`);
  else rmSync(world, { recursive: true, force: true });
}
