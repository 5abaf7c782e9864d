import type { LspConfig } from "@yoi/manifest";
import type { Diagnostic } from "vscode-languageserver-protocol/node";

const SEVERITY_NAMES = ["error", "warning", "information", "hint"] as const;
/** Longest message text shown per diagnostic. */
const MAX_MESSAGE_CHARS = 300;

/** The diagnostics at or above `severity` (a diagnostic without one counts as an error), most severe first, in file order. */
export function shownDiagnostics(
  diagnostics: readonly Diagnostic[],
  severity: LspConfig["severity"],
): Diagnostic[] {
  const limit = SEVERITY_NAMES.indexOf(severity) + 1;
  return diagnostics
    .filter((d) => (d.severity ?? 1) <= limit)
    .sort(
      (a, b) =>
        (a.severity ?? 1) - (b.severity ?? 1) ||
        a.range.start.line - b.range.start.line ||
        a.range.start.character - b.range.start.character,
    );
}

function oneLine(message: string): string {
  const flat = message.replace(/\s*\n\s*/g, " ").trim();
  return flat.length > MAX_MESSAGE_CHARS ? `${flat.slice(0, MAX_MESSAGE_CHARS - 3)}...` : flat;
}

/** One diagnostic as the model reads it: `  12:5 error TS2322: message` (1-based line and column). */
export function formatDiagnostic(d: Diagnostic): string {
  const severity = SEVERITY_NAMES[(d.severity ?? 1) - 1] ?? "error";
  // TypeScript's codes are numbers; people (and models) know them as TS2322.
  const ts = /^(ts|typescript)$/i.test(d.source ?? "");
  const code = d.code === undefined ? "" : ts && typeof d.code === "number" ? ` TS${d.code}` : ` ${d.code}`;
  return `  ${d.range.start.line + 1}:${d.range.start.character + 1} ${severity}${code}: ${oneLine(typeof d.message === "string" ? d.message : d.message.value)}`;
}

/** The block appended to a tool result, or undefined when nothing is shown. */
export function formatDiagnostics(
  file: string,
  server: string,
  diagnostics: readonly Diagnostic[],
  config: Pick<LspConfig, "severity" | "maxDiagnostics">,
): string | undefined {
  const shown = shownDiagnostics(diagnostics, config.severity);
  if (shown.length === 0) return undefined;
  const what = config.severity === "error" ? "error" : "problem";
  const lines = shown.slice(0, config.maxDiagnostics).map(formatDiagnostic);
  if (shown.length > config.maxDiagnostics)
    lines.push(`  ... and ${shown.length - config.maxDiagnostics} more`);
  return `${server} reports ${shown.length} ${what}${shown.length === 1 ? "" : "s"} in ${file}:\n${lines.join("\n")}`;
}
