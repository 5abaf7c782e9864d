/**
 * Which language servers a session may start: the built-in ones (TypeScript
 * and JavaScript through typescript-language-server, Python through
 * pyright-langserver) merged with the config's `lsp.servers`, and where
 * each one's program is: a path, or a name found in the project's
 * `node_modules/.bin` first, then on PATH.
 *
 * A server runs in the session's sandbox, read-only, when there is one;
 * and a program inside the project is run only as it was when the session
 * started: one that appeared or changed since (something the model ran
 * could have written it) is refused until yoi is started again. See
 * docs/design/lsp-diagnostics.md#servers-run-in-the-sandbox-read-only.
 */
import { statSync } from "node:fs";
import * as path from "node:path";
import type { LspConfig, LspServerConfig } from "@yoi/manifest";

/** A server as the session knows it, before it is started. */
export interface LspServerSpec {
  name: string;
  /** The program as configured (a name or a path). */
  command: string;
  args: readonly string[];
  /** Extensions with their dot, lower case. */
  extensions: readonly string[];
  /** The LSP language id per extension. */
  languageId: Readonly<Record<string, string>>;
  env: Readonly<Record<string, string>>;
  initializationOptions?: Record<string, unknown>;
  /**
   * How a file's diagnostics are had: `publish`, waiting for the server's
   * publishDiagnostics of the file's new version; `tsserver`, asking
   * typescript-language-server's tsserver for them (`typescript.tsserverRequest`),
   * because that server publishes nothing when a file's diagnostics did not
   * change and publishes each kind (syntax, semantic) on its own, so no
   * publication says "this is the answer for that text".
   */
  pull: "publish" | "tsserver";
}

const TS_IDS: Record<string, string> = {
  ".ts": "typescript",
  ".mts": "typescript",
  ".cts": "typescript",
  ".tsx": "typescriptreact",
  ".js": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".jsx": "javascriptreact",
};

/** The servers yoi knows by name. */
export const BUILTIN_LSP_SERVERS: Readonly<Record<string, LspServerSpec>> = {
  typescript: {
    name: "typescript",
    command: "typescript-language-server",
    args: ["--stdio"],
    extensions: Object.keys(TS_IDS),
    languageId: TS_IDS,
    env: {},
    pull: "tsserver",
  },
  python: {
    name: "python",
    command: "pyright-langserver",
    args: ["--stdio"],
    extensions: [".py", ".pyi"],
    languageId: { ".py": "python", ".pyi": "python" },
    env: {},
    pull: "publish",
  },
};

/** A configured server that cannot be used, and why (shown by `yoi lsp status` and `/lsp`). */
export interface LspSpecProblem {
  name: string;
  message: string;
}

/** The servers of a config: built-ins changed or turned off by `lsp.servers`, plus the ones it adds. */
export function lspServerSpecs(config: Pick<LspConfig, "servers">): {
  specs: LspServerSpec[];
  disabled: string[];
  problems: LspSpecProblem[];
} {
  const specs: LspServerSpec[] = [];
  const disabled: string[] = [];
  const problems: LspSpecProblem[] = [];
  const names = new Set([...Object.keys(BUILTIN_LSP_SERVERS), ...Object.keys(config.servers)]);
  for (const name of names) {
    const builtin = Object.hasOwn(BUILTIN_LSP_SERVERS, name) ? BUILTIN_LSP_SERVERS[name] : undefined;
    const entry: LspServerConfig | undefined = Object.hasOwn(config.servers, name)
      ? config.servers[name]
      : undefined;
    if (entry?.disabled) {
      disabled.push(name);
      continue;
    }
    const command = entry?.command ?? builtin?.command;
    const extensions = (entry?.extensions ?? builtin?.extensions)?.map((e) => e.toLowerCase());
    if (command === undefined || extensions === undefined) {
      const missing = [
        command === undefined ? '"command"' : "",
        extensions === undefined ? '"extensions"' : "",
      ]
        .filter(Boolean)
        .join(" and ");
      problems.push({
        name,
        message: `lsp.servers.${name} needs ${missing} (yoi does not know a server by this name)`,
      });
      continue;
    }
    const languageId: Record<string, string> = {};
    for (const ext of extensions) languageId[ext] = builtin?.languageId[ext] ?? ext.slice(1);
    for (const [ext, id] of Object.entries(entry?.languageId ?? {})) languageId[ext.toLowerCase()] = id;
    specs.push({
      name,
      command,
      args: entry?.args ?? builtin?.args ?? [],
      extensions,
      languageId,
      env: entry?.env ?? {},
      // A server that does not answer tsserver requests falls back to its publications.
      pull: builtin?.pull ?? "publish",
      ...(entry?.initializationOptions ? { initializationOptions: entry.initializationOptions } : {}),
    });
  }
  return { specs, disabled, problems };
}

