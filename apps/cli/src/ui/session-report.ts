/**
 * What `/cost` and `/status` print: the session's tokens and dollars by
 * model, and where the session stands (model, mode, sandbox, MCP servers,
 * context use, versions).
 */
import type { PermissionMode } from "@yoi/manifest";
import type { McpServerStatus, ModelUsage, SandboxStatus } from "@yoi/pod";
import type { Style } from "../style.ts";
import { sanitizeLine } from "../terminal-text.ts";
import { pricingHint } from "../usage-ledger.ts";
import { formatCost } from "./cost.ts";
import { formatTokens } from "./tool-summary.ts";

/** A row of `/cost`: a model (or the total) and, from column `indent`, what it used and cost. */
export interface CostRow {
  head: string;
  body: string;
  indent: number;
}

/** `/cost`: a row per model (calls, tokens in / cached / out, dollars), then the total and any unknown price. */
export function costRows(rows: readonly ModelUsage[], total: number | undefined, style: Style): CostRow[] {
  if (rows.length === 0)
    return [{ head: "", body: style.dim("no model calls in this session yet: $0"), indent: 0 }];
  const indent = Math.max(...rows.map((r) => r.model.length)) + 2;
  const out: CostRow[] = rows.map((row) => {
    const u = row.usage;
    const cached = (u.cacheReadTokens ?? 0) > 0 ? ` · ${formatTokens(u.cacheReadTokens ?? 0)} cached` : "";
    return {
      head: sanitizeLine(row.model),
      body: `${row.calls} call${row.calls === 1 ? "" : "s"} · ${formatTokens(u.inputTokens ?? 0)} in${cached} · ${formatTokens(u.outputTokens ?? 0)} out  ${style.bold(formatCost(row.costUsd))}`,
      indent,
    };
  });
  out.push({
    head: "total",
    body: `${style.bold(formatCost(total))} ${style.dim("at list prices")}`,
    indent,
  });
  for (const row of rows)
    if (row.costUsd === undefined)
      out.push({ head: "", body: style.dim(`$? ${sanitizeLine(pricingHint(row.model))}`), indent: 0 });
  return out;
}

/** Everything `/status` shows. */
export interface StatusFacts {
  session: string;
  model: string;
  baseURL: string | undefined;
  cwd: string;
  mode: PermissionMode;
  sandbox: { status: SandboxStatus; reason?: string | undefined };
  mcp: readonly McpServerStatus[];
  /** Tokens in the context after the last model call; undefined before any. */
  contextTokens: number | undefined;
  window: number;
  versions: { yoi: string; node: string };
}

/** A row of `/status`: what, and its value (made safe to show). */
export interface StatusRow {
  name: string;
  value: string;
}

/** The rows of `/status`; the caller lays each out (the value word-wrapped beside its name). */
export function statusRows(facts: StatusFacts): StatusRow[] {
  // Values come from config files and servers: shown, never acted on by the terminal.
  const row = (name: string, value: string): StatusRow => ({ name, value: sanitizeLine(value) });
  const sandbox =
    facts.sandbox.status === "active"
      ? "active (bash runs in the OS sandbox)"
      : facts.sandbox.status === "disabled"
        ? 'off ("sandbox": false or --no-sandbox)'
        : `unavailable: ${facts.sandbox.reason ?? "none was found"} (every bash command asks)`;
  const mcp =
    facts.mcp.length === 0
      ? "none configured"
      : facts.mcp
          .map((s) => `${s.name} ${s.state}${s.state === "ready" ? ` (${s.tools.length} tools)` : ""}`)
          .join(", ");
  const context =
    facts.contextTokens === undefined
      ? `no model call yet · window ${formatTokens(facts.window)}`
      : `${formatTokens(facts.contextTokens)} of ${formatTokens(facts.window)} (${percent(facts.contextTokens, facts.window)})`;
  return [
    row("session", facts.session),
    row("model", `${facts.model}${facts.baseURL ? ` at ${facts.baseURL}` : ""}`),
    row("directory", facts.cwd),
    row("mode", facts.mode),
    row("sandbox", sandbox),
    row("mcp", mcp),
    row("context", context),
    row("versions", `yoi ${facts.versions.yoi} · node ${facts.versions.node}`),
  ];
}

function percent(used: number, window: number): string {
  if (window <= 0) return "window unknown";
  const pct = (used / window) * 100;
  return `${pct < 10 ? pct.toFixed(1) : Math.round(pct)}%`;
}
