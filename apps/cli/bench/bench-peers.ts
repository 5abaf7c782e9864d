/**
 * Peers for the long-session benchmark (long-session.bench.ts): pi and
 * Claude Code, run the same way as `yoi -p` against the same scripted model
 * server. They are not dependencies of this repository: `pnpm bench:peers`
 * installs pinned versions with npm into a cache directory outside the
 * checkout, then runs the long-session benchmark, which adds their rows
 * when they are installed. It downloads about 450 MB (Claude Code is a
 * native binary) from the npm registry: never a CI step, and `pnpm bench`
 * alone never installs anything.
 *
 *   pnpm bench:peers                        install (once) into the cache, then run the long-session bench
 *   node apps/cli/bench/bench-peers.ts      install only
 *   YOI_BENCH_PEERS_DIR=<dir> ...           another cache directory
 *                                           (default $XDG_CACHE_HOME/yoi-bench/peers, else ~/.cache/yoi-bench/peers)
 *
 * Both run offline: pi with PI_OFFLINE=1 and a models.json provider on the
 * server, Claude Code with ANTHROPIC_BASE_URL and its non-essential traffic
 * off. A peer that is missing, or whose `--version` does not run, is left
 * out with a line saying why; one that fails its warm-up session is left
 * out by the benchmark the same way.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import type { ProviderKind } from "@yoi/llm-client";

/** The versions issue 38 compared against. */
const PI = { pkg: "@mariozechner/pi-coding-agent", version: "0.73.1" };
const CLAUDE = { pkg: "@anthropic-ai/claude-code", version: "2.1.328" };

/** One agent the long-session benchmark runs: how to start it and what its model asks for. */
export interface Peer {
  name: string;
  provider: ProviderKind;
  /** The tool call the scripted model makes each turn. */
  toolCall: { name: string; arguments: Record<string, unknown> };
  /**
   * How to spawn one session against the server at `origin` (no path), with
   * `home` a fresh HOME and `env` the benchmark's environment for it.
   */
  start(run: { origin: string; home: string; env: Record<string, string>; prompt: string }): {
    command: string;
    args: string[];
    env: Record<string, string>;
  };
  /** Requests that are not the session's turns (titles, quota checks): answered with text, not counted. */
  isSideRequest?(body: string): boolean;
}

export function peersDir(): string {
  const cache = process.env.XDG_CACHE_HOME || path.join(homedir(), ".cache");
  return process.env.YOI_BENCH_PEERS_DIR || path.join(cache, "yoi-bench", "peers");
}

/** Installs the pinned peers into {@link peersDir} with npm (its postinstall puts Claude Code's native binary in place). */
export function installPeers(): void {
  const dir = peersDir();
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, "package.json"),
    `${JSON.stringify(
      { private: true, dependencies: { [PI.pkg]: PI.version, [CLAUDE.pkg]: CLAUDE.version } },
      null,
      2,
    )}\n`,
  );
  process.stderr.write(
    `bench-peers: npm install ${PI.pkg}@${PI.version} ${CLAUDE.pkg}@${CLAUDE.version} in ${dir}\n`,
  );
  const res = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: dir,
    stdio: "inherit",
  });
  if (res.error !== undefined || res.status !== 0) {
    process.stderr.write(
      `bench-peers: npm install failed (${res.error?.message ?? `exit ${res.status}`}); the benchmark runs without the peers it lacks\n`,
    );
  }
}

/** Whether `command args --version` runs (offline, 30 s at most); the reason when it does not. */
function versionProblem(command: string, args: string[], env: Record<string, string>): string | undefined {
  const res = spawnSync(command, [...args, "--version"], { env, encoding: "utf8", timeout: 30_000 });
  if (res.error !== undefined) return res.error.message;
  if (res.status !== 0)
    return `--version exited ${res.status ?? res.signal}: ${(res.stderr || res.stdout).trim().slice(0, 300)}`;
  return undefined;
}

/**
 * The installed peers for a project at `project` (Claude Code's Read takes
 * absolute paths), and a line for each one left out.
 */
export function peers(project: string): { available: Peer[]; skipped: string[] } {
  const dir = peersDir();
  const modules = path.join(dir, "node_modules");
  const available: Peer[] = [];
  const skipped: string[] = [];
  const plainEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: homedir(), LANG: "C.UTF-8" };

  // pi runs on the Node that runs yoi and the floor.
  const piCli = path.join(modules, PI.pkg, "dist", "cli.js");
  if (!existsSync(piCli)) {
    skipped.push(`pi not installed in ${dir} (pnpm bench:peers installs it); its rows are skipped`);
  } else {
    const problem = versionProblem(process.execPath, [piCli], { ...plainEnv, PI_OFFLINE: "1" });
    if (problem !== undefined) skipped.push(`pi in ${dir} does not run (${problem}); its rows are skipped`);
    else available.push(piPeer(piCli));
  }

  const claude = path.join(modules, "@anthropic-ai", "claude-code", "bin", "claude.exe");
  if (!existsSync(claude)) {
    skipped.push(`Claude Code not installed in ${dir} (pnpm bench:peers installs it); its rows are skipped`);
  } else {
    const problem = versionProblem(claude, [], { ...plainEnv, ...CLAUDE_OFFLINE });
    if (problem !== undefined)
      skipped.push(`Claude Code in ${dir} does not run (${problem}); its rows are skipped`);
    else available.push(claudePeer(claude, project));
  }
  return { available, skipped };
}

function piPeer(cli: string): Peer {
  return {
    name: `pi ${PI.version} -p`,
    provider: "openai-chat",
    toolCall: { name: "read", arguments: { path: "notes.md" } },
    start({ origin, home, env, prompt }) {
      const agentDir = path.join(home, ".pi", "agent");
      mkdirSync(agentDir, { recursive: true });
      const models = {
        providers: {
          bench: {
            baseUrl: `${origin}/v1`,
            api: "openai-completions",
            apiKey: "bench",
            compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
            // A window no session of the benchmark fills: no compaction calls.
            models: [{ id: "bench-model", contextWindow: 10_000_000, maxTokens: 8192 }],
          },
        },
      };
      writeFileSync(path.join(agentDir, "models.json"), JSON.stringify(models));
      return {
        command: process.execPath,
        args: [cli, "-p", "--provider", "bench", "--model", "bench-model", "--tools", "read", prompt],
        env: { ...env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_TELEMETRY: "0" },
      };
    },
  };
}

const CLAUDE_OFFLINE = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_AUTOUPDATER: "1",
  DISABLE_TELEMETRY: "1",
  DISABLE_ERROR_REPORTING: "1",
};

function claudePeer(bin: string, project: string): Peer {
  return {
    name: `Claude Code ${CLAUDE.version} -p`,
    provider: "anthropic",
    toolCall: { name: "Read", arguments: { file_path: path.join(project, "notes.md") } },
    start({ origin, env, prompt }) {
      return {
        command: bin,
        args: ["-p", prompt, "--max-turns", "100000", "--allowedTools", "Read"],
        env: { ...env, ...CLAUDE_OFFLINE, ANTHROPIC_BASE_URL: origin, ANTHROPIC_API_KEY: "sk-bench" },
      };
    },
    // Its main loop offers the Read tool; anything else (a title, a quota check) is a side request.
    isSideRequest: (body) => !body.includes('"name":"Read"'),
  };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  installPeers();
}
