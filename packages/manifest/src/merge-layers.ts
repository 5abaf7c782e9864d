import { formatPath, isAtOrBelow, isPlainObject, type PathSegment } from "./config-path.ts";

/**
 * Arrays that accumulate across layers instead of replacing: a later source
 * adds permission rules, it never drops an earlier source's (a project file
 * must not be able to empty the user's deny list). Their elements get a
 * source each (`permissions.rules[2]`).
 */
export const ACCUMULATING_ARRAYS: ReadonlySet<string> = new Set(["permissions.rules"]);

/**
 * Merge `layer` into `target` in place: objects merge key by key, arrays in
 * {@link ACCUMULATING_ARRAYS} are appended to, anything else (other arrays
 * included) replaces. `sources` records, for every leaf path the layer sets,
 * that it came from `source`, and forgets the sources of whatever the layer
 * replaced.
 */
export function mergeLayer(
  target: Record<string, unknown>,
  layer: Record<string, unknown>,
  source: string | ((path: string) => string),
  sources: Map<string, string>,
  base: readonly PathSegment[] = [],
): void {
  const sourceFor = typeof source === "string" ? () => source : source;
  for (const [key, value] of Object.entries(layer)) {
    if (value === undefined) continue;
    const path = [...base, key];
    const current = target[key];
    if (isPlainObject(value) && (isPlainObject(current) || current === undefined)) {
      // An empty object that was a leaf until now stops being one once it gets keys.
      if (Object.keys(value).length > 0) sources.delete(formatPath(path));
      const into: Record<string, unknown> = isPlainObject(current) ? current : {};
      target[key] = into;
      mergeLayer(into, value, source, sources, path);
      continue;
    }
    const at = formatPath(path);
    if (
      ACCUMULATING_ARRAYS.has(at) &&
      Array.isArray(value) &&
      (Array.isArray(current) || current === undefined)
    ) {
      if (value.length > 0) sources.delete(at);
      const into: unknown[] = Array.isArray(current) ? current : [];
      target[key] = into;
      for (const element of value) {
        const index = into.length;
        into.push(structuredClone(element));
        const elementPath = [...path, index];
        sources.set(formatPath(elementPath), sourceFor(formatPath(elementPath)));
      }
      continue;
    }
    for (const p of [...sources.keys()]) if (isAtOrBelow(p, at)) sources.delete(p);
    target[key] = structuredClone(value);
    recordLeaves(value, path, sourceFor, sources);
  }
}

/**
 * Record `source` for every leaf under `path`: scalars, arrays, and empty
 * objects; a leaf `skip` says yes to is left as it is.
 */
export function recordLeaves(
  value: unknown,
  path: readonly PathSegment[],
  sourceFor: (path: string) => string,
  sources: Map<string, string>,
  skip?: (path: string) => boolean,
): void {
  if (isPlainObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) recordLeaves(v, [...path, k], sourceFor, sources, skip);
    return;
  }
  const at = formatPath(path);
  if (skip?.(at)) return;
  sources.set(at, sourceFor(at));
}
