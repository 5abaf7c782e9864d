/**
 * Time to first request: from spawning `yoi -p hi` until a scripted
 * provider server on 127.0.0.1 has the request, for each provider kind,
 * and from spawning the interactive `yoi` (on a pseudo-terminal, through
 * util-linux `script`) until its prompt is on screen. Each run is paired
 * with a spawned `node -e 0` (spawn to exit) right after it, and the ratio
 * is the median of the pairs' ratios, so it holds when the machine's speed
 * drifts during the run. The CLI runs as published and as a user starts
 * it: the bundled `dist/bin.js` (rebuilt first when its sources changed,
 * fresh-bundle.ts), executed itself, so its first line starts `node` (found
 * on PATH: this process's own) as an installed `yoi` does.
 *
 * The two targets of the start-up machinery (src/startup/, explained in
 * docs/cli-startup.md), checked here rather than by any test:
 * - warm (the code packs written by earlier runs): the first request within
 *   4x `node -e 0`, for every provider;
 * - cold (no code pack and no Node compile cache, as the first run after an
 *   install): within 2.5x the floor, a bare `node` sending the same request
 *   with `fetch`, measured in the same run.
 *
 * `YOI_TRACE_STARTUP=1 yoi -p ...` prints the phases of one run.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import type { ProviderKind } from "@yoi/llm-client";
import { startScriptedServer } from "@yoi/llm-client/testing";
import { median, pairedRatio, report } from "../../../scripts/bench-kit.ts";
import { freshBundle } from "../fresh-bundle.ts";

// 21: with 11, one provider's ratio moved by 0.4x between runs on a 2-core machine that was not otherwise busy.
const RUNS = 21;
const WARMUP = 2;

const DIST = freshBundle((line) => process.stderr.write(`first-request.bench: ${line}\n`));
/** Warm: the first request within this many times `node -e 0`. */
const WARM_TARGET = 4;
/** Cold: the first request within this many times the bare node + fetch floor. */
const COLD_TARGET = 2.5;

const home = mkdtempSync(path.join(tmpdir(), "yoi-bench-first-request-"));
// The `node` that `yoi`'s first line starts is the one on PATH: this process's own, first.
const PATH = [path.dirname(process.execPath), process.env.PATH].filter(Boolean).join(path.delimiter);
const baseEnv = { PATH, HOME: home, YOI_TRUST_PROJECT: "0" };

/** Spawn-to-exit of `node -e 0`. */
async function nodeBaseline(): Promise<number> {
  const start = performance.now();
  await new Promise((resolve) =>
    spawn(process.execPath, ["-e", "0"], { stdio: "ignore" }).on("exit", resolve),
  );
  return performance.now() - start;
}

/** The goal of issue 21: the first request (or the prompt) within this many ms of process start. */
const GOAL_MS = 150;

/**
 * Two rows per measurement: the time as a ratio to `node -e 0` spawned in
 * the same run (how far from Node's own start-up; it moves with the
 * machine), with `target` when one applies, and the time against the
 * absolute goal.
 */
function reportStart(
  name: string,
  subject: number[],
  baseline: number[],
  options: { target?: number; extra?: string } = {},
): void {
  const s = median(subject);
  const b = median(baseline);
  report({
    group: "cli",
    name,
    subject: s,
    baseline: b,
    ratio: pairedRatio(subject, baseline),
    baselineName: "node -e 0 (spawned)",
    unit: "ms",
    ...(options.target !== undefined ? { target: options.target } : {}),
    note: `ratio to Node's own start-up, run by run${options.extra ? `; ${options.extra}` : ""}`,
  });
  report({
    group: "cli",
    name: `${name}: against the goal`,
    subject: s,
    baseline: GOAL_MS,
    baselineName: `goal ${GOAL_MS} ms`,
    unit: "ms",
    target: 1,
    note: `median of ${subject.length} runs`,
  });
}

const PROVIDERS: { kind: ProviderKind; model: string; env: Record<string, string> }[] = [
  { kind: "anthropic", model: "anthropic/claude-haiku-4-5", env: { ANTHROPIC_API_KEY: "sk-bench" } },
  { kind: "openai-responses", model: "openai/gpt-5-mini", env: { OPENAI_API_KEY: "sk-bench" } },
  { kind: "openai-chat", model: "openai-chat/local-model", env: {} },
  { kind: "gemini", model: "gemini/gemini-2.5-flash", env: { GEMINI_API_KEY: "bench" } },
];

/**
 * Spawns `command(baseURL)` (an executable and its arguments) against a
 * scripted `kind` server, each run followed by a spawned `node -e 0`: the
 * times from spawn until the server had the request, and their baselines
 * (warm-up runs left out).
 */
