/**
 * bubblewrap, driven directly: the whole filesystem read-only, the scope's
 * write roots writable but for their protected paths (protected-paths.ts),
 * a private empty /tmp, fresh /dev and /proc in a new PID namespace (no
 * other process is visible, so no other process's environ either), and no
 * network unless allowed. We drive `bwrap` ourselves rather than through
 * @anthropic-ai/sandbox-runtime: we need exactly these mounts and
 * namespaces, which are a few dozen arguments, while that library brings
 * its own config model, proxy processes (socat) and global state to manage.
 *
 * A protected path that exists is mounted read-only over itself. One that
 * does not exist cannot be kept from being created unless something is
 * mounted there, so an empty read-only directory is (a tmpfs, remounted
 * read-only): nothing can be written, renamed or linked there, and git
 * ignores an empty directory, so `git status` and `git add -A` inside see
 * nothing new. bwrap makes the mount point on the host, where it shows as
 * an empty directory while the command runs; it is removed when the last
 * command of this process that uses it ends. git's `commondir` cannot be
 * stood in for (git refuses to run with one it cannot read): it is looked
 * at after the command instead and removed if the command made one.
 */
import { existsSync, lstatSync, rmdirSync, statSync, unlinkSync } from "node:fs";
import * as path from "node:path";
import { isInside } from "../fs/scoped-fs.ts";
import { type RootProtection, rootProtection } from "./protected-paths.ts";
import type { Sandbox, SandboxedCommand, SandboxPolicy } from "./sandbox.ts";

/** The arguments every bwrap run starts with: namespaces, a read-only root, fresh /dev, /proc and /tmp. */
export function bwrapBaseArgs(network: boolean): string[] {
  return [
    "--die-with-parent",
    // Run as root, bwrap would keep root's capabilities (mount, remount / read-write...): drop them all.
    "--cap-drop",
    "ALL",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    ...(network ? [] : ["--unshare-net"]),
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
}

/** The bwrap arguments for one policy and the protections of its write roots, up to (not including) the command. */
export function bwrapArgs(
  cwd: string,
  policy: SandboxPolicy,
  protections: readonly RootProtection[] = policy.writeRoots.map((root) => rootProtection(root)),
): string[] {
  const args = bwrapBaseArgs(policy.network);
  const roots = [...policy.writeRoots, ...(policy.readOnlyRoots ?? [])];
  // Only what exists: bwrap cannot create a mount point on the read-only root (and nothing is there to hide);
  // and nothing inside a place hidden already.
  const hidden = policy.hidden.filter(
    (h, i) => existsSync(h) && !policy.hidden.some((o, j) => j !== i && o !== h && isInside(o, h)),
  );
  const holdsRoot = (h: string) => roots.some((r) => isInside(h, r));
  // A hidden place that holds a root first: the root is bound again on top of it, still there and writable.
  for (const h of hidden) if (holdsRoot(h)) args.push("--tmpfs", h);
  // After /tmp, so a scope below it is still there.
  for (const root of policy.writeRoots) args.push("--bind", root, root);
  for (const root of policy.readOnlyRoots ?? []) args.push("--ro-bind", root, root);
  // After the write roots, so these mounts sit on top of them.
  for (const p of protections) {
    for (const existing of p.existing) args.push("--ro-bind", existing, existing);
    for (const missing of p.missing) args.push("--tmpfs", missing, "--remount-ro", missing);
  }
  // The other hidden places last, over the roots and protections that hold them: an empty
  // read-only directory, or an empty file, where they are.
  for (const h of hidden) {
    if (holdsRoot(h)) continue;
    if (statSync(h).isDirectory()) args.push("--tmpfs", h, "--remount-ro", h);
    else args.push("--ro-bind", "/dev/null", h);
  }
  args.push("--chdir", cwd, "--setenv", "TMPDIR", "/tmp");
  return args;
}

/** Placeholders this process made (their mount points on the host), with the commands using each. */
const placeholders = new Map<string, number>();

/**
 * True while `real` (an absolute path) is a placeholder a running command
 * of this process stands on: an empty directory on the host that nothing
 * may replace until the command ends (removing it would take the mount out
 * from under the command, which could then create the path after all).
 */
export function isSandboxPlaceholder(real: string): boolean {
  return placeholders.has(real);
}

export function bwrapSandbox(bwrap: string): Sandbox {
  return {
    kind: "bwrap",
    wrap(shell: string, line: string, cwd: string, policy: SandboxPolicy): SandboxedCommand {
      const protections = policy.writeRoots.map((root) => rootProtection(root));
      // A placeholder another running command of ours made looks like an existing path: it is ours, and in use.
      const used: string[] = [];
      for (const p of protections) {
        for (const missing of p.missing) used.push(missing);
        for (const existing of p.existing) if (placeholders.has(existing)) used.push(existing);
      }
      for (const p of used) placeholders.set(p, (placeholders.get(p) ?? 0) + 1);
      const watched = protections.flatMap((p) => p.watched);
      return {
        file: bwrap,
        args: [...bwrapArgs(cwd, policy, protections), "--", shell, "-c", line],
        release: () => {
          for (const p of used) {
            const left = (placeholders.get(p) ?? 1) - 1;
            if (left > 0) {
              placeholders.set(p, left);
              continue;
            }
            placeholders.delete(p);
            removeEmptyDir(p);
          }
          return removeCreated(watched);
        },
      };
    },
  };
}

/** Removes a placeholder if it is still the empty directory it was (anything else is left alone). */
function removeEmptyDir(p: string): void {
  try {
    rmdirSync(p);
  } catch {
    // Not empty, not a directory, or gone: not ours to remove.
  }
}

/** The git files watched rather than stood in for (see protected-paths.ts). */
const GIT_REDIRECTS = ["commondir", "config.worktree"];

/** Removes what the command made at paths it must not create; says what it removed. */
function removeCreated(watched: readonly string[]): string | undefined {
  const removed: string[] = [];
  for (const p of watched) {
    try {
      lstatSync(p);
    } catch {
      continue;
    }
    try {
      unlinkSync(p);
      removed.push(p);
    } catch {
      removed.push(`${p} (could not be removed: remove it by hand)`);
    }
  }
  if (removed.length === 0) return undefined;
  const names = removed.map((p) => path.basename(path.dirname(p)) + path.sep + path.basename(p));
  const git = removed.every((p) => GIT_REDIRECTS.includes(path.basename(p.replace(/ \(could not.*$/, ""))));
  const why = git
    ? "which would send git to other hooks and config outside the sandbox"
    : "which would run later, outside the sandbox";
  return `The command created ${names.join(", ")}, ${why}; yoi removed it.`;
}
