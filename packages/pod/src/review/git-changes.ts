/**
 * The changes of the working tree under the scope root, as git sees them:
 * against HEAD, or against where the current branch left `base` (the
 * merge base, as `git diff base...HEAD` counts) plus what is not committed.
 * Untracked files (not ignored) count as added. For each file, its text
 * before and after (for drawing), and one unified patch of everything (for
 * a reviewer), both capped.
 */
import { lstat, readFile } from "node:fs/promises";
import * as path from "node:path";
import { YoiError } from "@yoi/manifest/errors";
import { runGit } from "../environment/git-run.ts";

/** Why the changes could not be read. */
export class GitChangesError extends YoiError<"not_a_repository" | "no_git" | "bad_base" | "git_failed"> {
  static override readonly marker: symbol = Symbol.for("yoi.pod.GitChangesError");
  override readonly name = "GitChangesError";
}

/** One changed file. Texts are absent for a binary or too large file, and on the side where it does not exist. */
export interface ChangedFile {
  /** Relative to the scope root. */
  path: string;
  status: "added" | "modified" | "deleted" | "untracked";
  before?: string;
  after?: string;
  binary: boolean;
}

export interface GitChanges {
  /** What the changes are against, for people: `HEAD`, or `main...HEAD (merge base 1a2b3c4)`. */
  against: string;
  files: ChangedFile[];
  /** Files left out past `maxFiles`. */
  moreFiles: number;
  /** The unified patch of all files, cut at `maxPatchBytes`. */
  patch: string;
  patchTruncated: boolean;
}

export interface GitChangesOptions {
  /** A branch, tag or commit: changes since the merge base with it. Default: against HEAD. */
  base?: string;
  timeoutMs?: number;
  maxFiles?: number;
  /** Largest file whose text is kept. */
  maxFileBytes?: number;
  maxPatchBytes?: number;
  env?: Readonly<Record<string, string | undefined>>;
}

/** git's empty tree: what an unborn branch is compared against. */
const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const STATUS: Record<string, ChangedFile["status"]> = {
  A: "added",
  M: "modified",
  D: "deleted",
  T: "modified",
};

const isBinary = (bytes: Buffer) => bytes.subarray(0, 8000).includes(0);

export async function gitChanges(root: string, options: GitChangesOptions = {}): Promise<GitChanges> {
  const maxFiles = options.maxFiles ?? 200;
  const maxFileBytes = options.maxFileBytes ?? 1024 * 1024;
  const maxPatchBytes = options.maxPatchBytes ?? 512 * 1024;
  const git = (args: string[], maxBytes = 4 * 1024 * 1024, okCodes?: number[]) =>
    runGit(args, {
      cwd: root,
      timeoutMs: options.timeoutMs ?? 30_000,
      maxBytes,
      ...(options.env ? { env: options.env } : {}),
      ...(okCodes ? { okCodes } : {}),
    });
  const must = async (args: string[], maxBytes?: number) => {
    const run = await git(args, maxBytes);
    if (run.kind === "no_git") throw new GitChangesError("no_git", "git is not installed (or not on PATH)");
    if (run.kind === "failed") {
      if (/not a git repository/i.test(run.reason))
        throw new GitChangesError("not_a_repository", `${root} is not in a git repository`);
      throw new GitChangesError("git_failed", `git ${args[0]} failed: ${run.reason}`);
    }
    return run;
  };

  const head = await git(["rev-parse", "--verify", "-q", "HEAD"]);
  if (head.kind === "no_git") throw new GitChangesError("no_git", "git is not installed (or not on PATH)");
  if (head.kind === "failed" && /not a git repository/i.test(head.reason))
    throw new GitChangesError("not_a_repository", `${root} is not in a git repository`);
  const unborn = head.kind !== "ok";
  let rev = unborn ? EMPTY_TREE : "HEAD";
  let against = unborn ? "an empty repository (no commits yet)" : "HEAD";
  if (options.base !== undefined) {
    const base = options.base;
    // A name that git would read as an option is never passed on.
    const known =
      !base.startsWith("-") && (await git(["rev-parse", "--verify", "-q", `${base}^{commit}`])).kind === "ok";
    if (!known)
      throw new GitChangesError(
        "bad_base",
        `"${base}" is not a branch, tag or commit in this repository (try a branch name like main, or a commit hash)`,
      );
    if (unborn) throw new GitChangesError("bad_base", "there are no commits yet to compare a base with");
    const mergeBase = await must(["merge-base", base, "HEAD"]);
    rev = mergeBase.stdout.toString("utf8").trim();
    against = `${base}...HEAD (merge base ${rev.slice(0, 7)})`;
  }

  // `--relative`: only what lies under the scope root, with paths relative to it.
  const names = await must(["diff", "--name-status", "-z", "--no-renames", "--relative", rev]);
  const untracked = await must(["ls-files", "--others", "--exclude-standard", "-z"]);
  const listed: { path: string; status: ChangedFile["status"] }[] = [];
  const fields = names.stdout.toString("utf8").split("\0");
  for (let i = 0; i + 1 < fields.length; i += 2)
    listed.push({ path: fields[i + 1]!, status: STATUS[fields[i]!.charAt(0)] ?? "modified" });
  for (const p of untracked.stdout.toString("utf8").split("\0"))
    if (p !== "") listed.push({ path: p, status: "untracked" });
  listed.sort((a, b) => a.path.localeCompare(b.path));

  const files: ChangedFile[] = [];
  for (const entry of listed.slice(0, maxFiles)) {
    const file: ChangedFile = { ...entry, binary: false };
    if (entry.status === "modified" || entry.status === "deleted") {
      // `rev:./path` names the path relative to the cwd (the scope root), not the repository's top.
      const shown = await git(["show", `${rev}:./${entry.path}`], maxFileBytes + 1);
      if (shown.kind === "ok") {
        if (isBinary(shown.stdout)) file.binary = true;
        else if (!shown.truncated) file.before = shown.stdout.toString("utf8");
      }
    }
    if (entry.status !== "deleted") {
      const full = path.join(root, entry.path);
      // A link is shown as a link: following it could read outside the scope.
      const regular = await lstat(full).then(
        (st) => st.isFile(),
        () => false,
      );
      const bytes = regular ? await readFile(full).catch(() => undefined) : undefined;
      if (bytes !== undefined) {
        if (isBinary(bytes)) file.binary = true;
        else if (bytes.length <= maxFileBytes) file.after = bytes.toString("utf8");
      }
    }
    files.push(file);
  }

  const diff = await must(
    ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--relative", rev],
    maxPatchBytes,
  );
  let patch = diff.stdout.toString("utf8");
  let patchTruncated = diff.truncated;
  for (const file of files) {
    if (file.status !== "untracked" || patchTruncated) continue;
    const body = file.binary ? "Binary file\n" : newFilePatch(file.after ?? "");
    const block = `diff --git a/${file.path} b/${file.path}\nnew file (untracked)\n--- /dev/null\n+++ b/${file.path}\n${body}`;
    if (Buffer.byteLength(patch) + Buffer.byteLength(block) > maxPatchBytes) patchTruncated = true;
    else patch += block;
  }
  return { against, files, moreFiles: Math.max(0, listed.length - maxFiles), patch, patchTruncated };
}

function newFilePatch(text: string): string {
  if (text === "") return "";
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
  return `@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join("\n")}\n`;
}
