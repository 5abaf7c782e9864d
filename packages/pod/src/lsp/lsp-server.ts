/**
 * One running language server: started over stdio with the LSP's reference
 * JSON-RPC implementation (vscode-languageserver-protocol, imported when
 * the first server starts, so sessions that never edit a checked file do
 * not load it), initialized with the project root as its only workspace
 * folder, told about each file an edit changed (didOpen, then didChange
 * with the whole text), and asked for nothing else: it publishes the
 * file's diagnostics, which `diagnostics()` waits for.
 */

import type { ChildProcess } from "node:child_process";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { errorMessage, YoiError } from "@yoi/manifest/errors";
import type {
  Diagnostic,
  DiagnosticSeverity,
  ProtocolConnection,
  PublishDiagnosticsParams,
} from "vscode-languageserver-protocol/node";
import { trackChild, untrackChild } from "../mcp/child-reaper.ts";
import type { SandboxedCommand } from "../sandbox/sandbox.ts";
import type { LspServerSpec } from "./server-spec.ts";

/** `starting` (spawned, initialize not answered yet) → `ready`; `failed` when it could not start or died; `stopped` once closed. */
export type LspServerState = "starting" | "ready" | "failed" | "stopped";

/** Why a server cannot be used: it did not start, or it died. */
export class LspServerError extends YoiError<"spawn_failed" | "initialize_failed" | "exited"> {
  static override readonly marker: symbol = Symbol.for("yoi.pod.LspServerError");
  override readonly name = "LspServerError";
}

const STDERR_TAIL_BYTES = 2_000;
/** How long a server has to answer `shutdown` before it is killed. */
const SHUTDOWN_MS = 1_000;

interface Published {
  version: number | undefined;
  diagnostics: Diagnostic[];
  /** The sync count of the file when this arrived. */
  afterSync: number;
}

interface Waiter {
  sync: number;
  version: number;
  resolve: (diagnostics: Diagnostic[]) => void;
  /** The server died: it will publish nothing more for this text. */
  reject: (error: LspServerError) => void;
}

interface OpenFile {
  version: number;
  sync: number;
}

export interface LspServerOptions {
  spec: LspServerSpec;
  /** The program (resolved). */
  program: string;
  /** The project root: the server's cwd and its one workspace folder. */
  root: string;
  /** The server's environment (without API keys). */
  env: NodeJS.ProcessEnv;
  /** Called once when the server fails or dies (not when it is stopped). */
  onFailure?: (error: LspServerError) => void;
  /**
   * Wraps the server's command in the session's sandbox (read-only, no
   * network): what a server loads from the project could have been written
   * by the model, and must not run with more power than bash has.
   */
  confine?: (program: string, args: readonly string[], cwd: string) => SandboxedCommand;
  /**
   * The client's pid the server is told (LSP `processId`; default this
   * process's). Servers built on vscode-languageserver check it every few
   * seconds and exit when no such process exists, so a server in a sandbox
   * with its own PID namespace, where this pid names nothing, must be told
   * `null`: that one is ended with this process by the sandbox instead.
   */
  clientProcessId?: number | null;
}

export class LspServer {
  readonly spec: LspServerSpec;
  readonly #options: LspServerOptions;
  #state: LspServerState = "starting";
  #error: LspServerError | undefined;
  #child: ChildProcess | undefined;
  #connection: ProtocolConnection | undefined;
  #ready: Promise<void>;
  #stderr = "";
  #syncs = 0;
  readonly #open = new Map<string, OpenFile>();
  readonly #published = new Map<string, Published>();
  readonly #waiters = new Map<string, Waiter[]>();
  /** Whether the server answers `typescript.tsserverRequest` (until it fails to). */
  #tsserverRequests = true;
  /** Serializes syncs so versions reach the server in order. */
  #queue: Promise<unknown> = Promise.resolve();
  readonly startedAt = Date.now();
  readyMs: number | undefined;

