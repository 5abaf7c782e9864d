/**
 * A pod's decision about bash confinement, made once when the pod opens:
 * the config says whether a sandbox is wanted, the machine says whether one
 * exists. Where none exists yoi says so once, and the permission policy makes
 * every bash call ask (print mode: deny) until the user opts out explicitly.
 */
import type { SandboxSettings } from "@yoi/manifest";
import type { SandboxStatus } from "../permissions/policy.ts";
import { detectSandbox, isSandbox } from "./detect.ts";
import type { Sandbox, SandboxPolicy } from "./sandbox.ts";

/** What the model is told with each prompt submitted in plan mode. */
export const PLAN_MODE_NOTE =
  "[Plan mode] The user wants a plan, not changes. Only read-only tools run now (reading, listing, searching); " +
  "file edits and bash are refused. Investigate, then present a concrete step-by-step plan with the exit_plan_mode tool: " +
  "the user approves it (and you carry it out) or tells you what to change.";

/** How bash is confined in one pod. */
export interface PodSandbox {
  status: SandboxStatus;
  /** The sandbox kind when active. */
  kind?: Sandbox["kind"];
  /** What the bash tool wraps its commands with, when active. */
  bash?: { sandbox: Sandbox; policy: SandboxPolicy };
  /** For `unavailable`: why this machine has no sandbox (`bubblewrap is not installed`). */
  reason?: string;
  /**
   * Said once when bash is unconfined and will ask for every command. In the
   * words of the pod's options; a UI that has its own way to turn the sandbox
   * off says so from `status` and `reason` instead.
   */
  notice?: string;
}

export async function podSandbox(options: {
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
}): Promise<PodSandbox> {
  // `sandbox: false` from the embedding code is an explicit opt-out, like `"sandbox": false` in the config.
  if (!options.bash || !options.settings.enabled || options.sandbox === false) return { status: "disabled" };
  const found = options.sandbox ?? (await detectSandbox());
  if (!isSandbox(found)) {
    return {
      status: "unavailable",
      reason: found.reason,
      notice: `bash has no sandbox here: ${found.reason}. Every bash command will ask for approval (and is refused where no one can answer). To run bash unsandboxed without asking, turn the sandbox off in the config ("sandbox": false).`,
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
