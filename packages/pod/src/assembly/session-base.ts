/**
 * What a session stands on, read before it is wired: the config, the scope,
 * the stores, the bash sandbox, and the extensions and agents on disk.
 */
import { homedir } from "node:os";
import * as path from "node:path";
import type { BlobStore } from "@yoi/llm-worker";
import { type Config, ConfigSchema, sandboxSettings } from "@yoi/manifest";
import { FileSessionStore, FsBlobStore, type SessionStore } from "@yoi/worker-persistence";
import type { AgentDefinition, AgentDefinitionError } from "../agents/agent-definition.ts";
import { agentDirs, loadAgents } from "../agents/load-agents.ts";
import { type Extensions, loadExtensions } from "../extensions/load-extensions.ts";
import { privatePaths, scopeFromConfig, yoiPrivatePaths } from "../fs/scope-from-config.ts";
import type { ScopedFs } from "../fs/scoped-fs.ts";
import { isInside } from "../fs/scoped-fs.ts";
import type { PodOptions } from "../pod-options.ts";
import { podSandbox, type SessionSandbox } from "../sandbox/pod-sandbox.ts";

export interface SessionBase {
  config: Config;
  fs: ScopedFs;
  /** Where sessions and blobs live. */
  dataDir: string;
  blobStore: BlobStore;
  sessions: SessionStore;
  /** Settled when the pod opens, or when a tool is about to run (see SessionSandbox). */
  sandbox: SessionSandbox;
  extensions: Extensions;
  agents: ReadonlyMap<string, AgentDefinition>;
  /** Agent files that could not be used (said at the first run). */
  agentProblems: AgentDefinitionError[];
}

/** Where a pod opened with these options keeps sessions and blobs: `dataDir`, else `session.dir`, else `~/.yoi`. */
export function sessionDataDir(options: Pick<PodOptions, "config" | "cwd" | "dataDir">): string {
  const cwd = path.resolve(options.cwd ?? process.cwd());
  return path.resolve(cwd, options.dataDir ?? options.config?.session.dir ?? path.join(homedir(), ".yoi"));
}

export async function openSessionBase(options: PodOptions): Promise<SessionBase> {
  const config = options.config ?? ConfigSchema.parse({});
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const root = path.resolve(cwd, config.scope.root ?? ".");
  const dataDir = sessionDataDir({ config, cwd, dataDir: options.dataDir });
  // Blobs and session logs of one data directory: the blobs' fsyncs run behind the tool loop (write-behind),
  // and each fsync of the log waits for them, so a record on disk never points at a blob that is not.
  const ownBlobs =
    options.blobStore === undefined && options.sessionStore === undefined
      ? new FsBlobStore({ dir: dataDir, deferSync: true })
      : undefined;
  const blobStore = options.blobStore ?? ownBlobs ?? new FsBlobStore({ dir: dataDir });
  const sessions =
    options.sessionStore ??
    new FileSessionStore({
      dir: dataDir,
      ...(options.fsync !== undefined ? { fsync: options.fsync } : {}),
      ...(ownBlobs !== undefined && { blobs: ownBlobs }),
    });
  // The extensions and the agents are read while the scope and then the sandbox are set up: none needs them.
  const scope = scopeFromConfig(config.scope, cwd, privatePaths(dataDir));
  const [fs, sandbox, extensions, loaded] = await Promise.all([
    scope,
    scope.then((fs) =>
      podSandbox({
        settings: sandboxSettings(config.sandbox),
        bash: options.bash !== false,
        ...(options.sandbox !== undefined ? { sandbox: options.sandbox } : {}),
        writeRoots: fs.writeRoots,
        dataDir,
        // yoi's own wherever they are; the rest (the home's credential stores) where a write root holds them.
        private: [
          ...new Set([
            ...yoiPrivatePaths(dataDir),
            ...fs.hidden.filter((h) => fs.writeRoots.some((r) => isInside(r, h))),
          ]),
        ],
      }),
    ),
    options.extensions
      ? loadExtensions({ projectDir: root, homeDir: options.extensions.homeDir })
      : ({ commands: [], skills: [], problems: [] } satisfies Extensions),
    config.task.maxDepth > 0
      ? loadAgents(options.agentDirs ?? agentDirs(root, homedir()))
      : { agents: new Map<string, AgentDefinition>(), problems: [] },
  ]);
  // A session that starts in bypassPermissions needs the sandbox settled first: the mode is refused without one.
  if (
    (options.permissionMode ?? config.permissions.mode) === "bypassPermissions" &&
    !options.allowUnsandboxedBypass
  )
    await sandbox.settle();
  return {
    config,
    fs,
    dataDir,
    blobStore,
    sessions,
    sandbox,
    extensions,
    agents: loaded.agents,
    agentProblems: loaded.problems,
  };
}