  constructor(options: LspServerOptions) {
    this.spec = options.spec;
    this.#options = options;
    this.#ready = this.#start().catch((error: unknown) => {
      // Whatever stopped the start (the program could not run, initialize failed) is the server's failure.
      const failure = LspServerError.isInstance(error)
        ? error
        : new LspServerError("spawn_failed", `${options.spec.name}: ${errorMessage(error)}`);
      this.#fail(failure);
      throw this.#error ?? failure;
    });
    // Failures are read from `state`/`error`; an unhandled rejection would end the process.
    this.#ready.catch(() => {});
  }

  get state(): LspServerState {
    return this.#state;
  }
  get error(): LspServerError | undefined {
    return this.#error;
  }
  get pid(): number | undefined {
    return this.#child?.pid;
  }
  /** Settles once the server answered initialize (or rejects when it could not start). */
  get ready(): Promise<void> {
    return this.#ready;
  }
  /** Files the server has been told about. */
  get openFiles(): number {
    return this.#open.size;
  }

  async #start(): Promise<void> {
    const { root, program, spec, env } = this.#options;
    // Loaded here: a session that never edits a checked file loads neither (the CLI's start-up is measured).
    const [rpc, { spawn }] = await Promise.all([
      import("vscode-languageserver-protocol/node"),
      import("node:child_process"),
    ]);
    const command = this.#options.confine?.(program, spec.args, root) ?? {
      file: program,
      args: [...spec.args],
    };
    const child = spawn(command.file, command.args, {
      cwd: root,
      env: { ...env, ...spec.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.#child = child;
    child.stderr?.on("data", (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
    });
    const spawned = new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", (error) =>
        reject(
          new LspServerError(
            "spawn_failed",
            `${spec.name}: ${program} could not be started: ${errorMessage(error)}`,
          ),
        ),
      );
    });
    // `close` (not `exit`): the process ended and its stderr is read to the end, for the message.
    child.once("close", (code, signal) => {
      if (child.pid !== undefined) untrackChild(child.pid);
      command.release?.();
      if (this.#state === "stopped") return;
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const tail = this.#stderr.trim().split("\n").slice(-3).join(" | ");
      this.#fail(new LspServerError("exited", `${spec.name} ${how}${tail ? `: ${tail}` : ""}`));
    });
    await spawned;
    if (child.pid !== undefined) trackChild(child.pid);
    const connection = rpc.createProtocolConnection(
      new rpc.StreamMessageReader(child.stdout!),
      new rpc.StreamMessageWriter(child.stdin!),
    );
    this.#connection = connection;
    // A server's own questions: no settings of ours, capabilities and progress accepted.
    connection.onRequest(rpc.ConfigurationRequest.type, (params) => params.items.map(() => null));
    connection.onRequest(rpc.RegistrationRequest.type, () => undefined);
    connection.onRequest(rpc.UnregistrationRequest.type, () => undefined);
    connection.onRequest(rpc.WorkDoneProgressCreateRequest.type, () => undefined);
    connection.onRequest(rpc.WorkspaceFoldersRequest.type, () => [this.#folder()]);
    connection.onNotification(rpc.PublishDiagnosticsNotification.type, (params) => this.#onPublish(params));
    connection.onError(() => {});
    connection.onClose(() => {
      // The process's end says more (its code, its stderr); a server that closed stdout and lives on is ended.
      setTimeout(() => {
        if (this.#state === "stopped") return;
        this.#fail(new LspServerError("exited", `${spec.name} closed its connection`));
      }, SHUTDOWN_MS).unref();
    });
    child.stdin?.on("error", () => {});
    connection.listen();
    try {
      await connection.sendRequest(rpc.InitializeRequest.type, {
        processId: this.#options.clientProcessId === undefined ? process.pid : this.#options.clientProcessId,
        clientInfo: { name: "yoi" },
        rootUri: this.#folder().uri,
        workspaceFolders: [this.#folder()],
        capabilities: {
          textDocument: {
            synchronization: { dynamicRegistration: false, didSave: false },
            publishDiagnostics: { versionSupport: true, codeDescriptionSupport: false },
          },
          workspace: { workspaceFolders: true, configuration: true },
        },
        ...(spec.initializationOptions ? { initializationOptions: spec.initializationOptions } : {}),
      });
      await connection.sendNotification(rpc.InitializedNotification.type, {});
    } catch (error) {
      const failure =
        this.#error ??
        new LspServerError("initialize_failed", `${spec.name} did not initialize: ${errorMessage(error)}`);
      this.#fail(failure);
      throw failure;
    }
    if (this.#state === "starting") {
      this.#state = "ready";
      this.readyMs = Date.now() - this.startedAt;
    }
  }

  #folder() {
    const root = this.#options.root;
    return { uri: pathToFileURL(root).href, name: path.basename(root) };
  }

  #fail(error: LspServerError): void {
    if (this.#state === "failed" || this.#state === "stopped") return;
    this.#state = "failed";
    this.#error = error;
    // Nothing more will be published: a waiter learns why, rather than hearing of no errors.
    for (const waiters of this.#waiters.values()) for (const w of waiters) w.reject(error);
    this.#waiters.clear();
    this.#connection?.dispose();
    this.#child?.kill("SIGKILL");
    this.#options.onFailure?.(error);
  }

  #onPublish(params: PublishDiagnosticsParams): void {
    const open = this.#open.get(params.uri);
    const published: Published = {
      version: params.version ?? undefined,
      diagnostics: params.diagnostics,
      afterSync: open?.sync ?? 0,
    };
    this.#published.set(params.uri, published);
    const waiters = this.#waiters.get(params.uri);
    if (!waiters) return;
    const still = waiters.filter((w) => {
      if (!answers(published, w)) return true;
      w.resolve(published.diagnostics);
      return false;
    });
    if (still.length > 0) this.#waiters.set(params.uri, still);
    else this.#waiters.delete(params.uri);
  }

  /**
   * Tells the server a file's new text and resolves with the diagnostics it
   * publishes for that text, or with `undefined` when `signal` aborts first
   * (the budget ran out, the call was cancelled). Rejects when the server
   * cannot be used.
   */
  async diagnostics(file: string, text: string, signal: AbortSignal): Promise<Diagnostic[] | undefined> {
    const uri = pathToFileURL(file).href;
    const ext = path.extname(file).toLowerCase();
    const synced = this.#queue.then(async () => {
      await this.#ready;
      const connection = this.#connection!;
      const open = this.#open.get(uri);
      const sync = ++this.#syncs;
      if (open === undefined) {
        this.#open.set(uri, { version: 1, sync });
        await connection.sendNotification("textDocument/didOpen", {
          textDocument: { uri, languageId: this.spec.languageId[ext] ?? ext.slice(1), version: 1, text },
        });
        return { sync, version: 1 };
      }
      open.version += 1;
      open.sync = sync;
      await connection.sendNotification("textDocument/didChange", {
        textDocument: { uri, version: open.version },
        contentChanges: [{ text }],
      });
      return { sync, version: open.version };
    });
    this.#queue = synced.catch(() => {});
    const aborted = new Promise<undefined>((resolve) => {
      if (signal.aborted) resolve(undefined);
      signal.addEventListener("abort", () => resolve(undefined), { once: true });
    });
    const at = await Promise.race([synced, aborted]);
    if (at === undefined) return undefined;
    if (this.#state === "failed") throw this.#error;
    if (this.spec.pull === "tsserver" && this.#tsserverRequests) {
      const asked = this.#askTsserver(file).catch(() => {
        // Not typescript-language-server after all (unless it died meanwhile): its publications are waited for instead.
        if (this.#state === "ready") this.#tsserverRequests = false;
        return undefined;
      });
      const answer = await Promise.race([asked, aborted]);
      if (answer !== undefined || signal.aborted) return answer;
    }
    // A server that died while it was asked publishes nothing more: its failure is the answer, not the budget.
    if (this.#ended()) return undefined;
    const published = this.#published.get(uri);
    if (published && answers(published, at)) return published.diagnostics;
    const result = new Promise<Diagnostic[]>((resolve, reject) => {
      const list = this.#waiters.get(uri) ?? [];
      list.push({ ...at, resolve, reject });
      this.#waiters.set(uri, list);
    });
    return Promise.race([result, aborted]);
  }

  /** Throws the server's failure when it died; true when it was stopped. */
  #ended(): boolean {
    if (this.#state === "failed") throw this.#error;
    return this.#state === "stopped";
  }

  /** The file's syntactic and semantic diagnostics, asked of tsserver after the sync (requests run in order). */
  async #askTsserver(file: string): Promise<Diagnostic[]> {
    const connection = this.#connection!;
    const ask = async (command: string) => {
      const response = (await connection.sendRequest("workspace/executeCommand", {
        command: "typescript.tsserverRequest",
        arguments: [command, { file }],
      })) as { success?: boolean; body?: TsserverDiagnostic[]; message?: string } | null;
      if (!response?.success || !Array.isArray(response.body))
        throw new Error(`${command}: ${response?.message ?? "no answer"}`);
      return response.body.map(fromTsserver);
    };
    const [syntactic, semantic] = await Promise.all([
      ask("syntacticDiagnosticsSync"),
      ask("semanticDiagnosticsSync"),
    ]);
    return [...syntactic, ...semantic];
  }

  /** Ends the server: `shutdown` and `exit` when it is up, then SIGTERM, then SIGKILL. */
  async stop(): Promise<void> {
    const wasReady = this.#state === "ready";
    if (this.#state === "stopped") return;
    this.#state = "stopped";
    for (const waiters of this.#waiters.values()) for (const w of waiters) w.resolve([]);
    this.#waiters.clear();
    const child = this.#child;
    const connection = this.#connection;
    if (wasReady && connection) {
      const timeout = new Promise((resolve) => setTimeout(resolve, SHUTDOWN_MS).unref());
      await Promise.race([connection.sendRequest("shutdown").catch(() => {}), timeout]);
      await connection.sendNotification("exit").catch(() => {});
    }
    connection?.dispose();
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const grace = new Promise((resolve) => setTimeout(resolve, SHUTDOWN_MS).unref());
    if ((await Promise.race([exited.then(() => true), grace.then(() => false)])) === false) {
      child.kill("SIGTERM");
      const killed = new Promise((resolve) => setTimeout(resolve, SHUTDOWN_MS).unref());
      if ((await Promise.race([exited.then(() => true), killed.then(() => false)])) === false)
        child.kill("SIGKILL");
    }
    if (child.pid !== undefined) untrackChild(child.pid);
  }

  /** The tail of the server's stderr (for status and errors). */
  get stderrTail(): string {
    return this.#stderr;
  }
}

/** A diagnostic as tsserver gives it (1-based lines and offsets). */
interface TsserverDiagnostic {
  start: { line: number; offset: number };
  end: { line: number; offset: number };
  text: string;
  code?: number;
  category?: string;
}

const TSSERVER_SEVERITY: Record<string, DiagnosticSeverity> = {
  error: 1,
  warning: 2,
  message: 3,
  suggestion: 4,
};

function fromTsserver(d: TsserverDiagnostic): Diagnostic {
  return {
    range: {
      start: { line: d.start.line - 1, character: d.start.offset - 1 },
      end: { line: d.end.line - 1, character: d.end.offset - 1 },
    },
    message: d.text,
    severity: TSSERVER_SEVERITY[d.category ?? "error"] ?? 1,
    source: "typescript",
    ...(d.code !== undefined ? { code: d.code } : {}),
  };
}

/** Whether a publication is about the text of `w`'s sync: its version, or (a server without versions) the first one after it. */
function answers(published: Published, w: Pick<Waiter, "sync" | "version">): boolean {
  if (published.version !== undefined) return published.version >= w.version;
  return published.afterSync >= w.sync;
}
