import { listSessions, type SessionSummary } from "@yoi/worker-persistence";
import type { Command } from "../args.ts";
import { EXIT } from "../exit-codes.ts";
import { projectRoot } from "../project-root.ts";
import { loadCliConfig } from "../session-setup.ts";
import { shortIds } from "../sessions/short-ids.ts";
import { colorEnabled, createStyle } from "../style.ts";
import { sanitizeLine } from "../terminal-text.ts";
import { truncate, visibleWidth } from "../text-width.ts";

/**
 * `yoi sessions`: the sessions of this directory (or, with `--all`, of every
 * directory, including runs that failed before the model said anything),
 * newest first, forks under their parent.
 */
export async function sessionsCommand(command: Extract<Command, { kind: "sessions" }>): Promise<number> {
  const cli = await loadCliConfig(command.flags);
  const all = await listSessions({ dir: cli.dataDir });
  const here = await projectRoot(cli.cwd, cli.config.scope.root);
  const rows = command.all ? all : all.filter((s) => s.cwd === here && !s.failedBeforeOutput);
  if (rows.length === 0) {
    process.stdout.write(
      command.all || all.length === 0
        ? `no sessions yet in ${cli.dataDir}\n`
        : `no sessions in ${sanitizeLine(here)} (${all.length} elsewhere: yoi sessions --all)\n`,
    );
    return EXIT.ok;
  }
  const style = createStyle(colorEnabled(process.stdout));
  // On a terminal the table fits its width; into a pipe it goes whole.
  const width = process.stdout.isTTY ? process.stdout.columns : undefined;
  process.stdout.write(`${formatSessionTable(rows, { showDir: command.all, style, width })}\n`);
  return EXIT.ok;
}

/** The scope root a session records as its `cwd`. */
export function formatSessionTable(
  rows: readonly SessionSummary[],
  options: {
    showDir?: boolean;
    style?: ReturnType<typeof createStyle>;
    now?: number;
    /** Columns the table must fit in (a terminal's): columns are left out, then titles cut. */
    width?: number | undefined;
  } = {},
): string {
  const style = options.style ?? createStyle(false);
  const now = options.now ?? Date.now();
  const ids = shortIds(rows.map((s) => s.id));
  // Titles, models and directories come from session logs, which a `yoi serve` client or anyone may have written.
  const table = sessionTree(rows).map(({ session: s, depth }) => [
    sanitizeLine(ids.get(s.id) ?? s.id),
    `${depth > 0 ? `${"  ".repeat(depth - 1)}└ ` : ""}${truncate(sanitizeLine(s.title ?? "(no prompt yet)"), 48)}`,
    ago(Date.parse(s.updatedAt), now),
    sanitizeLine(s.model ?? "-"),
    size(s.sizeBytes),
    ...(options.showDir ? [sanitizeLine(s.cwd ?? "-")] : []),
  ]);
  const head = ["id", "title", "updated", "model", "size", ...(options.showDir ? ["dir"] : [])];
  // Measured in terminal columns: a title in Japanese takes two a character.
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((r) => visibleWidth(r[i] ?? ""))));
  let shown = head.map((_, i) => i);
  const across = () => shown.reduce((sum, i) => sum + (widths[i] ?? 0), 0) + 2 * (shown.length - 1);
  const room = options.width === undefined ? undefined : options.width - 1;
  if (room !== undefined) {
    // Wider than the terminal: the directory, the size and the model go first, then the titles are cut.
    for (const column of [5, 4, 3]) if (across() > room) shown = shown.filter((i) => i !== column);
    const over = across() - room;
    if (over > 0) widths[1] = Math.max(head[1]!.length, (widths[1] ?? 0) - over);
  }
  const line = (cells: string[]) =>
    shown
      .map((i) => {
        const cell = truncate(cells[i] ?? "", widths[i] ?? 0);
        return cell + " ".repeat(Math.max(0, (widths[i] ?? 0) - visibleWidth(cell)));
      })
      .join("  ")
      .trimEnd();
  return [style.dim(line(head)), ...table.map(line)].join("\n");
}

/**
 * Rows in tree order: each session followed by its forks (newest first),
 * with their depth. A fork whose parent is not among the rows is a root.
 */
export function sessionTree(rows: readonly SessionSummary[]): { session: SessionSummary; depth: number }[] {
  const ids = new Set(rows.map((r) => r.id));
  const children = new Map<string, SessionSummary[]>();
  const roots: SessionSummary[] = [];
  for (const row of rows) {
    const parent = row.parentSessionId;
    if (parent !== undefined && parent !== row.id && ids.has(parent)) {
      const list = children.get(parent) ?? [];
      list.push(row);
      children.set(parent, list);
    } else {
      roots.push(row);
    }
  }
  const out: { session: SessionSummary; depth: number }[] = [];
  const seen = new Set<string>();
  const visit = (session: SessionSummary, depth: number) => {
    if (seen.has(session.id)) return;
    seen.add(session.id);
    out.push({ session, depth });
    for (const child of children.get(session.id) ?? []) visit(child, depth + 1);
  };
  for (const root of roots) visit(root, 0);
  // a parent cycle (hand-edited logs) leaves rows unvisited: list them flat
  for (const row of rows) visit(row, 0);
  return out;
}

/** "5m ago" for a time. */
export function ago(then: number, now: number): string {
  if (!Number.isFinite(then)) return "-";
  const s = Math.max(0, Math.round((now - then) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
