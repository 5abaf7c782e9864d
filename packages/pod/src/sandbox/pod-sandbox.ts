/**
 * A pod's decision about bash confinement, made once when the pod opens:
 * the config says whether a sandbox is wanted, the machine says whether one
 * exists. Where none exists yoi says so once, and the permission policy makes
 * every bash call ask (print mode: deny) until the user opts out explicitly.
 */
import type { SandboxSettings } from "@yoi/manifest";
import type { SandboxStatus } from "../permissions/policy.ts";
import { detectSandbox, expectSandbox, isSandbox } from "./detect.ts";
import type { Sandbox, SandboxPolicy, SandboxUnavailable } from "./sandbox.ts";

/** What the model is told with each prompt submitted in plan mode. */
export const PLAN_MODE_NOTE =
  "[Plan mode] The user wants a plan, not changes. Only read-only tools run now (reading, listing, searching); " +
  "file edits and bash are refused. Investigate, then present a concrete step-by-step plan with the exit_plan_mode tool: " +
  "the user approves it (and you carry it out) or tells you what to change.";

/**
 * What follows the reason in a pod's notice that bash has no sandbox (alert
 * `sandbox` / `sandbox_unavailable`): what that means and how to turn the
 * sandbox off, in the pod's words, which a UI with its own way to do that
 * replaces.
 */
export const SANDBOX_NOTICE_TAIL =
  'Every bash command will ask for approval (and is refused where no one can answer). To run bash unsandboxed without asking, turn the sandbox off in the config ("sandbox": false).';

/** How bash is confined in one pod. */
export interface PodSandbox {
  status: SandboxStatus;
  /** The sandbox kind when active. */
  kind?: Sandbox["kind"];
  /** What the bash tool wraps its commands with, when active. */
  bash?: Confinement;
  /** For `unavailable`: why this machine has no sandbox (`bubblewrap is not installed`). */
  reason?: string;
  /**
   * Said once when bash is unconfined and will ask for every command. In the
   * words of the pod's options; a UI that has its own way to turn the sandbox
   * off says so from `status` and `reason` instead.
   */
  notice?: string;
}

/** What decides a pod's sandbox: the config, the pod's options, where commands may write and what they must not see. */
export interface PodSandboxOptions {
  settings: SandboxSettings;
  /** The pod has a bash tool at all. */
  bash: boolean;
  /** An explicit sandbox (or `false`: none) instead of detecting the machine's. */
  sandbox?: Sandbox | false;
  writeRoots: readonly string[];
  /** yoi's data directory (sessions, blobs): hidden from commands. */
  dataDir: string;
  /** Private files and directories hidden from commands as well (yoi's own, and the scope's hidden ones in a write root). */
  private?: readonly string[];
}

/**
 * A pod's sandbox: known when the pod opens wherever nothing has to run to
 * know it (turned off, none on PATH, a success remembered from an earlier
 * probe); otherwise expected from the bwrap on PATH until the probe settles
 * it. The probe is started by `settle()`, which the pod calls before any
 * tool runs and once the first answer is arriving, so that its process
 * start is not on the way to the first request. Only what the model is
 * told may rest on an unsettled sandbox; whatever runs a command waits for
 * `settle()`.
 */
export class SessionSandbox {
  #current: PodSandbox;
  #settled: boolean;
  #settling: Promise<PodSandbox> | undefined;
  readonly #listeners: ((settled: PodSandbox) => void)[] = [];
  readonly #options: PodSandboxOptions;

  constructor(current: PodSandbox, settled: boolean, options: PodSandboxOptions) {
    this.#current = current;
    this.#settled = settled;
    this.#options = options;
  }

  /** The sandbox as settled, or as expected until then. */
  get current(): PodSandbox {
    return this.#current;
  }

  /** Whether `current` is the machine's answer (no probe left to run). */
  get settled(): boolean {
    return this.#settled;
  }

  /** The settled sandbox, running the probe the first time it is needed. */
  settle(): Promise<PodSandbox> {
    if (this.#settled) return Promise.resolve(this.#current);
    this.#settling ??= detectSandbox().then((found) => {
      this.#current = decision(found, this.#options);
      this.#settled = true;
      // Before anyone waiting for the answer goes on, whoever settled it.
      for (const listener of this.#listeners.splice(0)) listener(this.#current);
      return this.#current;
    });
    return this.#settling;
  }

  /** Calls `listener` once with the answer, as the probe's answer is taken (never, when already settled). */
  onSettled(listener: (settled: PodSandbox) => void): void {
    if (!this.#settled) this.#listeners.push(listener);
  }
}

export async function podSandbox(options: PodSandboxOptions): Promise<SessionSandbox> {
  // `sandbox: false` from the embedding code is an explicit opt-out, like `"sandbox": false` in the config.
  if (!options.bash || !options.settings.enabled || options.sandbox === false)
    return new SessionSandbox({ status: "disabled" }, true, options);
  if (options.sandbox !== undefined)
    return new SessionSandbox(decision(options.sandbox, options), true, options);
  const expected = await expectSandbox();
  return new SessionSandbox(decision(expected.sandbox, options), expected.settled, options);
}

function decision(found: Sandbox | SandboxUnavailable, options: PodSandboxOptions): PodSandbox {
  if (!isSandbox(found)) {
    return {
      status: "unavailable",
      reason: found.reason,
      notice: `bash has no sandbox here: ${found.reason.replace(/\.$/, "")}. ${SANDBOX_NOTICE_TAIL}`,
    };
  }
  const policy: SandboxPolicy = {
    writeRoots: options.writeRoots,
    // The whole data directory when it is not where the commands work, and what is private wherever it is.
    hidden: [
      ...(options.writeRoots.some((r) => options.dataDir === r || options.dataDir.startsWith(`${r}/`))
        ? []
        : [options.dataDir]),
      ...(options.private ?? []),
    ],
    network: options.settings.network,
  };
  return { status: "active", kind: found.kind, bash: { sandbox: found, policy } };
}

/** What confines a command: the OS sandbox and its policy. */
export type Confinement = { sandbox: Sandbox; policy: SandboxPolicy };

/**
 * The confinement a command runs in: the one given, or a session
 * sandbox's once settled (running the probe if it has not run). Whatever
 * starts a process takes it from here.
 */
export async function settledConfinement(
  given: Confinement | SessionSandbox | undefined,
): Promise<Confinement | undefined> {
  return given instanceof SessionSandbox ? (await given.settle()).bash : given;
}

/** The confinement as expected now (settled or not): for what the model is told, never for running. */
export function expectedConfinement(
  given: Confinement | SessionSandbox | undefined,
): Confinement | undefined {
  return given instanceof SessionSandbox ? given.current.bash : given;
}
