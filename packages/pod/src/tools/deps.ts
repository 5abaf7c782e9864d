import { ToolError } from "@yoi/llm-worker";
import { BinaryFileError, type PodFsView } from "../fs/fs-view.ts";
import type { KeyedMutex } from "../fs/keyed-mutex.ts";
import type { ReadTracker } from "../fs/read-tracker.ts";
import { ScopeError } from "../fs/scope-error.ts";

/** What the built-in tools share: the scoped view and the session's read tracker. */
export interface BuiltinToolDeps {
  view: PodFsView;
  reads: ReadTracker;
  /** Serializes changes to one file across parallel calls. */
  writeLocks: KeyedMutex;
  /**
   * Why read_file cannot return an image to the current model (text-only,
   * or a provider without images in tool results); undefined when it can.
   * Absent: images are returned.
   */
  imageRefusal?: () => string | undefined;
  /**
   * What an edit appends to its result after leaving `text` in `real` (a
   * language server's diagnostics); undefined when nothing. Absent: nothing is appended.
   */
  diagnostics?: (real: string, text: string, signal: AbortSignal) => Promise<string | undefined>;
}

/** An edit's result with what the language server says about the file's new text. */
export async function withDiagnostics(
  deps: BuiltinToolDeps,
  result: { message: string; real: string; text: string },
  signal: AbortSignal,
): Promise<string> {
  const note = await deps.diagnostics?.(result.real, result.text, signal);
  return note === undefined ? result.message : `${result.message}\n\n${note}`;
}

/** Turns scope and binary errors into a ToolError the model can act on. */
export function toToolError(error: unknown): unknown {
  if (ScopeError.isInstance(error) || BinaryFileError.isInstance(error)) return new ToolError(error.message);
  return error;
}

/** Runs `fn`, mapping scope errors to clean tool errors. */
export async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw toToolError(error);
  }
}

/** `n` with a singular or plural noun. */
export function plural(n: number, noun: string, nouns = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : nouns}`;
}
