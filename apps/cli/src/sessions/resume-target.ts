/**
 * Which session `-c`, `--resume <id-or-prefix>` or the `-r` picker means,
 * and the flags it resumes with: the model and base URL the session was
 * using, unless the command line names others.
 */

import { existsSync } from "node:fs";
import * as path from "node:path";
import { findSessionId, listSessions, SessionLogError, type SessionSummary } from "@yoi/worker-persistence";
import type { SessionFlags } from "../args.ts";
import { CliError, usageError } from "../cli-error.ts";
import { EXIT } from "../exit-codes.ts";
import { projectRoot } from "../project-root.ts";
import type { CliConfig } from "../session-setup.ts";

export interface ResumeRequest {
  flags: SessionFlags;
  continueLast?: boolean;
  /** An id or any unique prefix of one. */
  resume?: string;
  /** Choose interactively (`-r` without an id). */
  pick?: (sessions: SessionSummary[]) => Promise<SessionSummary | undefined>;
}

export interface ResumeTarget {
  id: string;
  summary: SessionSummary | undefined;
  /** The flags to set the model up with: the session's model and base URL unless the flags name others. */
  flags: SessionFlags;
  /** The permission mode the session ran in, for whoever applies modes. */
  permissionMode?: string;
}

/**
 * Resolves the session a chat resumes, or undefined for a new session,
 * among the sessions of the loaded config's data directory.
 * Throws a usage CliError naming what to do when there is no such session.
 */
export async function resolveResumeTarget(
  request: ResumeRequest,
  cli: Pick<CliConfig, "cwd" | "config" | "dataDir">,
): Promise<ResumeTarget | undefined> {
  if (!request.continueLast && request.resume === undefined && request.pick === undefined) return undefined;
  const here = await projectRoot(cli.cwd, cli.config.scope.root);
  let summary: SessionSummary | undefined;
  if (request.resume !== undefined) {
    const id = await findId(cli, request.resume);
    summary = (await listSessions({ dir: cli.dataDir })).find((s) => s.id === id);
    return target(id, summary, request.flags);
  }
  const sessions = (await listSessions({ dir: cli.dataDir })).filter((s) => s.cwd === here);
  if (request.continueLast) {
    // the last session that got anywhere; a run that failed at once is a last resort
    summary = sessions.find((s) => !s.failedBeforeOutput) ?? sessions[0];
    if (summary === undefined) {
      throw usageError(
        `no earlier session in ${here} to continue; start one with yoi (yoi sessions --all lists every session)`,
      );
    }
    return target(summary.id, summary, request.flags);
  }
  const shown = sessions.filter((s) => !s.failedBeforeOutput);
  if (shown.length === 0) {
    throw usageError(`no sessions in ${here} to resume (yoi sessions --all lists every session)`);
  }
  summary = await request.pick?.(shown);
  if (summary === undefined) throw new CliError("no session chosen", EXIT.cancelled);
  return target(summary.id, summary, request.flags);
}

async function findId(cli: Pick<CliConfig, "dataDir">, prefix: string): Promise<string> {
  return resolveSessionArg(cli.dataDir, prefix);
}

/** The full id an id-or-prefix argument names; a usage CliError when none or several do. */
export async function resolveSessionArg(dataDir: string, prefix: string): Promise<string> {
  try {
    return await findSessionId({ dir: dataDir, prefix });
  } catch (error) {
    if (!SessionLogError.isInstance(error)) throw error;
    if (error.code === "not_found") throw usageError(`no session "${prefix}" (yoi sessions lists them)`);
    if (error.code === "ambiguous") throw usageError(error.message);
    if (error.code === "invalid_id") throw usageError(`${error.message} (yoi sessions lists them)`);
    throw error;
  }
}

function target(id: string, summary: SessionSummary | undefined, flags: SessionFlags): ResumeTarget {
  const next: SessionFlags = { ...flags };
  if (flags.model === undefined && summary?.modelRef !== undefined) {
    next.model = summary.modelRef;
    // the base URL belongs to the session's provider: only with its model
    if (flags.baseURL === undefined && summary.baseURL !== undefined) next.baseURL = summary.baseURL;
  }
  // The mode the session was last in, unless the command line names one. Bypass is never
  // carried over: it needs its own explicit flag every time.
  const mode = summary?.permissionMode;
  if (flags.permissionMode === undefined && mode !== undefined && mode !== "bypassPermissions") {
    next.permissionMode = mode;
  }
  return {
    id,
    summary,
    flags: next,
    ...(summary?.permissionMode !== undefined ? { permissionMode: summary.permissionMode } : {}),
  };
}

/** A base URL as a session records it: no user name, password, query or fragment. */
export function recordedBaseURL(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    parsed.search = "";
    parsed.hash = "";
    return parsed.toString().replace(/\/$/, url.endsWith("/") ? "/" : "");
  } catch {
    return undefined;
  }
}

/** What a chat command says about which session to open. */
export interface ChatSessionChoice {
  flags: SessionFlags;
  continueLast: boolean;
  resume?: string;
  pickResume?: boolean;
  fork?: string;
  forkTurn?: number;
}

/**
 * The flags a chat sets its model up with and how it opens its pod: a
 * resumed or forked session brings its own model and base URL.
 */
export async function chatSessionPlan(
  command: ChatSessionChoice,
  cli: Pick<CliConfig, "cwd" | "config" | "dataDir">,
  pick: (sessions: SessionSummary[]) => Promise<SessionSummary | undefined>,
): Promise<{
  flags: SessionFlags;
  open: { resume?: string; fork?: { parent: string; beforeTurn?: number } };
  /** The worktree the session ran in, when that is not where yoi was started: it resumes there. */
  cwd?: string;
}> {
  const target = await resolveResumeTarget(
    {
      flags: command.flags,
      continueLast: command.continueLast,
      ...((command.fork ?? command.resume) !== undefined ? { resume: command.fork ?? command.resume } : {}),
      ...(command.pickResume ? { pick } : {}),
    },
    cli,
  );
  if (target === undefined) return { flags: command.flags, open: {} };
  if (command.fork !== undefined) {
    return {
      flags: target.flags,
      open: {
        fork: {
          parent: target.id,
          ...(command.forkTurn !== undefined ? { beforeTurn: command.forkTurn } : {}),
        },
      },
    };
  }
  const here = await projectRoot(cli.cwd, cli.config.scope.root);
  const ranIn = target.summary?.cwd;
  if (ranIn !== undefined && ranIn !== here && isWorktreePath(ranIn)) {
    if (!existsSync(ranIn)) {
      throw usageError(
        `session ${target.id.slice(0, 8)} ran in the worktree ${ranIn}, which no longer exists; yoi --worktree ${path.basename(ranIn)} --resume ${target.id.slice(0, 8)} recreates it and continues there`,
      );
    }
    return { flags: target.flags, open: { resume: target.id }, cwd: ranIn };
  }
  return { flags: target.flags, open: { resume: target.id } };
}

/** Whether a directory is one of yoi's worktrees (`<repo>/.yoi/worktrees/<name>`). */
export function isWorktreePath(dir: string): boolean {
  return (
    path.basename(path.dirname(dir)) === "worktrees" &&
    path.basename(path.dirname(path.dirname(dir))) === ".yoi"
  );
}
