/**
 * `/diff`: changed files drawn with the edit diff renderer (file-diff.ts),
 * a header line per file, and `/review`'s findings. The caller shows the
 * first lines and keeps the whole for Ctrl-O.
 */
import type { ChangedFile, ReviewResult } from "@yoi/pod";
import type { Style } from "../style.ts";
import { sanitize, sanitizeLine } from "../terminal-text.ts";
import type { RichOutput } from "./rich-output.ts";

const STATUS_WORD: Record<ChangedFile["status"], string> = {
  added: "new",
  untracked: "new, untracked",
  modified: "modified",
  deleted: "deleted",
};

/** Every line of the diff of `files`: a header per file, then its diff. */
export function changesLines(files: readonly ChangedFile[], rich: RichOutput, style: Style): string[] {
  const lines: string[] = [];
  for (const file of files) {
    const name = style.bold(sanitizeLine(file.path));
    if (file.binary || (file.before === undefined && file.after === undefined && file.status !== "deleted")) {
      lines.push(
        `${name} ${style.dim(`(${STATUS_WORD[file.status]}; ${file.binary ? "binary" : "not shown"})`)}`,
      );
      continue;
    }
    const view = rich.renderDiff(file.before ?? "", file.after ?? "", style, Number.POSITIVE_INFINITY);
    lines.push(
      `${name} ${style.dim(`(${STATUS_WORD[file.status]})`)} ${style.green(`+${view.added}`)} ${style.red(`-${view.removed}`)}`,
    );
    for (const l of view.lines) lines.push(`  ${l}`);
  }
  return lines;
}

const SEVERITY_ORDER = { high: 0, medium: 1, low: 2 } as const;

/** A review as people read it: the reviewer's summary, then each finding (most severe first). */
export function reviewLines(result: ReviewResult, style: Style): string[] {
  const lines = [
    style.dim(
      `review of ${result.files} changed file${result.files === 1 ? "" : "s"} against ${sanitizeLine(result.against)}`,
    ),
  ];
  if (result.summary !== "") lines.push(sanitize(result.summary));
  if (result.findings === undefined) {
    lines.push(
      style.yellow(
        `the findings could not be read (${sanitizeLine(result.parseError ?? "no findings")}); the answer above is the reviewer's whole answer`,
      ),
    );
    return lines;
  }
  if (result.findings.length === 0) {
    lines.push(style.green("no findings"));
    return lines;
  }
  const sorted = [...result.findings].sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
  for (const f of sorted) {
    const mark =
      f.severity === "high"
        ? style.red("high")
        : f.severity === "medium"
          ? style.yellow("medium")
          : style.dim("low");
    const where = `${sanitizeLine(f.file)}${f.line !== null ? `:${f.line}` : ""}`;
    lines.push(`${mark} ${style.bold(where)} ${sanitize(f.text)}`);
  }
  return lines;
}
