/**
 * macOS: sandbox-exec with a small profile: everything allowed except file
 * writes outside the write roots and the temp dirs, and the network unless
 * allowed. Untested here (no macOS machine in CI), so kept deliberately
 * small. Unlike bubblewrap it cannot hide other processes.
 */
import { rootProtection } from "./protected-paths.ts";
import type { Sandbox, SandboxedCommand, SandboxPolicy } from "./sandbox.ts";

function quote(path: string): string {
  return `"${path.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** The sandbox profile (SBPL) for a policy. */
export function seatbeltProfile(policy: SandboxPolicy): string {
  const writable = [...policy.writeRoots, "/private/tmp", "/private/var/folders", "/dev"];
  const lines = [
    "(version 1)",
    "(allow default)",
    "(deny file-write*)",
    `(allow file-write* ${writable.map((p) => `(subpath ${quote(p)})`).join(" ")})`,
  ];
  // Protected paths inside the write roots (protected-paths.ts), existing or not: a later deny wins.
  const denied = policy.writeRoots.flatMap((root) => {
    const p = rootProtection(root);
    return [...p.existing, ...p.missing, ...p.watched];
  });
  if (denied.length > 0)
    lines.push(
      `(deny file-write* ${denied.map((p) => `(literal ${quote(p)}) (subpath ${quote(p)})`).join(" ")})`,
    );
  for (const hidden of policy.hidden) lines.push(`(deny file-read* file-write* (subpath ${quote(hidden)}))`);
  if (!policy.network) lines.push("(deny network*)");
  return lines.join("\n");
}

export function seatbeltSandbox(sandboxExec = "/usr/bin/sandbox-exec"): Sandbox {
  return {
    kind: "seatbelt",
    wrap(shell: string, line: string, _cwd: string, policy: SandboxPolicy): SandboxedCommand {
      return { file: sandboxExec, args: ["-p", seatbeltProfile(policy), shell, "-c", line] };
    },
  };
}
