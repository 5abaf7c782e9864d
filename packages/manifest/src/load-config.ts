import { lstatSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { ConfigError, type ConfigIssue, makeIssue } from "./config-error.ts";
import {
  formatPath,
  isAtOrBelow,
  isPlainObject,
  type PathSegment,
  resolveConfigPaths,
} from "./config-path.ts";
import { type Config, type ConfigInput, ConfigSchema } from "./config-schema.ts";
import { CONFIG_DIR_NAME, CONFIG_FILE_NAME } from "./defaults.ts";
import { readEnvLayer } from "./env-layer.ts";
import { type JsoncDocument, parseJsoncDocument } from "./jsonc-document.ts";
import { mergeLayer, recordLeaves } from "./merge-layers.ts";
import {
  mergeProjectSettings,
  type ProjectSettings,
  type ProjectTrust,
  projectSettings,
  withoutSensitiveSettings,
} from "./project-trust.ts";
import { type LayerOrigin, validateLayer, zodIssuesToConfigIssues } from "./validate-layer.ts";

/** Where to look and what to lay on top. Every field has a default; tests inject them all. */
export interface LoadConfigOptions {
  /** Project directory; its `.yoi/config.jsonc` is the project file. Default: `process.cwd()`. */
  cwd?: string;
  /** Home directory; its `.yoi/config.jsonc` is the user file. Default: `os.homedir()`. */
  homeDir?: string;
  /**
   * Environment to read `YOI_*` variables and the built-in providers'
   * base-URL variables (`OPENAI_BASE_URL`, ...) from. Default: `process.env`.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Highest-precedence values, e.g. from command-line flags. Validated like a file. */
  overrides?: ConfigInput;
  /**
   * Whether the project file's settings that widen yoi's reach apply (see
   * {@link ProjectTrust}). When they do not, they are left out before the
   * sources are merged, and {@link LoadedConfig.ignored} lists them. A
   * function is asked only when the project file sets some, after every
   * source has been checked. Default `true`: everything applies.
   */
  trust?: ProjectTrust;
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
  /** The project file's settings that were left out: the project is not trusted (see `trust`). */
  ignored?: ProjectSettings;
}

/** Source name of values that come from the schema's defaults. */
export const DEFAULT_SOURCE = "default";
/** Source name of values from {@link LoadConfigOptions.overrides}. */
export const OVERRIDE_SOURCE = "override";

/** One source, checked, to be merged. */
interface Layer {
  value: Record<string, unknown>;
  source: string | ((path: string) => string);
  /** The project file: its sensitive settings depend on trust. */
  project?: boolean;
}

/**
 * Load the configuration. Precedence, lowest first:
 * defaults < user file `~/.yoi/config.jsonc` < project file `<cwd>/.yoi/config.jsonc`
 * < environment variables (`YOI_*`, and the built-in providers' base URLs)
 * < `overrides`.
 * Objects merge key by key; arrays and scalars replace. A missing file is
 * skipped; a file that cannot be read or parsed, or holds a wrong value or an
 * unknown key, is an error: every problem of every source is collected into
 * one {@link ConfigError}, never replaced by defaults. `config.json` is read
 * when `config.jsonc` is absent. Paths in `scope` and `session` are made
 * absolute: `~` is the home directory, relative paths are relative to `cwd`.
 * The project file's settings that widen yoi's reach apply as `trust` says.
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<LoadedConfig> {
  const home = resolve(options.homeDir ?? homedir());
  const cwd = resolve(options.cwd ?? process.cwd());
  const env = options.env ?? process.env;
  const issues: ConfigIssue[] = [];
  const layers: Layer[] = [];
  const documents = new Map<string, JsoncDocument>();
  const files: string[] = [];

  const dirs = [join(home, CONFIG_DIR_NAME)];
  if (cwd !== home) dirs.push(join(cwd, CONFIG_DIR_NAME));
  // Both files are read at once.
  const read = await Promise.all(
    dirs.map(async (dir) => {
      const readIssues: ConfigIssue[] = [];
      return { file: await readConfigFile(dir, home, readIssues), issues: readIssues };
    }),
  );
  for (const { file, issues: readIssues } of read) {
    issues.push(...readIssues);
    if (!file) continue;
    files.push(file.path);
    const doc = parseJsoncDocument(file.text);
    documents.set(file.path, doc);
    const shapeIssues = documentIssues(doc, file.path, home);
    if (shapeIssues.length > 0) {
      issues.push(...shapeIssues);
      continue;
    }
    if (!isPlainObject(doc.value)) continue;
    const origin: LayerOrigin = { fileFor: () => file.path, locate: doc.locate, home };
    // In file order, so the list reads top to bottom like the file.
    const layerIssues = validateLayer(doc.value, origin).sort(
      (a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0),
    );
    issues.push(...layerIssues);
    const project = cwd !== home && dirname(dirname(file.path)) === cwd;
    if (layerIssues.length === 0) layers.push({ value: doc.value, source: file.path, project });
  }
  if (cwd !== home) {
    // Claude Code's project file of MCP servers: read as a project file under .yoi/config.jsonc.
    const mcp = await readMcpJson(join(cwd, MCP_JSON_NAME), home, issues);
    if (mcp !== undefined) {
      documents.set(mcp.path, mcp.doc);
      const at = layers.findIndex((layer) => layer.project);
      const layer: Layer = { value: mcp.value, source: mcp.path, project: true };
      if (at < 0) {
        layers.push(layer);
        files.push(mcp.path);
      } else {
        layers.splice(at, 0, layer);
        files.splice(files.indexOf(layers[at + 1]?.source as string), 0, mcp.path);
      }
    }
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

  // Asked only once every source is known to be valid, and only about what the project sets.
  const trust = options.trust ?? true;
  let ignored: ProjectSettings | undefined;
  if (trust !== true) {
    const settings = mergeProjectSettings(
      layers.flatMap((layer) =>
        layer.project ? (projectSettings(layer.value, layer.source as string, cwd, home) ?? []) : [],
      ),
    );
    if (settings !== undefined && (trust === false || !(await trust(settings)))) ignored = settings;
  }

  // The sources merged as they are; the one parse below fills in every default.
  const merged: Record<string, unknown> = {};
  const sources = new Map<string, string>();
  for (const layer of layers) {
    const { $schema: _editorOnly, ...value } =
      layer.project && ignored ? withoutSensitiveSettings(layer.value, merged) : layer.value;
    mergeLayer(merged, value, layer.source, sources);
  }
  resolveConfigPaths(merged, cwd, home);

  const result = ConfigSchema.safeParse(merged);
  if (result.success) {
    // Every leaf no source set (nor anything below it) holds its default.
    const set = [...sources.keys()];
    recordLeaves(
      result.data,
      [],
      () => DEFAULT_SOURCE,
      sources,
      (leaf) => set.some((path) => isAtOrBelow(path, leaf)),
    );
  } else {
    const fileFor = (p: readonly PathSegment[]) => sourceOf(sources, p);
    const located = zodIssuesToConfigIssues(result.error.issues, merged, {
      fileFor,
      locate: (p, at) => documents.get(fileFor(p))?.locate(p, at),
      home,
    });
    throw new ConfigError(located);
  }
  return {
    config: result.data,
    sources: Object.fromEntries(sources),
    files,
    ...(ignored ? { ignored } : {}),
  };
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

/** Claude Code's project file of MCP servers (`{ "mcpServers": { ... } }`), in the project directory. */
const MCP_JSON_NAME = ".mcp.json";

/**
 * The `mcpServers` of a project's `.mcp.json`, checked like the config's
 * own; undefined when there is no file or it lists none. Its other keys are
 * Claude Code's and left alone. What keeps it from being read is added to
 * `issues`, naming the file.
 */
async function readMcpJson(
  path: string,
  home: string,
  issues: ConfigIssue[],
): Promise<{ path: string; doc: JsoncDocument; value: Record<string, unknown> } | undefined> {
  const found = probe(path);
  // Not a file: nothing of Claude Code's to read. While a sandboxed command runs, a missing
  // .mcp.json is an empty directory the sandbox stands in its place (it is a protected path).
  if (found.state === "missing" || (found.state === "present" && !found.isFile)) return undefined;
  let text: string;
  try {
    if (found.state === "error") throw found.error;
    text = await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    issues.push(
      makeIssue(
        {
          code: "unreadable",
          file: path,
          detail: `cannot be read (${code ?? (err as Error).message}); expected a readable file`,
        },
        home,
      ),
    );
    return undefined;
  }
  const doc = parseJsoncDocument(text);
  const shape = documentIssues(doc, path, home);
  if (shape.length > 0) {
    issues.push(...shape);
    return undefined;
  }
  const servers = (doc.value as Record<string, unknown>).mcpServers;
  if (servers === undefined) return undefined;
  const value = { mcpServers: servers };
  const problems = validateLayer(value, { fileFor: () => path, locate: doc.locate, home });
  if (problems.length > 0) {
    issues.push(...problems);
    return undefined;
  }
  return { path, doc, value };
}

/** A config file's syntax problems, or that its top level is not an object: what keeps it from being read at all. */
export function documentIssues(doc: JsoncDocument, file: string, home: string): ConfigIssue[] {
  if (doc.problems.length > 0)
    return doc.problems.map((p) =>
      makeIssue({ code: p.kind, file, line: p.line, column: p.column, detail: p.detail }, home),
    );
  if (isPlainObject(doc.value)) return [];
  return [
    makeIssue(
      {
        code: "invalid_value",
        file,
        ...doc.locate([]),
        detail: `expected an object at top level, found ${kindOf(doc.value)}`,
      },
      home,
    ),
  ];
}

/**
 * The config file of a `.yoi` directory (`config.jsonc`, else `config.json`)
 * and its text; undefined when there is none. What stops it from being read
 * (both files, a directory, no permission) is added to `issues`.
 */
export async function readConfigFile(
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

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return "a string";
  return `a ${typeof value}`;
}
