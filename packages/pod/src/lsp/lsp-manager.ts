/**
 * The language servers of one session: which server checks which file (by
 * extension), each started the first time an edit needs it (one per
 * server per project root, reused), and the diagnostics an edit appends to
 * its tool result. A server that cannot start, dies, or misses the time
 * budget costs the edit nothing: it is said once, in the tool result and
 * as an alert, and the edit's result is otherwise unchanged.
 * See docs/design/lsp-diagnostics.md.
 */

import { realpathSync } from "node:fs";
import * as path from "node:path";
import type { LspConfig } from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import { type Confinement, type SessionSandbox, settledConfinement } from "../sandbox/pod-sandbox.ts";
import type { SandboxedCommand } from "../sandbox/sandbox.ts";
import { formatDiagnostics } from "./format-diagnostics.ts";
import { LspServer, type LspServerState } from "./lsp-server.ts";
import {
  LspCommandResolver,
  type LspServerSpec,
  type LspSpecProblem,
  lspServerSpecs,
} from "./server-spec.ts";

/** A server as `/lsp` and `yoi lsp status` show it. */
export interface LspServerStatus {
  name: string;
  command: string;
  extensions: readonly string[];
  /** `idle`: known and found, not started yet (no edit needed it); `missing`: its program was not found. */
  state: LspServerState | "idle" | "missing" | "disabled" | "invalid";
  /** The program that runs (or would run), once resolved. */
  program?: string;
  pid?: number;
  /** Files the server has been told about. */
  openFiles?: number;
  /** How long initialize took. */
  readyMs?: number;
  /** Why it failed, is missing or invalid. */
  detail?: string;
}

export interface LspManagerOptions {
  config: LspConfig;
  /** The project root: each server's cwd and workspace folder. */
  root: string;
  /** The servers' environment, without API keys (the bash tool's). */
  env: NodeJS.ProcessEnv;
  /** How a real path is shown to the model. */
  display?: (real: string) => string;
  /** Problems worth the user's attention (a server failed or is slow), each said once. */
  onAlert?: (level: "info" | "warn", message: string) => void;
  /**
   * The session's sandbox, when active: servers run in it read-only and
   * without network (they load code from the project, which the model can
   * write). Without one they run unconfined, as bash then does.
   */
  sandbox?: Confinement | SessionSandbox;
}

export class LspManager {
  readonly #options: LspManagerOptions;
  readonly #specs: LspServerSpec[];
  readonly #disabled: string[];
  readonly #problems: LspSpecProblem[];
  readonly #byExt = new Map<string, LspServerSpec>();
  readonly #resolver: LspCommandResolver;
  readonly #servers = new Map<string, LspServer>();
  readonly #missing = new Map<string, string>();
  /** Servers whose failure or missed budget has been reported. */
  readonly #reported = new Set<string>();
  #closed = false;

  constructor(options: LspManagerOptions) {
    this.#options = options;
    const { specs, disabled, problems } = lspServerSpecs(options.config);
    this.#specs = specs;
    this.#disabled = disabled;
    this.#problems = problems;
    // A later server claims an extension over an earlier one: configured servers come after the built-ins.
    for (const spec of specs) for (const ext of spec.extensions) this.#byExt.set(ext, spec);
    this.#resolver = new LspCommandResolver(options.root, options.env.PATH, specs);
  }

  /** Whether edits are checked at all (`lsp.enabled`). */
  get enabled(): boolean {
    return this.#options.config.enabled;
  }

  /** The server that checks `file`, if any. */
  serverFor(file: string): LspServerSpec | undefined {
    return this.#byExt.get(path.extname(file).toLowerCase());
  }

