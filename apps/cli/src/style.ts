/**
 * ANSI styling that switches itself off: no colour when the stream is not a
 * terminal, with NO_COLOR set (any value), TERM=dumb, or --no-color.
 */
import { styleText } from "node:util";

export interface Style {
  enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  green(text: string): string;
  cyan(text: string): string;
  magenta(text: string): string;
}

export function colorEnabled(
  stream: { isTTY?: boolean },
  env: Readonly<Record<string, string | undefined>> = process.env,
  argv: readonly string[] = process.argv,
): boolean {
  if (argv.includes("--no-color")) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0") return true;
  if (env.TERM === "dumb") return false;
  return stream.isTTY === true;
}

export function createStyle(enabled: boolean): Style {
  // styleText does the escape codes; whether to colour at all is decided above (it sees our flags and env).
  const paint = (format: Parameters<typeof styleText>[0]) => (text: string) =>
    enabled ? styleText(format, text, { validateStream: false }) : text;
  return {
    enabled,
    bold: paint("bold"),
    dim: paint("dim"),
    red: paint("red"),
    yellow: paint("yellow"),
    green: paint("green"),
    cyan: paint("cyan"),
    magenta: paint("magenta"),
  };
}
