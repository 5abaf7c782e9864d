/**
 * Keeps what tools change: before write_file or edit_file runs, the file's
 * prior content is read; after it, a change is logged as a `file_change`
 * record with the prior content in the blob store. bash is covered by a
 * scan of the writable scope before and after the command (see
 * scope-scan.ts); a background command is scanned again when it ends, and
 * what changed since the last scan is recorded as its change. While one
 * runs, what changed before a bash call is its change too (not the user's
 * edits to leave alone), so a foreground command's scan cannot drop it;
 * what changed while a foreground command ran is the foreground command's,
 * even when the background command's exit is heard first.
 * Failures here never fail the tool: they are reported through `onError`
 * and the change goes unrecorded.
 */

import type { BlobStore, Hook, ToolCallInfo } from "@yoi/llm-worker";
import { errorMessage } from "@yoi/manifest/errors";
import type { FileChangeRecord, SessionRecordInput } from "@yoi/worker-persistence";
import { KeyedMutex } from "../fs/keyed-mutex.ts";
import type { ScopedFs } from "../fs/scoped-fs.ts";
import { keptState, type ObservedFile, observeFile, sameContent } from "./file-state.ts";
import { type ScanLimits, ScopeScanner } from "./scope-scan.ts";

/** Tools whose `path` argument names the one file they change. */
export const FILE_TOOLS: ReadonlySet<string> = new Set(["write_file", "edit_file"]);

/**
 * How long a background command's end waits for the foreground bash calls
 * in flight to be scanned (a call that never reaches its end, as in a paused
 * batch, holds it no longer than this).
 */
const FOREGROUND_WAIT_MS = 5_000;

export interface CheckpointRecorderOptions {
  fs: ScopedFs;
  blobStore: BlobStore;
  /**
   * Queues a record in the session log. A promise is a record still being
   * prepared (the prior content going into the blob store), so the tool's
   * result does not wait for it; the log keeps the order of the calls.
   */
  append: (record: SessionRecordInput | Promise<SessionRecordInput>) => void;
  /** The user turn in progress. */
  turn: () => number;
  /** Told when a change could not be recorded. */
  onError?: (message: string) => void;
  /** Track files bash changes by scanning the scope (default true). */
  scanBash?: boolean;
  scanLimits?: ScanLimits;
  /** The calls that started background commands still running, oldest first. */
  backgroundRunning?: () => readonly string[];
}

export class CheckpointRecorder {
  readonly #o: CheckpointRecorderOptions;
  readonly #scanner: ScopeScanner;
  readonly #scanLock = new KeyedMutex();
  readonly #pending = new Map<string, { path: string; before: ObservedFile }>();
  /** Foreground bash calls between their two scans, each with what resolves when the second is done. */
  readonly #foreground = new Map<string, { done: Promise<void>; finish: () => void }>();

  constructor(options: CheckpointRecorderOptions) {
    this.#o = options;
    this.#scanner = new ScopeScanner(options.fs, options.scanLimits);
  }

  /** The hook that watches tool calls. */
  hook(): Hook {
    return {
      name: "checkpoints",
      beforeToolCall: async (call) => {
        if (call.name === "bash" && this.#o.scanBash !== false) this.#foregroundStarts(call.callId);
        await this.#guard(call, () => this.#before(call));
        return undefined;
      },
      afterToolCall: async (call) => {
        try {
          await this.#guard(call, () => this.#after(call));
        } finally {
          this.#foregroundEnds(call.callId);
        }
      },
    };
  }

  /**
   * A background bash command (started by call `callId`) ended: the scope is
   * scanned and what changed since the last scan is logged as its change.
   */
  async backgroundEnded(callId: string): Promise<void> {
    if (this.#o.scanBash === false) return;
    const call = { name: "bash", callId };
    // A foreground command running now is scanned when it ends, and what changed while it ran is its own
    // (the file it made that this command was waiting for): its scan goes first, whichever exit is heard first.
    await this.#foregroundScanned();
    await this.#guard(call, async () => {
      const changes = await this.#scanLock.run("scan", () => this.#scanner.scan());
      for (const change of changes) await this.#record(change.path, call, change.before, change.after);
    });
  }

  #foregroundStarts(callId: string): void {
    let finish!: () => void;
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    this.#foreground.set(callId, { done, finish });
  }

  #foregroundEnds(callId: string): void {
    this.#foreground.get(callId)?.finish();
    this.#foreground.delete(callId);
  }

  /** Resolves once the foreground bash calls in flight now have been scanned at their end (or after a bound). */
  async #foregroundScanned(): Promise<void> {
    const running = [...this.#foreground.values()].map((f) => f.done);
    if (running.length === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, FOREGROUND_WAIT_MS);
      timer.unref?.();
    });
    await Promise.race([Promise.all(running), bound]);
    clearTimeout(timer);
  }

  async #guard(call: Pick<ToolCallInfo, "name" | "callId">, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.#pending.delete(call.callId);
      const message = errorMessage(error);
      this.#o.onError?.(
        `${call.name}: the change could not be checkpointed (${message}); a rewind cannot undo it`,
      );
    }
  }

  async #before(call: ToolCallInfo): Promise<void> {
    if (FILE_TOOLS.has(call.name)) {
      const target = (call.args as { path?: unknown } | undefined)?.path;
      if (typeof target !== "string") return;
      let real: string;
      try {
        real = (await this.#o.fs.resolve(target, "write")).real;
      } catch {
        return; // out of scope or invalid: the tool refuses it too
      }
      this.#pending.set(call.callId, { path: real, before: await observeFile(this.#o.fs, real) });
    } else if (call.name === "bash" && this.#o.scanBash !== false) {
      const changes = await this.#scanLock.run("scan", () => this.#scanner.scan());
      // Changed since the last scan: with a background command running, by it (the newest, when several).
      const by = this.#o.backgroundRunning?.().at(-1);
      if (by !== undefined)
        for (const change of changes)
          await this.#record(change.path, { name: "bash", callId: by }, change.before, change.after);
    }
  }

  async #after(call: ToolCallInfo): Promise<void> {
    if (FILE_TOOLS.has(call.name)) {
      const pending = this.#pending.get(call.callId);
      this.#pending.delete(call.callId);
      if (pending === undefined) return;
      const after = await observeFile(this.#o.fs, pending.path);
      if (sameContent(pending.before.state, after.state)) return;
      await this.#record(pending.path, call, pending.before, after);
      const st = await this.#o.fs.stat(pending.path).catch(() => undefined);
      this.#scanner.note(pending.path, after, st?.size ?? 0, st?.mtimeMs ?? 0);
    } else if (call.name === "bash" && this.#o.scanBash !== false) {
      const changes = await this.#scanLock.run("scan", () => this.#scanner.scan());
      for (const change of changes) await this.#record(change.path, call, change.before, change.after);
    }
  }

  async #record(
    path: string,
    call: Pick<ToolCallInfo, "name" | "callId">,
    before: ObservedFile,
    after: ObservedFile,
  ): Promise<void> {
    const turn = this.#o.turn();
    const record = keptState(this.#o.blobStore, before).then(
      (kept): Omit<FileChangeRecord, "v" | "seq" | "ts"> => ({
        type: "file_change",
        path,
        tool: call.name,
        callId: call.callId,
        turn,
        before: kept,
        after: after.state,
      }),
    );
    record.catch((error: unknown) => {
      const message = errorMessage(error);
      this.#o.onError?.(
        `${call.name}: the prior content of ${path} could not be kept (${message}); a rewind cannot undo it`,
      );
    });
    this.#o.append(record);
  }
}
