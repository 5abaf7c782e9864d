import { isAbsolute, join, resolve } from "node:path";

/** A field path as segments: object keys and array indexes. */
export type PathSegment = string | number;

const IDENTIFIER = /^[A-Za-z_$][\w$-]*$/;

/**
 * Render a field path the way a person reads it: `worker.maxTurns`,
 * `permissions.rules[0].action`, and keys that are not plain names in
 * brackets, `models["gpt-4.1"].contextWindow`. The empty path is "".
 */
export function formatPath(path: readonly PathSegment[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (IDENTIFIER.test(seg)) out += out === "" ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** True when `path` is `prefix` or lies below it (both formatted with {@link formatPath}). */
export function isAtOrBelow(path: string, prefix: string): boolean {
  if (prefix === "") return true;
  return path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`);
}

/** The value at a path inside plain JSON data, or `undefined`. */
export function valueAt(data: unknown, path: readonly PathSegment[]): unknown {
  let cur: unknown = data;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    if (!Object.hasOwn(cur, seg)) return undefined;
    cur = (cur as Record<PathSegment, unknown>)[seg];
  }
  return cur;
}

/** A plain object (JSON object), not an array or null. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A path a person wrote, made absolute: `~` is the home directory, a relative path is relative to `cwd`. */
export function resolveUserPath(p: string, cwd: string, home: string): string {
  if (p === "~") return home;
  if (p.startsWith("~/")) return join(home, p.slice(2));
  return isAbsolute(p) ? p : resolve(cwd, p);
}

/**
 * Makes the paths of `scope` and `session` absolute, in place (see
 * {@link resolveUserPath}).
 */
export function resolveConfigPaths(config: Record<string, unknown>, cwd: string, home: string): void {
  const fix = (p: string) => resolveUserPath(p, cwd, home);
  const scope = config.scope as { root?: string; readRoots?: string[]; writeRoots?: string[] } | undefined;
  if (scope) {
    if (typeof scope.root === "string") scope.root = fix(scope.root);
    if (Array.isArray(scope.readRoots)) scope.readRoots = scope.readRoots.map(fix);
    if (Array.isArray(scope.writeRoots)) scope.writeRoots = scope.writeRoots.map(fix);
  }
  const session = config.session as { dir?: string } | undefined;
  if (session && typeof session.dir === "string") session.dir = fix(session.dir);
}