async function timeToRequest(
  kind: ProviderKind,
  what: string,
  command: (baseURL: string) => [string, ...string[]],
  env: () => Record<string, string> = () => ({}),
): Promise<{ subject: number[]; baseline: number[] }> {
  let arrived = 0;
  const server = await startScriptedServer({
    provider: kind,
    script: () => {
      arrived = performance.now();
      return { type: "reply", text: "ok" };
    },
  });
  try {
    const subject: number[] = [];
    const baseline: number[] = [];
    for (let i = 0; i < WARMUP + RUNS; i++) {
      arrived = 0;
      const start = performance.now();
      const [file, ...args] = command(server.baseURL);
      const child = spawn(file, args, {
        cwd: home,
        env: { ...baseEnv, ...env() },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      if (code !== 0 || arrived === 0) throw new Error(`${what} exited ${code}: ${stderr}`);
      const base = await nodeBaseline();
      if (i >= WARMUP) {
        subject.push(arrived - start);
        baseline.push(base);
      }
    }
    return { subject, baseline };
  } finally {
    await server.close();
  }
}

/**
 * Spawn of `yoi -p` until the scripted server has its request, against
 * `node -e 0`. `cold`: each run with empty cache directories (no code pack,
 * no Node compile cache), as the first run after an install is; its row is
 * a ratio to the floor (`floorRatio`: the floor's own ratio to `node -e 0`
 * in this run).
 */
async function firstRequest(
  kind: ProviderKind,
  model: string,
  env: Record<string, string>,
  cold?: { floorRatio: number },
): Promise<void> {
  const { subject, baseline } = await timeToRequest(
    kind,
    `yoi -p (${kind})`,
    (baseURL) => [DIST, "-p", "hi", "--model", model, "--base-url", baseURL],
    () => {
      if (!cold) return env;
      const empty = mkdtempSync(path.join(home, "cold-cache-"));
      return { ...env, XDG_CACHE_HOME: empty, NODE_COMPILE_CACHE: path.join(empty, "node") };
    },
  );
  if (!cold)
    return reportStart(`process start -> first request, yoi -p (${kind})`, subject, baseline, {
      target: WARM_TARGET,
    });
  const ratio = pairedRatio(subject, baseline);
  report({
    group: "cli",
    name: `process start -> first request, yoi -p (${kind}), first run after an install`,
    subject: median(subject),
    baseline: median(baseline) * cold.floorRatio,
    ratio: ratio / cold.floorRatio,
    baselineName: "the floor (node with fetch alone)",
    unit: "ms",
    target: COLD_TARGET,
    note: `no code pack, no compile cache (compiled, written at exit), bwrap probed; ${ratio.toFixed(2)}x node -e 0, the floor ${cold.floorRatio.toFixed(2)}x`,
  });
}

/** Spawn of interactive `yoi` on a pty until the prompt (`›`) is drawn. */
async function promptReady(): Promise<number> {
  const start = performance.now();
  const child = spawn("script", ["-qfec", DIST, "/dev/null"], {
    cwd: home,
    env: { ...baseEnv, ANTHROPIC_API_KEY: "sk-bench", TERM: "xterm-256color", COLUMNS: "100", LINES: "30" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let seen = "";
  const ready = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no prompt within 20 s; screen: ${seen.slice(-400)}`)),
      20_000,
    );
    child.stdout.on("data", (d: Buffer) => {
      seen += d.toString();
      if (seen.includes("›")) {
        clearTimeout(timer);
        resolve(performance.now() - start);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`interactive yoi exited ${code} before its prompt: ${seen.slice(-400)}`));
    });
  });
  child.kill("SIGKILL");
  await new Promise((resolve) => child.on("close", resolve));
  return ready;
}

/**
 * The floor: a bare `node` that sends the same kind of request with Node's
 * own fetch (undici), spawn until the server has it: the cold target's
 * reference, as issue 30 set it. In the bundle the provider SDKs send with
 * `node:http` instead (src/startup/provider-fetch.ts), which a bare `node`
 * does in about half the time, so a yoi row may come below it.
 */
async function fetchFloor(): Promise<number> {
  const code = `fetch(process.argv[1] + "/v1/messages", { method: "POST", headers: new Headers({ "content-type": "application/json", "x-api-key": "sk-bench" }), body: JSON.stringify({ model: "m", max_tokens: 8, stream: true, messages: [{ role: "user", content: "hi" }] }) }).then((r) => r.text())`;
  const { subject, baseline } = await timeToRequest("anthropic", "the bare fetch", (baseURL) => [
    process.execPath,
    "-e",
    code,
    baseURL,
  ]);
  const ratio = pairedRatio(subject, baseline);
  report({
    group: "cli",
    name: "process start -> first request, node with fetch alone (the floor)",
    subject: median(subject),
    baseline: median(baseline),
    ratio,
    baselineName: "node -e 0 (spawned)",
    unit: "ms",
    note: "Node's start-up and its fetch (undici): the cold target's reference (yoi's SDKs send with node:http)",
  });
  return ratio;
}

const floorRatio = await fetchFloor();
for (const p of PROVIDERS) await firstRequest(p.kind, p.model, p.env);
await firstRequest("anthropic", PROVIDERS[0]!.model, PROVIDERS[0]!.env, { floorRatio });

if (spawnSync("script", ["--version"]).status === 0) {
  const subject: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const s = await promptReady();
    const b = await nodeBaseline();
    if (i >= WARMUP) {
      subject.push(s);
      baseline.push(b);
    }
  }
  reportStart("process start -> interactive prompt ready (pty)", subject, baseline, {
    extra: "includes util-linux script's pty set-up",
  });
}
// An interactive yoi killed through its pty may still be writing its session
// for a moment after script(1) has gone, so the removal retries.
rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
