/**
 * The environment section of the system prompt: today's date, the OS and
 * the shell bash runs, the scope root and, in a git repository, the branch,
 * a short status and the last commits. Read again before each run (like the
 * instruction files), so the model sees the tree as it is now; outside a
 * repository, or without git, the git part is left out without a word.
 */
import * as os from "node:os";
import { errorMessage } from "@yoi/manifest/errors";
import { type GitAbsence, type GitState, readGitState } from "./git-state.ts";

/** Options of the environment section (`PodOptions.environment`). */
export interface EnvironmentOptions {
  /** Time limit of the git processes, in ms; past it the section says git did not answer. Default 2000. */
  gitTimeoutMs?: number;
  /** Status lines shown at most (the rest counted). Default 40. */
  maxStatusLines?: number;
  /** Commit subjects shown. Default 5. */
  maxCommits?: number;
  /** The git binary. Default `git` on PATH. */
  git?: string;
  /** The clock, for the date. Default the system's. */
  now?: () => Date;
}

/** What the last refresh found. */
export interface EnvironmentSnapshot {
  /** Today's date in the machine's time zone, `YYYY-MM-DD`. */
  date: string;
  /** `Linux 6.8.0 (x64)` and the like. */
  os: string;
  /** The shell the bash tool runs; undefined without a bash tool. */
  shell: string | undefined;
  root: string;
  /** The repository, or why there is none. */
  git: GitState | GitAbsence;
}

/** The heading of the environment section of the system prompt. */
export const ENVIRONMENT_HEADING = "# Environment";

const DEFAULTS = { gitTimeoutMs: 2000, maxStatusLines: 40, maxCommits: 5 };

export class SessionEnvironment {
  readonly #root: string;
  readonly #shell: string | undefined;
  readonly #options: Required<Omit<EnvironmentOptions, "git">> & { git: string | undefined };
  readonly #env: Readonly<Record<string, string | undefined>> | undefined;
  #current: EnvironmentSnapshot | undefined;
  #pending: Promise<EnvironmentSnapshot> | undefined;

  /**
   * `root` is the scope root (git runs there), `shell` the bash tool's shell
   * (undefined without one), `env` what git runs with (default `process.env`).
   */
  constructor(
    root: string,
    shell: string | undefined,
    options: EnvironmentOptions = {},
    env?: Readonly<Record<string, string | undefined>>,
  ) {
    for (const key of ["gitTimeoutMs", "maxStatusLines", "maxCommits"] as const) {
      const value = options[key];
      if (value !== undefined && !(Number.isInteger(value) && value > 0))
        throw new RangeError(`environment.${key} must be a positive integer, got ${value}`);
    }
    this.#root = root;
    this.#shell = shell;
    this.#env = env;
    this.#options = { ...DEFAULTS, now: () => new Date(), ...options, git: options.git };
  }

  /** What the last refresh found; undefined before the first. */
  get current(): EnvironmentSnapshot | undefined {
    return this.#current;
  }

  /** The snapshot of the read in progress, or of the last one, or of a new one when none ran yet. */
  latest(): Promise<EnvironmentSnapshot> {
    return this.#current && !this.#pending ? Promise.resolve(this.#current) : this.refresh();
  }

  /**
   * Reads the date and the repository again (a read already in progress is
   * shared: it is as fresh). Never rejects: git's failures are part of the snapshot.
   */
  refresh(): Promise<EnvironmentSnapshot> {
    if (this.#pending) return this.#pending;
    const pending = this.#read().then((snapshot) => {
      this.#current = snapshot;
      this.#pending = undefined;
      return snapshot;
    });
    this.#pending = pending;
    return pending;
  }

  /** The section appended to the system prompt; empty before the first refresh. */
  render(): string {
    return this.#current ? renderEnvironment(this.#current) : "";
  }

  async #read(): Promise<EnvironmentSnapshot> {
    const { gitTimeoutMs, maxStatusLines, maxCommits, git, now } = this.#options;
    let state: GitState | GitAbsence;
    try {
      state = await readGitState(this.#root, {
        timeoutMs: gitTimeoutMs,
        maxStatusLines,
        maxCommits,
        ...(git !== undefined ? { git } : {}),
        ...(this.#env !== undefined ? { env: this.#env } : {}),
      });
    } catch (error) {
      state = { kind: "failed", reason: errorMessage(error) };
    }
    return {
      date: localDate(now()),
      os: `${os.type()} ${os.release()} (${os.arch()})`,
      shell: this.#shell,
      root: this.#root,
      git: state,
    };
  }
}

function localDate(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

function isRepository(git: GitState | GitAbsence): git is GitState {
  return !("kind" in git);
}

/** The branch as the header and the prompt name it: `main`, or `detached HEAD`. */
export function branchLabel(snapshot: EnvironmentSnapshot): string | undefined {
  const git = snapshot.git;
  if (!isRepository(git)) return undefined;
  return git.branch ?? "detached HEAD";
}

/** The system prompt section for a snapshot. */
export function renderEnvironment(snapshot: EnvironmentSnapshot): string {
  const lines = [ENVIRONMENT_HEADING, `Today's date: ${snapshot.date}`, `OS: ${snapshot.os}`];
  if (snapshot.shell !== undefined) lines.push(`Shell (the bash tool): ${snapshot.shell}`);
  lines.push(`Project root: ${snapshot.root}`);
  const git = snapshot.git;
  if (!isRepository(git)) {
    // Without git installed nothing is said: whether this is a repository is not known.
    if (git.kind === "not_a_repository") lines.push("Git repository: no");
    if (git.kind === "failed") lines.push(`Git: the repository state could not be read (${git.reason}).`);
    return lines.join("\n");
  }
  lines.push("Git repository: yes");
  let branch = git.branch === undefined ? "detached HEAD (at the first commit below)" : git.branch;
  if (git.unborn) branch += " (no commits yet)";
  const up = git.upstream;
  if (up) {
    const facts = up.gone
      ? "its upstream is gone"
      : [up.ahead > 0 ? `ahead ${up.ahead}` : "", up.behind > 0 ? `behind ${up.behind}` : ""]
          .filter(Boolean)
          .join(", ") || "up to date";
    branch += ` (tracking ${up.name}: ${facts})`;
  }
  lines.push(`Branch: ${branch}`);
  if (git.status.length === 0) {
    lines.push("Status: clean");
  } else {
    lines.push("Status (git status --short, as of the start of this turn):");
    lines.push(...git.status);
    if (git.moreStatus > 0) lines.push(`... and ${git.moreStatus} more`);
  }
  if (git.commits.length > 0) {
    lines.push("Recent commits:");
    lines.push(...git.commits);
  }
  return lines.join("\n");
}
