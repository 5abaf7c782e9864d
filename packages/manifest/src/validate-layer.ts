import type * as z from "zod";
import { type ConfigIssue, describeFound, makeIssue } from "./config-error.ts";
import { formatPath, type PathSegment, valueAt } from "./config-path.ts";
import { ConfigLayerSchema } from "./config-schema.ts";
import { closest } from "./errors/closest.ts";
import type { JsoncDocument } from "./jsonc-document.ts";
import { knownKeysAt } from "./schema-walk.ts";

/** Where a layer's values came from, for messages. */
export interface LayerOrigin {
  /** The source of the value at a path: a file, `env:YOI_X` or `override`. */
  fileFor(path: readonly PathSegment[]): string;
  /** Positions in the file, when the layer is a file. */
  locate?: JsoncDocument["locate"];
  home: string;
}

/** Validate one source's config (an object) against the layer schema, and turn zod's issues into ConfigIssues. */
export function validateLayer(raw: Readonly<Record<string, unknown>>, origin: LayerOrigin): ConfigIssue[] {
  if (Object.keys(raw).length === 0) return []; // sets nothing, so nothing can be wrong
  const result = ConfigLayerSchema.safeParse(raw);
  return result.success ? [] : zodIssuesToConfigIssues(result.error.issues, raw, origin);
}

/** Convert zod issues (whose messages are "expected" phrases, see config-schema.ts) to ConfigIssues. */
export function zodIssuesToConfigIssues(
  issues: readonly z.core.$ZodIssue[],
  raw: unknown,
  origin: LayerOrigin,
): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    const path = issue.path.filter((s): s is PathSegment => typeof s !== "symbol");
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) out.push(unknownKey(path, key, origin));
      continue;
    }
    if (issue.code === "invalid_key") {
      const key = path[path.length - 1];
      out.push(
        makeIssue(
          {
            code: "invalid_value",
            file: origin.fileFor(path),
            ...origin.locate?.(path, "key"),
            path: path.slice(0, -1),
            detail: `key ${JSON.stringify(String(key))}: expected ${keyExpectation(issue)}`,
          },
          origin.home,
        ),
      );
      continue;
    }
    const value = valueAt(raw, path);
    out.push(
      makeIssue(
        {
          code: value === undefined ? "missing_value" : "invalid_value",
          file: origin.fileFor(path),
          ...origin.locate?.(path, "value"),
          path,
          expected: issue.message,
          found: describeFound(value, isSecretPath(path)),
        },
        origin.home,
      ),
    );
  }
  return out;
}

function keyExpectation(issue: z.core.$ZodIssueInvalidKey): string {
  const inner = issue.issues[0];
  return inner?.message ?? "a valid key";
}

/**
 * Header values (Authorization) and a mistyped `apiKeyEnv` (a key pasted where
 * a variable name belongs) may hold a secret: never echo them.
 */
export function isSecretPath(path: readonly PathSegment[]): boolean {
  return path.some((s) => s === "headers" || s === "apiKeyEnv");
}

function unknownKey(objectPath: PathSegment[], key: string, origin: LayerOrigin): ConfigIssue {
  const path = [...objectPath, key];
  const where = objectPath.length === 0 ? "at top level" : `in ${formatPath(objectPath)}`;
  let detail = `unknown key ${JSON.stringify(key)} ${where}`;
  const known = knownKeysAt(ConfigLayerSchema, objectPath);
  if (objectPath[0] === "providers" && /^api[-_]?key$/i.test(key)) {
    detail += ` — API keys do not belong in config files: put the key in an environment variable and name that variable with "apiKeyEnv"`;
  } else {
    const suggestion = closest(key, known);
    if (suggestion) detail += ` — did you mean ${JSON.stringify(suggestion)}?`;
    else if (known.length > 0) detail += ` (known keys: ${known.filter((k) => k !== "$schema").join(", ")})`;
  }
  return makeIssue(
    { code: "unknown_key", file: origin.fileFor(path), ...origin.locate?.(path, "key"), path, detail },
    origin.home,
  );
}
