/**
 * A repository's `.yoi/config.jsonc` is written by whoever wrote the
 * repository. The settings there that widen what yoi may do apply only
 * when the caller trusts the project (`loadConfig({ trust })`):
 * - permission rules that allow, per-tool defaults that allow, a start in
 *   `acceptEdits` or `bypassPermissions` mode;
 * - the bash sandbox turned off or its network on;
 * - `providers` (a base URL would receive your API key), `scope` roots, the
 *   `session` directory, `mcpServers`, `hooks`, `statusLine` and
 *   `lsp.servers` (all run commands).
 * Everything else of the project file applies always, and so do its rules
 * and defaults that deny or ask: they only take power away.
 */
import { createHash } from "node:crypto";
import { formatPath, isPlainObject, type PathSegment, resolveConfigPaths } from "./config-path.ts";
import type { PERMISSION_MODES } from "./permissions-schema.ts";

/** What a project's own config files set that widens yoi's reach. */
export interface ProjectSettings {
  /** The project config file (`.yoi/config.jsonc`, else `.mcp.json`). */
  file: string;
  /** Every project file that sets some, lowest precedence first (`.mcp.json`, `.yoi/config.jsonc`). */
  files: string[];
  /** The project directory (the load's `cwd`): trust is given to it. */
  root: string;
  /** SHA-256 of `lines`: trust is given to this content, so a change asks again. */
  hash: string;
  /** One line per setting, for a person deciding (`providers.corp.baseURL = "http://..."`). */
  lines: string[];
}

/**
 * Whether a project's sensitive settings ({@link ProjectSettings}) apply:
 * `true` (they do), `false` (they are left out before the sources are
 * merged), or a function asked with them when the project file sets any,
 * which answers (interactively, from a remembered answer, ...).
 */
export type ProjectTrust = boolean | ((settings: ProjectSettings) => boolean | Promise<boolean>);

/** Sections that widen reach whatever they hold: every value the project sets there is listed. */
const SENSITIVE_SECTIONS = ["providers", "scope", "session", "mcpServers", "hooks", "statusLine"] as const;

/** Modes a project may start a session in without trust: neither lets more run than the default. */
const SAFE_MODES: ReadonlySet<string> = new Set<(typeof PERMISSION_MODES)[number]>(["default", "plan"]);

const STRICTNESS: Readonly<Record<string, number>> = { allow: 0, ask: 1, deny: 2 };

interface Rule {
  tool: string;
  match?: string;
  action: string;
}

/**
 * The sensitive settings a (valid) project layer sets, or undefined when it
 * sets none. Paths in `scope` and `session` are shown resolved against
 * `root` and `home`; header values and MCP servers' environments are not shown.
 */
export function projectSettings(
  layer: Readonly<Record<string, unknown>>,
  file: string,
  root: string,
  home: string,
): ProjectSettings | undefined {
  const shown = structuredClone(layer) as Record<string, unknown>;
  resolveConfigPaths(shown, root, home);
  const lines: string[] = [];
  for (const section of SENSITIVE_SECTIONS) {
    if (shown[section] === undefined) continue;
    forEachLeaf(shown[section], [section], (path, value) => {
      const hidden = path.includes("headers")
        ? "<headers>"
        : path[0] === "mcpServers" && path[2] === "env"
          ? "<env>"
          : undefined;
      lines.push(`${formatPath(path)} = ${hidden ?? JSON.stringify(value)}`);
    });
  }
  const lsp = isPlainObject(shown.lsp) ? shown.lsp : {};
  if (lsp.servers !== undefined)
    forEachLeaf(lsp.servers, ["lsp", "servers"], (path, value) =>
      lines.push(`${formatPath(path)} = ${path[3] === "env" ? "<env>" : JSON.stringify(value)}`),
    );
  const permissions = isPlainObject(layer.permissions) ? layer.permissions : {};
  for (const rule of (permissions.rules ?? []) as Rule[])
    if (rule.action === "allow")
      lines.push(`permissions: allow ${rule.tool}${rule.match ? ` "${rule.match}"` : ""}`);
  if (typeof permissions.mode === "string" && !SAFE_MODES.has(permissions.mode))
    lines.push(`permissions: start in ${permissions.mode} mode`);
  const sandbox = loosenedSandbox(layer.sandbox);
  if (sandbox !== undefined) lines.push(sandbox);
  for (const [tool, action] of Object.entries((permissions.default ?? {}) as Record<string, string>))
    if (action === "allow") lines.push(`permissions: ${tool} allowed by default`);
  if (lines.length === 0) return undefined;
  return { file, files: [file], root, hash: hashLines(lines), lines };
}

