/**
 * Opens the Pod a chat runs in: a new session, the last one of this
 * project (`-c`) or a chosen one (`--resume`), on the client of the setup.
 */
import type { LlmClient } from "@yoi/llm-client";
import { providerOfKind } from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import {
  checkRefs,
  type FileAccess,
  fileRefs,
  forkSession,
  PermissionModeError,
  type PermissionPrompt,
  Pod,
  type PodOptions,
  parseSegments,
  privatePaths,
  type RefCheck,
  RewindError,
  scopeFromConfig,
} from "@yoi/pod";
import { findSessionId, listSessions, SessionLogError } from "@yoi/worker-persistence";
import { CliError, usageError } from "./cli-error.ts";
import { describeError, type ProviderContext } from "./describe-error.ts";
import { EXIT } from "./exit-codes.ts";
import { inputTooLarge } from "./input-limit.ts";
import { ruleSources } from "./permission-flags.ts";
import { APPROVALS_SOURCE, approvalRule, readApprovals } from "./project-approvals.ts";
import { projectRoot } from "./project-root.ts";
import type { ModelSetup, SetupOptions } from "./session-setup.ts";
import { recordedBaseURL } from "./sessions/resume-target.ts";
import { boundYoungGeneration } from "./young-generation.ts";

export interface OpenPodOptions {
  env?: SetupOptions["env"];
  continueLast?: boolean;
  resume?: string;
  /** Start a new session copying this one's history (id or prefix), before `beforeTurn` when set. */
  fork?: { parent: string; beforeTurn?: number };
  ask?: PermissionPrompt;
  /** Where file tools read and write file text instead of the disk (an editor's buffers: yoi acp). */
  fileAccess?: FileAccess;
}

export interface OpenedPod {
  pod: Pod;
  setup: ModelSetup;
  client: LlmClient;
  /** True for `-c` / `--resume`. */
  restored: boolean;
  provider: ProviderContext;
}

/** Opens a pod for an existing setup (also used by `/model` and `/resume`). */
export async function openPodWith(
  setup: ModelSetup,
  options: Pick<OpenPodOptions, "continueLast" | "resume" | "fork" | "ask" | "env" | "fileAccess">,
): Promise<OpenedPod> {
  boundYoungGeneration();
  let pod: Pod;
  // "Always for this project" answers of earlier sessions, read while the pod opens (a damaged file fails the open below).
  const approvals = projectRoot(setup.cwd, setup.config.scope.root).then((root) =>
    readApprovals(setup.homeDir, root),
  );
  approvals.catch(() => {}); // awaited below; a failure while the pod opens must not be an unhandled rejection
  // The pod makes the client for the config's model (setup.config.model), its key from `env`.
  const podOptions: PodOptions = {
    config: setup.config,
    cwd: setup.cwd,
    dataDir: setup.dataDir,
    env: options.env ?? process.env,
    credentials: setup.credentials,
    ...(options.ask ? { ask: options.ask } : {}),
    ...(options.fileAccess ? { fileAccess: options.fileAccess } : {}),
    // Custom commands and skills of the project and of the user's ~/.yoi.
    extensions: { homeDir: setup.homeDir },
    ...(setup.contextWindow !== undefined ? { contextWindow: setup.contextWindow } : {}),
    permissionSources: ruleSources(setup),
    ...(setup.allowUnsandboxedBypass ? { allowUnsandboxedBypass: true } : {}),
    ...(setup.appendSystem !== undefined ? { appendSystem: setup.appendSystem } : {}),
    sessionStart: { ...(recordedBaseURL(setup.baseURL) ? { baseURL: recordedBaseURL(setup.baseURL) } : {}) },
  };
  let id = options.resume;
  if (options.fork !== undefined) {
    try {
      id = (
        await forkSession({
          dataDir: setup.dataDir,
          parent: options.fork.parent,
          ...(options.fork.beforeTurn !== undefined ? { beforeTurn: options.fork.beforeTurn } : {}),
        })
      ).id;
    } catch (error) {
      throw restoreError(error, options.fork.parent);
    }
  }
  if (options.continueLast) {
    const here = await projectRoot(setup.cwd, setup.config.scope.root);
    const last = (await listSessions({ dir: setup.dataDir })).find((s) => s.cwd === here);
    if (last === undefined) {
      throw usageError(
        `no earlier session in ${here} to continue; start one with yoi (yoi sessions --all lists every session)`,
      );
    }
    id = last.id;
  }
  if (id !== undefined) {
    try {
      // any unique prefix names a session (the list shows short ones)
      id = await findSessionId({ dir: setup.dataDir, prefix: id });
      pod = await Pod.restore(id, podOptions);
    } catch (error) {
      throw restoreError(error, id);
    }
  } else {
    try {
      pod = await Pod.create(podOptions);
    } catch (error) {
      if (PermissionModeError.isInstance(error)) throw usageError(describeError(error).message);
      throw error;
    }
  }
  try {
    for (const approval of await approvals) pod.permissions.addRule(approvalRule(approval), APPROVALS_SOURCE);
  } catch (error) {
    await pod.close().catch(() => {});
    throw error;
  }
  return { pod, setup, client: pod.client, restored: id !== undefined, provider: providerContext(setup) };
}

