/**
 * bubblewrap, driven directly: the whole filesystem read-only, the scope's
 * write roots writable, a private empty /tmp, fresh /dev and /proc in a new
 * PID namespace (no other process is visible, so no other process's environ
 * either), and no network unless allowed. We drive `bwrap` ourselves rather
 * than through @anthropic-ai/sandbox-runtime: we need exactly these mounts
 * and namespaces, which are a dozen arguments, while that library brings its
 * own config model, proxy processes (socat) and global state to manage.
 */
import { existsSync } from "node:fs";
import type { Sandbox, SandboxedCommand, SandboxPolicy } from "./sandbox.ts";

/** The bwrap arguments for one policy, up to (not including) the command. */
export function bwrapArgs(cwd: string, policy: SandboxPolicy): string[] {
  const args = [
    "--die-with-parent",
    // Run as root, bwrap would keep root's capabilities (mount, remount / read-write...): drop them all.
    "--cap-drop",
    "ALL",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
  ];
  if (!policy.network) args.push("--unshare-net");
  // Only what exists: bwrap cannot create a mount point on the read-only root (and nothing is there to hide).
  for (const dir of policy.hidden) if (existsSync(dir)) args.push("--tmpfs", dir);
  // After /tmp and the hidden dirs, so a scope below either is still there and writable.
  for (const root of policy.writeRoots) args.push("--bind", root, root);
  args.push("--chdir", cwd, "--setenv", "TMPDIR", "/tmp");
  return args;
}

export function bwrapSandbox(bwrap: string): Sandbox {
  return {
    kind: "bwrap",
    wrap(shell: string, line: string, cwd: string, policy: SandboxPolicy): SandboxedCommand {
      return { file: bwrap, args: [...bwrapArgs(cwd, policy), "--", shell, "-c", line] };
    },
  };
}
