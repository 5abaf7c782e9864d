/**
 * ANSI styling that switches itself off: no colour when the stream is not a
 * terminal, with NO_COLOR set (any value), TERM=dumb, or --no-color.
 */
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
  const wrap = (open: number, close: number) => (text: string) =>
    enabled ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return {
    enabled,
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    yellow: wrap(33, 39),
    green: wrap(32, 39),
    cyan: wrap(36, 39),
    magenta: wrap(35, 39),
  };
}

/** Visible width of a string (ANSI sequences removed; wide characters count 2). */
export function visibleWidth(text: string): number {
  let width = 0;
  for (const ch of stripAnsi(text)) {
    const code = ch.codePointAt(0) ?? 0;
    width += isWide(code) ? 2 : 1;
  }
  return width;
}

export function stripAnsi(text: string): string {
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");
}

/** Cuts text to `width` columns (ANSI sequences kept and not counted), adding an ellipsis when cut. */
export function truncate(text: string, width: number): string {
  if (width <= 0) return "";
  if (visibleWidth(text) <= width) return text;
  let out = "";
  let used = 0;
  let styled = false;
  for (let i = 0; i < text.length; ) {
    const ansi = /^\x1b\[[0-9;?]*[A-Za-z]/.exec(text.slice(i, i + 16));
    if (ansi) {
      out += ansi[0];
      styled = true;
      i += ansi[0].length;
      continue;
    }
    const ch = String.fromCodePoint(text.codePointAt(i) ?? 32);
    const w = isWide(ch.codePointAt(0) ?? 0) ? 2 : 1;
    if (used + w > width - 1) break;
    out += ch;
    used += w;
    i += ch.length;
  }
  return `${out}…${styled ? "\x1b[0m" : ""}`;
}

function isWide(code: number): boolean {
  return (
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd)
  );
}