  #server(spec: LspServerSpec, confined: Confinement | undefined): LspServer | undefined {
    const running = this.#servers.get(spec.name);
    if (running) return running;
    if (this.#missing.has(spec.name) || this.#closed) return undefined;
    const resolved = this.#resolver.resolve(spec.command, spec.name);
    if (!resolved.found) {
      this.#missing.set(spec.name, resolved.reason);
      // A built-in server the project does not have is normal; one the user configured is worth a word.
      if (Object.hasOwn(this.#options.config.servers, spec.name))
        this.#options.onAlert?.("warn", `language server ${spec.name}: ${resolved.reason}`);
      return undefined;
    }
    const bin = path.dirname(process.execPath);
    const env = this.#options.env;
    const server = new LspServer({
      spec,
      program: resolved.path,
      root: this.#options.root,
      // Servers written for Node run on the Node yoi runs on.
      env: { ...env, PATH: env.PATH ? `${bin}${path.delimiter}${env.PATH}` : bin },
      ...(confined
        ? {
            confine: confineIn(confined),
            // bubblewrap gives the server a PID namespace of its own, where this pid names nothing.
            ...(confined.sandbox.kind === "bwrap" ? { clientProcessId: null } : {}),
          }
        : {}),
    });
    this.#servers.set(spec.name, server);
    return server;
  }

  /**
   * The text appended to the result of an edit that left `text` in `file`
   * (a real path): the file's diagnostics, a one-time note that its server
   * failed or missed the budget, or undefined (no server, nothing to show,
   * or `signal` aborted).
   */
  async diagnose(file: string, text: string, signal?: AbortSignal): Promise<string | undefined> {
    if (!this.enabled || this.#closed) return undefined;
    const spec = this.serverFor(file);
    if (!spec) return undefined;
    const confined = await settledConfinement(this.#options.sandbox);
    if (this.#closed) return undefined;
    const server = this.#server(spec, confined);
    if (!server || server.state === "failed" || server.state === "stopped")
      return server ? this.#failureNote(server) : undefined;
    const { timeoutMs } = this.#options.config;
    const budget = AbortSignal.timeout(timeoutMs);
    const shown = this.#options.display?.(file) ?? file;
    let diagnostics: Awaited<ReturnType<LspServer["diagnostics"]>>;
    try {
      diagnostics = await server.diagnostics(file, text, signal ? AbortSignal.any([signal, budget]) : budget);
    } catch {
      return this.#failureNote(server);
    }
    if (diagnostics === undefined) {
      if (signal?.aborted || this.#reported.has(spec.name)) return undefined;
      this.#reported.add(spec.name);
      const starting = server.state === "starting" ? " is still starting and" : "";
      const message = `language server ${spec.name}${starting} did not report on ${shown} within ${formatMs(timeoutMs)}`;
      this.#options.onAlert?.("warn", message);
      return `[${message}; the file is saved. Later edits are checked without this notice.]`;
    }
    return formatDiagnostics(shown, spec.name, diagnostics, this.#options.config);
  }

  #failureNote(server: LspServer): string | undefined {
    const name = server.spec.name;
    if (this.#reported.has(`${name}:failed`)) return undefined;
    this.#reported.add(`${name}:failed`);
    const message = `language server ${name} failed (${errorMessage(server.error ?? "stopped")}); files it checks are not checked for the rest of this session`;
    this.#options.onAlert?.("warn", message);
    return `[${message}; the file is saved.]`;
  }

  /** Every server the config knows, with its state. */
  status(): LspServerStatus[] {
    const rows: LspServerStatus[] = this.#specs.map((spec) => {
      const base = { name: spec.name, command: spec.command, extensions: spec.extensions };
      const server = this.#servers.get(spec.name);
      if (server) {
        return {
          ...base,
          state: server.state,
          program: this.#resolvedProgram(spec),
          ...(server.pid !== undefined && server.state !== "stopped" ? { pid: server.pid } : {}),
          openFiles: server.openFiles,
          ...(server.readyMs !== undefined ? { readyMs: server.readyMs } : {}),
          ...(server.error ? { detail: server.error.message } : {}),
        };
      }
      const missing = this.#missing.get(spec.name);
      if (missing !== undefined) return { ...base, state: "missing", detail: missing };
      const resolved = this.#resolver.resolve(spec.command, spec.name);
      return resolved.found
        ? { ...base, state: "idle", program: resolved.path }
        : { ...base, state: "missing", detail: resolved.reason };
    });
    for (const name of this.#disabled) rows.push({ name, command: "", extensions: [], state: "disabled" });
    for (const p of this.#problems)
      rows.push({ name: p.name, command: "", extensions: [], state: "invalid", detail: p.message });
    return rows;
  }

  #resolvedProgram(spec: LspServerSpec): string {
    const resolved = this.#resolver.resolve(spec.command, spec.name);
    return resolved.found ? resolved.path : spec.command;
  }

  /**
   * Starts the server for `name` now (`yoi lsp status --check`), resolving once it answered
   * initialize or failed, or when `timeoutMs` passes.
   */
  async start(name: string, timeoutMs: number): Promise<void> {
    const spec = this.#specs.find((s) => s.name === name);
    if (!spec) return;
    const confined = await settledConfinement(this.#options.sandbox);
    if (this.#closed) return;
    const server = this.#server(spec, confined);
    if (!server) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([server.ready.catch(() => {}), timeout]);
    clearTimeout(timer);
  }

  /** Stops every server (yoi exits or the session closes). */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#servers.values()].map((s) => s.stop()));
  }
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** A server's command in the sandbox: nothing writable (a private /tmp aside), no network. */
function confineIn({ sandbox, policy }: Confinement) {
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  return (program: string, args: readonly string[], cwd: string): SandboxedCommand => {
    // Read-only, and visible even where they lie under the private /tmp: the project, the
    // server's own install (its whole node_modules tree, which it loads from) and this Node.
    const installs = [program, ...args.filter((a) => path.isAbsolute(a)), process.execPath].map(installRoot);
    return sandbox.wrap("/bin/sh", `exec ${[program, ...args].map(quote).join(" ")}`, cwd, {
      writeRoots: [],
      readOnlyRoots: [...new Set([...policy.writeRoots, ...installs])],
      hidden: policy.hidden,
      network: false,
    });
  };
}

/** Where a program's code lives: its outermost `node_modules` (what it may load), else its directory. */
function installRoot(file: string): string {
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    return path.dirname(file);
  }
  const marker = `${path.sep}node_modules${path.sep}`;
  const at = real.indexOf(marker);
  return at >= 0 ? real.slice(0, at + marker.length - 1) : path.dirname(real);
}
