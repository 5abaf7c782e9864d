import { homedir } from "node:os";
import { displaySource } from "./config-error.ts";
import { formatPath, isPlainObject, type PathSegment } from "./config-path.ts";
import type { LoadedConfig } from "./load-config.ts";

/** Header names whose values are credentials: shown as `<redacted>`. */
const SECRET_HEADER = /auth|key|token|secret|cookie|password/i;

/**
 * Render the effective config, one leaf per line with its source, for
 * `yoi config`:
 *
 * ```text
 * model                    "anthropic/claude-sonnet-4-5"   ~/.yoi/config.jsonc
 * worker.maxTurns          10                              env:YOI_MAX_TURNS
 * ```
 *
 * Long strings are cut to one line; credential-like header values are
 * redacted. Fields that are unset and have no default are not listed.
 */
export function formatConfig(
  loaded: Pick<LoadedConfig, "config" | "sources">,
  options: {
    home?: string;
    /** Columns to fit each line in (a terminal's): values are cut further, with `...`, to make room. */
    width?: number | undefined;
  } = {},
): string {
  const home = options.home ?? homedir();
  const rows: [string, string, string][] = [];
  const walk = (value: unknown, path: PathSegment[]) => {
    if (isPlainObject(value) && Object.keys(value).length > 0) {
      for (const [k, v] of Object.entries(value)) walk(v, [...path, k]);
      return;
    }
    if (value === undefined) return;
    const at = formatPath(path);
    // Arrays whose elements come from different sources (permission rules): one row each.
    if (Array.isArray(value) && value.length > 0 && loaded.sources[`${at}[0]`] !== undefined) {
      value.forEach((element, i) => {
        const elementPath = formatPath([...path, i]);
        rows.push([
          elementPath,
          render(element, 200),
          displaySource(sourceFor(loaded.sources, elementPath), home),
        ]);
      });
      return;
    }
    // Header values and MCP servers' environment values named like credentials.
    const secret =
      (path.includes("headers") || (path[0] === "mcpServers" && path[2] === "env")) &&
      SECRET_HEADER.test(String(path[path.length - 1]));
    rows.push([
      at,
      secret ? "<redacted>" : render(value),
      displaySource(sourceFor(loaded.sources, at), home),
    ]);
  };
  walk(loaded.config, []);
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w2 = Math.max(...rows.map((r) => r[2].length));
  // The value column gives way to the path and the source; never under 12 columns.
  const room = options.width === undefined ? 48 : Math.max(12, Math.min(48, options.width - 1 - w0 - w2 - 4));
  const w1 = Math.min(room, Math.max(...rows.map((r) => r[1].length)));
  const cut = (v: string) =>
    options.width !== undefined && v.length > w1 ? `${v.slice(0, Math.max(1, w1 - 3))}...` : v;
  return rows.map(([p, v, s]) => `${p.padEnd(w0)}  ${cut(v).padEnd(w1)}  ${s}`).join("\n");
}

function sourceFor(sources: Readonly<Record<string, string>>, path: string): string {
  return sources[path] ?? "default";
}

function render(value: unknown, max = 60): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > max ? `${json.slice(0, max - 3)}...` : json;
}