/** What a program file was when the session started (to see that it is unchanged when it starts). */
interface FileIdentity {
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

function identity(file: string): FileIdentity | undefined {
  try {
    const st = statSync(file);
    if (!st.isFile()) return undefined;
    return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs };
  } catch {
    return undefined;
  }
}

const same = (a: FileIdentity, b: FileIdentity) =>
  a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;

/** Where a server's program was found, or why not. */
export type ResolvedCommand =
  | { found: true; path: string; where: "path" | "project" | "PATH" }
  | { found: false; reason: string };

/**
 * Finds server programs for one project root. Programs inside the root are
 * looked at when this is constructed (the session's start, before the model
 * ran anything) and used later only if they are still the same file.
 */
export class LspCommandResolver {
  readonly #root: string;
  readonly #pathDirs: readonly string[];
  readonly #seen = new Map<string, FileIdentity | undefined>();

  constructor(root: string, envPath: string | undefined, specs: readonly LspServerSpec[]) {
    this.#root = root;
    this.#pathDirs = (envPath ?? "").split(path.delimiter).filter((d) => d !== "" && path.isAbsolute(d));
    for (const spec of specs) for (const file of this.#projectCandidates(spec.command)) this.#remember(file);
  }

  #remember(file: string): void {
    if (!this.#seen.has(file)) this.#seen.set(file, identity(file));
  }

  /** Candidate files inside the project for a command (a relative path, or a name in node_modules/.bin). */
  #projectCandidates(command: string): string[] {
    if (path.isAbsolute(command)) return this.#inside(command) ? [command] : [];
    if (command.includes("/") || command.includes(path.sep)) return [path.resolve(this.#root, command)];
    return [path.join(this.#root, "node_modules", ".bin", command)];
  }

  #inside(file: string): boolean {
    const rel = path.relative(this.#root, file);
    return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
  }

  /** A project file is usable when it existed at the start and is the same file now. */
  #projectFile(file: string): ResolvedCommand | undefined {
    const now = identity(file);
    if (now === undefined) return undefined;
    const then = this.#seen.get(file);
    if (then === undefined || !same(then, now)) {
      return {
        found: false,
        reason: `${path.relative(this.#root, file)} was created or changed during this session; yoi runs a project's server program only as it was at start-up (restart yoi to use it)`,
      };
    }
    return { found: true, path: file, where: "project" };
  }

  /** Where `command` (of the server `name`) is. */
  resolve(command: string, name: string): ResolvedCommand {
    const isPath = path.isAbsolute(command) || command.includes("/") || command.includes(path.sep);
    if (isPath) {
      const file = path.resolve(this.#root, command);
      if (this.#inside(file))
        return this.#projectFile(file) ?? { found: false, reason: `${command} does not exist` };
      return identity(file)
        ? { found: true, path: file, where: "path" }
        : { found: false, reason: `${command} does not exist` };
    }
    const local = this.#projectFile(path.join(this.#root, "node_modules", ".bin", command));
    if (local !== undefined) return local;
    for (const dir of this.#pathDirs) {
      const file = path.join(dir, command);
      // A PATH entry inside the project is the project's program: the same start-up rule holds.
      if (this.#inside(file)) continue;
      if (identity(file)) return { found: true, path: file, where: "PATH" };
    }
    return {
      found: false,
      reason: `${command} was found neither in node_modules/.bin nor on PATH (install it, or set lsp.servers.${name}.command)`,
    };
  }
}
