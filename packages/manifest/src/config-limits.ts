/**
 * Limits of a config file, checked with jsonc-parser's scanner (a loop, no
 * recursion) before anything recursive touches the text: a file of a
 * megabyte or a value nested hundreds of levels deep is not a config anyone
 * wrote, and must be an error with a location, never a stack overflow.
 */
import * as jsonc from "jsonc-parser";

// jsonc-parser's SyntaxKind is an ambient const enum, which verbatimModuleSyntax cannot read: its values.
const OPEN_BRACE = 1;
const CLOSE_BRACE = 2;
const OPEN_BRACKET = 3;
const CLOSE_BRACKET = 4;
const EOF = 17;

/** Largest config file read, in bytes. */
export const CONFIG_MAX_BYTES = 1024 * 1024;
/** Deepest nesting of objects and arrays in a config file. */
export const CONFIG_MAX_DEPTH = 64;

/** The first limit `source` breaks, with its 1-based position, or undefined. */
export function configLimitProblem(
  source: string,
): { kind: "too_large" | "too_deep"; line: number; column: number; detail: string } | undefined {
  const bytes = Buffer.byteLength(source, "utf8");
  if (bytes > CONFIG_MAX_BYTES) {
    return {
      kind: "too_large",
      line: 1,
      column: 1,
      detail: `the file is ${bytes} bytes; a config file may be at most ${CONFIG_MAX_BYTES} bytes`,
    };
  }
  const scanner = jsonc.createScanner(source, false);
  let depth = 0;
  for (let token: number = scanner.scan(); token !== EOF; token = scanner.scan()) {
    if (token === OPEN_BRACE || token === OPEN_BRACKET) {
      depth += 1;
      if (depth > CONFIG_MAX_DEPTH) {
        return {
          kind: "too_deep",
          line: scanner.getTokenStartLine() + 1,
          column: scanner.getTokenStartCharacter() + 1,
          detail: `values are nested more than ${CONFIG_MAX_DEPTH} levels deep here; a config is never that deep`,
        };
      }
    } else if (token === CLOSE_BRACE || token === CLOSE_BRACKET) {
      depth = Math.max(0, depth - 1);
    }
  }
  return undefined;
}
