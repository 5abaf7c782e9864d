import { lstatSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { CONFIG_DEFAULTS } from "./config-defaults.generated.ts";
import { ConfigError, type ConfigIssue, makeIssue } from "./config-error.ts";
import { formatPath, isAtOrBelow, isPlainObject, type PathSegment } from "./config-path.ts";
import { type Config, type ConfigInput, parseMergedConfig } from "./config-schema.ts";
import { CONFIG_DIR_NAME, CONFIG_FILE_NAME } from "./defaults.ts";
import { readEnvLayer } from "./env-layer.ts";
import { type JsoncDocument, parseJsoncDocument } from "./jsonc-document.ts";
import { mergeLayer, recordLeaves } from "./merge-layers.ts";
import { type LayerOrigin, validateLayer, zodIssuesToConfigIssues } from "./validate-layer.ts";

/** Where to look and what to lay on top. Every field has a default; tests inject them all. */
export interface LoadConfigOptions {
  /** Project directory; its `.yoi/config.jsonc` is the project file. Default: `process.cwd()`. */
  cwd?: string;
  /** Home directory; its `.yoi/config.jsonc` is the user file. Default: `os.homedir()`. */
  homeDir?: string;
  /** Environment to read `YOI_*` variables from. Default: `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Highest-precedence values, e.g. from command-line flags (`--model`). Validated like a file. */
  overrides?: ConfigInput;
  /**
   * The config files as {@link readConfigFiles} read them, for a caller that
   * loads several times over the same directories (with other overrides):
   * each load then reads nothing again. Their `cwd` and `homeDir` are used;
   * giving other `cwd` or `homeDir` as well is a TypeError.
   */
  files?: ConfigFiles;
}

/**
 * The user and project config files of a home and project directory, read
 * once (see {@link LoadConfigOptions.files}). Opaque: what a file holds is
 * checked by `loadConfig`, which also reports what could not be read.
 */
export interface ConfigFiles {
  readonly homeDir: string;
  readonly cwd: string;
  /** The config files found, lowest precedence first (whether or not they parse). */
  readonly found: readonly string[];
  /** @internal Each directory's file, in precedence order, with the problems of reading it. */
  readonly read: readonly { file?: { path: string; text: string }; issues: readonly ConfigIssue[] }[];
}

/**
 * Reads the user file `~/.yoi/config.jsonc` and the project file
 * `<cwd>/.yoi/config.jsonc` (or their `config.json`): the paths are probed
 * synchronously (see `probe`), the files that are there read at once.
 * Never throws for a file: what cannot be read is reported by the
 * `loadConfig` that is given the result.
 */
export async function readConfigFiles(
  options: Pick<LoadConfigOptions, "cwd" | "homeDir"> = {},
): Promise<ConfigFiles> {
  const homeDir = resolve(options.homeDir ?? homedir());
  const cwd = resolve(options.cwd ?? process.cwd());
  const dirs = [join(homeDir, CONFIG_DIR_NAME)];
  if (cwd !== homeDir) dirs.push(join(cwd, CONFIG_DIR_NAME));
  const read = await Promise.all(
    dirs.map(async (dir) => {
      const issues: ConfigIssue[] = [];
      const file = await readConfigFile(dir, homeDir, issues);
      return { ...(file ? { file } : {}), issues };
    }),
  );
  return { homeDir, cwd, found: read.flatMap((r) => (r.file ? [r.file.path] : [])), read };
}

/** The effective configuration and where each value came from. */
export interface LoadedConfig {
  config: Config;
  /**
   * Dotted leaf path (`worker.maxTurns`, `permissions.rules`) -> its source:
   * `default`, the absolute path of a config file, `env:YOI_X`, or `override`.
   * Arrays are leaves (they replace as a whole).
   */
  sources: Readonly<Record<string, string>>;
  /** Config files that were read, lowest precedence first. */
  files: readonly string[];
}

/** Source name of values that come from the schema's defaults. */
export const DEFAULT_SOURCE = "default";
/** Source name of values from {@link LoadConfigOptions.overrides}. */
export const OVERRIDE_SOURCE = "override";

/**
 * Load the configuration. Precedence, lowest first:
 * defaults < user file `~/.yoi/config.jsonc` < project file `<cwd>/.yoi/config.jsonc`
 * < `YOI_*` environment variables < `overrides`.
 * Objects merge key by key; arrays and scalars replace. A missing file is
 * skipped; a file that cannot be read or parsed, or holds a wrong value or an
 * unknown key, is an error: every problem of every source is collected into
 * one {@link ConfigError}, never replaced by defaults. `config.json` is read
 * when `config.jsonc` is absent. Paths in `scope` and `session` are made
 * absolute: `~` is the home directory, relative paths are relative to `cwd`.
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<LoadedConfig> {
  if (options.files && (options.cwd !== undefined || options.homeDir !== undefined)) {
    const { cwd, homeDir } = options.files;
    if (resolve(options.cwd ?? cwd) !== cwd || resolve(options.homeDir ?? homeDir) !== homeDir)
      throw new TypeError(
        `loadConfig: files were read for cwd ${cwd} and home ${homeDir}; pass those or leave cwd and homeDir out`,
      );
  }
  const read = options.files ?? (await readConfigFiles(options));
  const home = read.homeDir;
  const cwd = read.cwd;
  const env = options.env ?? process.env;
  const issues: ConfigIssue[] = [];
  const layers: { value: Record<string, unknown>; source: string | ((path: string) => string) }[] = [];
  const documents = new Map<string, JsoncDocument>();
  const files: string[] = [];

  for (const { file, issues: readIssues } of read.read) {
    issues.push(...readIssues);
    if (!file) continue;
    files.push(file.path);
    const doc = parseJsoncDocument(file.text);
    documents.set(file.path, doc);
    if (doc.problems.length > 0) {
      for (const p of doc.problems) {
        issues.push(
          makeIssue(
            { code: p.kind, file: file.path, line: p.line, column: p.column, detail: p.detail },
            home,
          ),
        );
      }
      continue;
    }
    if (!isPlainObject(doc.value)) {
      issues.push(
        makeIssue(
          {
            code: "invalid_value",
            file: file.path,
            ...doc.locate([]),
            detail: `expected an object at top level, found ${kindOf(doc.value)}`,
          },
          home,
        ),
      );
      continue;
    }
    const origin: LayerOrigin = { fileFor: () => file.path, locate: doc.locate, home };
    // In file order, so the list reads top to bottom like the file.
    const layerIssues = validateLayer(doc.value, origin).sort(
      (a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0),
    );
    issues.push(...layerIssues);
    if (layerIssues.length === 0) layers.push({ value: doc.value, source: file.path });
  }

  const envLayer = readEnvLayer(env, home);
  const envProblems = [...envLayer.issues];
  const envSource = (path: string) => {
    let best: string | undefined;
    for (const p of envLayer.origins.keys())
      if (isAtOrBelow(path, p) && (best === undefined || p.length >= best.length)) best = p;
    // A problem reported above the variables' own paths (a union such as `sandbox` reports at
    // itself): the variable that set something below it.
    best ??= [...envLayer.origins.keys()].sort().find((p) => isAtOrBelow(p, path));
    return `env:${(best !== undefined && envLayer.origins.get(best)) || "YOI_?"}`;
  };
  const envIssues = validateLayer(envLayer.value, { fileFor: (p) => envSource(formatPath(p)), home });
  // By variable name, so the list does not depend on the order zod found them in.
  issues.push(
    ...[...envProblems, ...envIssues].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0)),
  );
  if (envIssues.length === 0 && envProblems.length === 0)
    layers.push({ value: envLayer.value, source: envSource });

  if (options.overrides !== undefined) {
    const raw: unknown = options.overrides;
    const overrideIssues = isPlainObject(raw)
      ? validateLayer(raw, { fileFor: () => OVERRIDE_SOURCE, home })
      : [
          makeIssue(
            {
              code: "invalid_value",
              file: OVERRIDE_SOURCE,
              detail: `expected an object, found ${kindOf(raw)}`,
            },
            home,
          ),
        ];
    issues.push(...overrideIssues);
    if (overrideIssues.length === 0)
      layers.push({ value: raw as Record<string, unknown>, source: OVERRIDE_SOURCE });
  }
  if (issues.length > 0) throw new ConfigError(issues);

  const merged = structuredClone(CONFIG_DEFAULTS) as Record<string, unknown>;
  const sources = new Map<string, string>();
  recordLeaves(merged, [], () => DEFAULT_SOURCE, sources);
  // The sections some source sets: only these are parsed again (the rest hold their defaults).
  const changed = new Set<string>();
  for (const layer of layers) {
    const { $schema: _editorOnly, ...value } = layer.value;
    mergeLayer(merged, value, layer.source, sources);
    for (const key of Object.keys(value)) changed.add(key);
  }
  resolvePaths(merged, cwd, home);

  const result = parseMergedConfig(merged, changed);
  if (!result.success) {
    const fileFor = (p: readonly PathSegment[]) => sourceOf(sources, p);
    const located = zodIssuesToConfigIssues(result.issues, merged, {
      fileFor,
      locate: (p, at) => documents.get(fileFor(p))?.locate(p, at),
      home,
    });
    throw new ConfigError(located);
  }
  return { config: result.data, sources: Object.fromEntries(sources), files };
}

/**
 * The source of a path: its own, else the source of a value set below its
 * nearest ancestor (a missing `models.x.contextWindow` belongs to whichever
 * file declared `models.x`).
 */
function sourceOf(sources: Map<string, string>, path: readonly PathSegment[]): string {
  for (let n = path.length; n > 0; n--) {
    const prefix = formatPath(path.slice(0, n));
    const own = sources.get(prefix);
    if (own) return own;
    for (const [p, s] of sources) if (isAtOrBelow(p, prefix)) return s;
  }
  return DEFAULT_SOURCE;
}

async function readConfigFile(
  dir: string,
  home: string,
  issues: ConfigIssue[],
): Promise<{ path: string; text: string } | undefined> {
  const jsoncPath = join(dir, CONFIG_FILE_NAME);
  const jsonPath = join(dir, "config.json");
  const jsonc = probe(jsoncPath);
  // config.json is only a fallback: look at it when config.jsonc is certainly absent, or to report both.
  const json = jsonc.state === "error" ? ({ state: "missing" } as const) : probe(jsonPath);
  if (jsonc.state === "present" && json.state !== "missing") {
    issues.push(
      makeIssue(
        {
          code: "ambiguous_file",
          file: jsoncPath,
          detail: `both ${CONFIG_FILE_NAME} and config.json exist in this directory; expected one (merge them into ${CONFIG_FILE_NAME})`,
        },
        home,
      ),
    );
    return undefined;
  }
  const [path, found] = jsonc.state !== "missing" ? [jsoncPath, jsonc] : [jsonPath, json];
  if (found.state === "missing") return undefined;
  if (found.state === "present" && !found.isFile) {
    const what = found.isDirectory ? "a directory" : "not a regular file";
    issues.push(
      makeIssue({ code: "not_a_file", file: path, detail: `is ${what}; expected a JSONC config file` }, home),
    );
    return undefined;
  }
  try {
    if (found.state === "error") throw found.error;
    return { path, text: await readFile(path, "utf8") };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason =
      code === "EACCES" || code === "EPERM"
        ? `permission denied (${code}); expected a file yoi can read — check its permissions`
        : code === "EISDIR"
          ? "is a directory; expected a JSONC config file"
          : code === "ENOENT"
            ? "is a symbolic link to a file that does not exist; expected a readable file"
            : `cannot be read (${code ?? (err as Error).message}); expected a readable file`;
    issues.push(
      makeIssue({ code: code === "EISDIR" ? "not_a_file" : "unreadable", file: path, detail: reason }, home),
    );
    return undefined;
  }
}

type Probe =
  | { state: "missing" }
  | { state: "present"; isFile: boolean; isDirectory: boolean }
  | { state: "error"; error: unknown };

/**
 * What is at `path`. Synchronous, and without an exception for a missing
 * file: every session start probes four paths that are usually missing, and
 * an asynchronous probe that finds nothing costs some 50-100 µs of CPU (an
 * Error with a stack); these cost microseconds. The file itself is read
 * asynchronously.
 */
function probe(path: string): Probe {
  try {
    const info = statSync(path, { throwIfNoEntry: false });
    if (info) return { state: "present", isFile: info.isFile(), isDirectory: info.isDirectory() };
    // A missing file simply means "no file here"...
    // ...unless it is a symlink to nothing: a config the user meant to have.
    if (!lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) return { state: "missing" };
    statSync(path); // throws the ENOENT that names it
    return { state: "missing" };
  } catch (error) {
    // A parent that is not a directory: no file here either.
    if ((error as NodeJS.ErrnoException).code === "ENOTDIR") return { state: "missing" };
    // EACCES on the directory, a symlink loop, a dangling symlink: reported as unreadable, never skipped.
    return { state: "error", error };
  }
}

function resolvePaths(config: Record<string, unknown>, cwd: string, home: string): void {
  const fix = (p: string) => {
    if (p === "~") return home;
    if (p.startsWith("~/")) return join(home, p.slice(2));
    return isAbsolute(p) ? p : resolve(cwd, p);
  };
  const scope = config.scope as { root?: string; readRoots?: string[]; writeRoots?: string[] } | undefined;
  if (scope) {
    if (typeof scope.root === "string") scope.root = fix(scope.root);
    if (Array.isArray(scope.readRoots)) scope.readRoots = scope.readRoots.map(fix);
    if (Array.isArray(scope.writeRoots)) scope.writeRoots = scope.writeRoots.map(fix);
  }
  const session = config.session as { dir?: string } | undefined;
  if (session && typeof session.dir === "string") session.dir = fix(session.dir);
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return "a string";
  return `a ${typeof value}`;
}