/** Trust is given to this content: a change of any line asks again. */
function hashLines(lines: readonly string[]): string {
  return createHash("sha256").update(lines.join("\n")).digest("hex");
}

/**
 * The settings of several project files as one question (lowest precedence
 * first): trust is given to the project, so to all of them at once. The
 * last file is the one named as the project's.
 */
export function mergeProjectSettings(list: readonly ProjectSettings[]): ProjectSettings | undefined {
  const [first] = list;
  if (list.length <= 1) return first;
  const lines = list.flatMap((s) => s.lines);
  return {
    file: list.at(-1)?.file ?? "",
    files: list.flatMap((s) => s.files),
    root: first?.root ?? "",
    hash: hashLines(lines),
    lines,
  };
}

/**
 * A project layer without its sensitive settings: what it sets that only
 * tightens stays (rules that deny or ask; a per-tool default stricter than
 * what `below`, the lower sources merged, says; a sandbox that is not loosened).
 */
export function withoutSensitiveSettings(
  layer: Readonly<Record<string, unknown>>,
  below: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(layer)) {
    if ((SENSITIVE_SECTIONS as readonly string[]).includes(key)) continue;
    if (key === "sandbox" && loosenedSandbox(value) !== undefined) continue;
    kept[key] = structuredClone(value);
  }
  // Language servers are commands yoi runs; the rest of the lsp section (budget, severity) only shapes output.
  if (isPlainObject(kept.lsp)) delete kept.lsp.servers;
  if (isPlainObject(kept.permissions)) {
    const permissions = kept.permissions;
    if (Array.isArray(permissions.rules))
      permissions.rules = (permissions.rules as Rule[]).filter((rule) => rule.action !== "allow");
    if (typeof permissions.mode === "string" && !SAFE_MODES.has(permissions.mode)) delete permissions.mode;
    if (isPlainObject(permissions.default)) {
      const lower = isPlainObject(below.permissions) ? below.permissions.default : undefined;
      const current = (isPlainObject(lower) ? lower : {}) as Record<string, string>;
      permissions.default = Object.fromEntries(
        Object.entries(permissions.default as Record<string, string>).filter(
          ([tool, action]) =>
            action !== "allow" &&
            (current[tool] === undefined || (STRICTNESS[action] ?? 0) > (STRICTNESS[current[tool]] ?? 0)),
        ),
      );
    }
  }
  return kept;
}

/** The line for a sandbox setting that loosens it (off, or network on), else undefined. */
function loosenedSandbox(value: unknown): string | undefined {
  if (value === false) return "sandbox: off (bash runs unconfined)";
  if (!isPlainObject(value)) return undefined;
  if (value.enabled === false) return "sandbox: off (bash runs unconfined)";
  if (value.network === true) return "sandbox: network allowed";
  return undefined;
}

/** Calls `visit` for every leaf below `path`: scalars, arrays and empty objects, in order. */
function forEachLeaf(
  value: unknown,
  path: PathSegment[],
  visit: (path: PathSegment[], value: unknown) => void,
): void {
  if (isPlainObject(value) && Object.keys(value).length > 0) {
    for (const [key, child] of Object.entries(value)) forEachLeaf(child, [...path, key], visit);
    return;
  }
  visit(path, value);
}
