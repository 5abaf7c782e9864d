/**
 * Provider SDKs write to the console on their own (deprecation notices,
 * debug logs). In print mode that would corrupt stdout (`--output json`),
 * in the UI it would tear the screen; so while a session runs, console
 * output goes to a sink the mode chooses, with secrets scrubbed.
 */
import { format } from "node:util";
import { scrub } from "./describe-error.ts";

const METHODS = ["log", "info", "warn", "error", "debug", "trace"] as const;

/** Routes console output to `sink` until the returned function is called. */
export function captureConsole(sink: (line: string) => void, secrets: readonly string[] = []): () => void {
  const saved = METHODS.map((m) => [m, console[m]] as const);
  const seen = new Set<string>();
  for (const method of METHODS) {
    console[method] = (...args: unknown[]) => {
      const text = scrub(format(...args), secrets).trim();
      // SDKs repeat the same notice on every request; once is enough.
      if (text === "" || seen.has(text)) return;
      seen.add(text);
      sink(text.split("\n").join(" "));
    };
  }
  return () => {
    for (const [method, fn] of saved) console[method] = fn as never;
  };
}
