import { homedir } from "node:os";
import { formatPath, type PathSegment } from "./config-path.ts";
import { YoiError } from "./errors/yoi-error.ts";

/**
 * What kind of problem a config has:
 * - `syntax_error`: the file is not valid JSONC (line and column given);
 * - `unreadable`: the file exists but cannot be read (permissions, I/O);
 * - `not_a_file`: the path is a directory or another non-file;
 * - `empty_file`: the file holds no value at all;
 * - `duplicate_key`: a key appears twice in one object (JSON would keep the last silently);
 * - `unknown_key`: a key the schema does not have (typos are not dropped);
 * - `invalid_value`: a value of the wrong type, range or form;
 * - `missing_value`: a required field is absent;
 * - `ambiguous_file`: both `config.jsonc` and `config.json` exist in one directory.
 */
export type ConfigIssueCode =
  | "syntax_error"
  | "unreadable"
  | "not_a_file"
  | "empty_file"
  | "duplicate_key"
  | "unknown_key"
  | "invalid_value"
  | "missing_value"
  | "ambiguous_file"
  /** The file is larger than a config may be (CONFIG_MAX_BYTES). */
  | "too_large"
  /** Values nest deeper than a config may (CONFIG_MAX_DEPTH). */
  | "too_deep";

/** One problem in one source. */
export interface ConfigIssue {
  code: ConfigIssueCode;
  /** Where it is: an absolute file path, `env:YOI_X` for an environment variable, or `override`. */
  file: string;
  /** 1-based position in the file, when known. */
  line?: number;
  column?: number;
  /** Dotted field path (`worker.maxTurns`, `permissions.rules[0].action`); "" for the whole file. */
  path: string;
  /** What was there, rendered for a person (`"ten"`, `-1`, `an array`); secrets are never shown. */
  found?: string;
  /** What the field takes (`a positive integer`). */
  expected?: string;
  /** The whole line as printed: `<file>:<line>:<col>: <path>: expected ..., found ...`. */
  message: string;
}

/** Input for {@link makeIssue}; `message` is composed from the rest unless given. */
export interface IssueInput {
  code: ConfigIssueCode;
  file: string;
  line?: number;
  column?: number;
  path?: readonly PathSegment[];
  found?: string;
  expected?: string;
  /** Replaces the "expected X, found Y" part. */
  detail?: string;
}

/** Build a {@link ConfigIssue} with its printed message. */
export function makeIssue(input: IssueInput, home: string = homedir()): ConfigIssue {
  const path = formatPath(input.path ?? []);
  // A command-line flag is named as it was typed (`--model`, not `flag:--model`); so is a slash command (`/model`).
  const flag = input.file.startsWith("flag:") ? input.file.slice("flag:".length) : undefined;
  const typed = flag ?? (/^\/[a-z][a-z-]*$/.test(input.file) ? input.file : undefined);
  let where = flag ?? displaySource(input.file, home);
  if (input.line !== undefined) where += `:${input.line}:${input.column ?? 1}`;
  let detail = input.detail;
  if (detail === undefined) {
    if (input.code === "missing_value") detail = `missing; expected ${input.expected}`;
    else detail = `expected ${input.expected}, found ${input.found}`;
  }
  // The path of a flag or command that sets the field of its own name (`--model`, `/model`: `model`) would say it twice.
  const ownField = typed !== undefined && typed.replace(/^(--|\/)/, "") === path;
  const showPath = path !== "" && input.code !== "unknown_key" && input.code !== "duplicate_key" && !ownField;
  const message = `${where}: ${showPath ? `${path}: ` : ""}${detail}`;
  const issue: ConfigIssue = { code: input.code, file: input.file, path, message };
  if (input.line !== undefined) issue.line = input.line;
  if (input.column !== undefined) issue.column = input.column;
  if (input.found !== undefined) issue.found = input.found;
  if (input.expected !== undefined) issue.expected = input.expected;
  return issue;
}

/** A source as a person reads it: files under the home directory as `~/...`. */
export function displaySource(file: string, home: string = homedir()): string {
  if (home !== "" && home !== "/" && (file === home || file.startsWith(`${home}/`))) {
    return `~${file.slice(home.length)}`;
  }
  return file;
}

/**
 * The configuration could not be loaded. Carries every problem found in every
 * source (`issues`), so a user fixes them in one pass; the top-level fields
 * (`code` among them) describe the first one. Loading never falls back to
 * defaults after a bad file.
 */
export class ConfigError extends YoiError<ConfigIssueCode> {
  override readonly name = "ConfigError";
  static override readonly marker: symbol = Symbol.for("yoi.error.ConfigError");
  /** Source of the first problem (absolute path, `env:YOI_X` or `override`). */
  readonly file: string;
  /** Field path of the first problem ("" for the whole file). */
  readonly path: string;
  readonly found: string | undefined;
  readonly expected: string | undefined;
  /** Every problem, in source order (user file, project file, env, overrides). */
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]) {
    const first = issues[0];
    if (!first) throw new TypeError("ConfigError needs at least one issue");
    const message =
      issues.length === 1
        ? first.message
        : `${issues.length} problems in the yoi configuration:\n${issues.map((i) => `  ${i.message}`).join("\n")}`;
    super(first.code, message);
    this.file = first.file;
    this.path = first.path;
    this.found = first.found;
    this.expected = first.expected;
    this.issues = issues;
  }
}

/**
 * A value rendered for an error message: strings quoted (long ones cut),
 * numbers and booleans as written, containers by kind. `secret` hides strings.
 */
export function describeFound(value: unknown, secret = false): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return value.length === 0 ? "an empty array" : "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") {
    if (secret) return `a string of ${value.length} characters (not shown)`;
    if (value === "") return 'an empty string ""';
    const cut = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return JSON.stringify(cut);
  }
  return String(value);
}