export function providerContext(setup: ModelSetup): ProviderContext {
  return {
    provider: setup.resolved.providerName,
    model: setup.resolved.model,
    ...(setup.baseURL ? { baseURL: setup.baseURL } : {}),
    ...(setup.keyEnv
      ? {
          keyEnv:
            setup.keySource === "credentials"
              ? `the key yoi setup saved for ${setup.keyEnv} (run yoi setup again)`
              : setup.keyEnv,
        }
      : {}),
    baseURLEnv: providerOfKind(setup.resolved.kind).baseURLEnv,
    customServer: setup.customServer,
    secrets: [setup.apiKey],
  };
}

function restoreError(error: unknown, id: string): CliError {
  if (PermissionModeError.isInstance(error)) return usageError(describeError(error).message);
  const message = errorMessage(error);
  if (SessionLogError.isInstance(error)) {
    switch (error.code) {
      case "not_found":
        return usageError(`no session "${id}" (yoi sessions lists them)`);
      case "ambiguous":
        return usageError(message);
      case "invalid_id":
        return usageError(`"${id}" is not a session id (yoi sessions lists them)`);
      case "locked":
        return new CliError(`session ${id} is open in another yoi: ${message}`, EXIT.error);
    }
  }
  if (RewindError.isInstance(error) && error.code === "no_checkpoint") return usageError(message);
  if ((error as NodeJS.ErrnoException).code === "ENOENT") {
    return usageError(`no session "${id}" (yoi sessions lists them)`);
  }
  return new CliError(`session ${id} cannot be resumed: ${message}`, EXIT.error);
}

/**
 * What reading the session's log found (damaged records skipped), one line
 * each, and for skipped records what to do: they are skipped again at every
 * resume, and a fork copies only the records that were read.
 */
export function restoreWarnings(pod: Pod): string[] {
  const found = pod.alerts.recentAlerts().filter((a) => a.source === "session_log");
  const lines = found.map((a) => `session log ${pod.id}: ${a.message}`);
  if (found.some((a) => /^line \d+: skipped: /.test(a.message)))
    lines.push(
      `session log ${pod.id}: the rest of the session was restored; a fork continues it without the skipped lines (yoi --fork ${pod.id.slice(0, 8)}, or /fork)`,
    );
  return lines;
}

/** What checking the `@` refs of a prompt before it is sent found. */
export interface FileRefsCheck {
  /** One result per distinct ref, in order (the pod raises a warn alert for each that fails, at submit). */
  refs: RefCheck[];
  /** Why the prompt cannot be sent: it does not fit the model's window with its attached files. */
  tooLarge?: string;
}

/**
 * Checks every `@path` of `input` before anything is sent, the way the pod
 * will read it (docs/design/file-refs.md). A ref that cannot be attached does
 * not stop the prompt (the pod sends its placeholder and raises a warn
 * alert); only a prompt that cannot fit the model's window with its files
 * does, since sending it would fail anyway.
 */
export async function checkFileRefs(setup: ModelSetup, input: string): Promise<FileRefsCheck> {
  const model = `${setup.resolved.providerName}/${setup.resolved.model}`;
  const { config } = setup;
  const segments = parseSegments(input);
  const refs =
    fileRefs(segments).length === 0
      ? []
      : await checkRefs(segments, {
          fs: await scopeFromConfig(config.scope, setup.cwd, privatePaths(setup.dataDir, setup.homeDir)),
          maxBytes: config.toolOutput.maxBytes,
          isServer: (name) => Object.hasOwn(config.mcpServers, name),
        });
  let bytes = Buffer.byteLength(input);
  for (const check of refs) if (check.ok && check.kind === "file") bytes += check.bytes;
  const attached = refs.some((c) => c.ok && c.kind !== "resource");
  const tooLarge = inputTooLarge(bytes, setup.window, model, {
    what: attached ? "the prompt with its attached files" : "the prompt",
  });
  return tooLarge === undefined ? { refs } : { refs, tooLarge };
}
