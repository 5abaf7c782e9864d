/**
 * Paths inside a writable root that nothing the model runs may create,
 * change, rename or link: what is written there runs later, outside the
 * sandbox and without a question — git hooks and git config (hooks run on
 * commit; `core.fsmonitor`, `core.hooksPath`, `core.sshCommand` or
 * `diff.external` run on an ordinary `git status` or `diff`), editor and
 * agent settings (a VS Code task can run on folder open; `.mcp.json`,
 * `.claude/` and yoi's own `.yoi/` start servers and hooks), shell start-up
 * files, direnv's `.envrc` and mise's config (run on a shell start or a
 * `cd`), the hooks and configs of git hook runners (husky's
 * `.husky/pre-commit`; lefthook's and pre-commit's configs name the
 * commands a commit runs), and yoi's own cache, whose code packs the next
 * `yoi` runs.
 *
 * The list follows what @anthropic-ai/sandbox-runtime denies inside its
 * write roots (its dangerous files and directories, git hooks and config,
 * git's `commondir` redirect) and codex's read-only `.git`, narrowed for
 * `.git` to what makes git run code so that ordinary git work (status,
 * add, commit, branch, checkout, stash) goes on inside the sandbox, and
 * widened to every agent and editor directory named by the issue that
 * asked for it (`.zed`, all of `.claude`, `.yoi`) plus `.envrc` and the
 * hook runners.
 *
 * The bash sandbox protects these names at the top of each write root
 * (and a `.git` file's target, git's configured `core.hooksPath` when it
 * lies in a write root, and yoi's cache where a root holds it); the edit
 * tools ask for them at any depth.
 */
import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import * as path from "node:path";
import { yoiCacheDir } from "@yoi/manifest";

/** Directories at the top of a write root whose whole tree is protected. */
export const PROTECTED_DIRS: readonly string[] = [
  ".vscode",
  ".idea",
  ".zed",
  ".claude",
  ".yoi",
  ".husky",
  ".lefthook",
  ".mise",
];
/** Files at the top of a write root that are protected. */
export const PROTECTED_FILES: readonly string[] = [
  ".gitmodules",
  ".gitconfig",
  ".mcp.json",
  ".bashrc",
  ".bash_profile",
  ".zshrc",
  ".zprofile",
  ".profile",
  ".envrc",
  "lefthook.yml",
  "lefthook.yaml",
  ".lefthook.yml",
  ".lefthook.yaml",
  "lefthook-local.yml",
  ".pre-commit-config.yaml",
  "mise.toml",
  ".mise.toml",
  "mise.local.toml",
  ".mise.local.toml",
];

/**
 * Paths of the user's home directory that make code run later without
 * anyone asking (in every shell, at login, over ssh, first on PATH, in
 * git everywhere, when the editor starts). They matter only where a write
 * root holds the home directory (yoi started in ~ or above it): a project's
 * own scope never reaches them. Directories here, then files.
 */
export const HOME_PROTECTED_DIRS: readonly string[] = [
  ".ssh",
  ".gnupg",
  ".config/git",
  ".config/autostart",
  ".config/systemd",
  ".config/environment.d",
  ".config/fish",
  ".config/nvim",
  ".local/bin",
  ".emacs.d",
];
export const HOME_PROTECTED_FILES: readonly string[] = [
  ".bash_login",
  ".bash_logout",
  ".zshenv",
  ".zlogin",
  ".pam_environment",
  ".xprofile",
  ".xsessionrc",
  ".npmrc",
  ".vimrc",
  ".emacs",
];

/** Why a path is protected, in a few words for a question and a denial. */
const WHY = {
  git: "git runs what its hooks and config name, later and outside the sandbox",
  hooks: "the git hook runner runs what it names on the next commit, outside the sandbox",
  editor: "editor settings can run tasks when the folder is opened",
  agent: "agent settings start servers and hooks the next time an agent starts here",
  shell: "shell start-up files run in every new shell",
  direnv: "direnv runs .envrc on every cd into the folder",
  mise: "mise runs the scripts and hooks its config names when a shell enters the folder",
  home: "your home directory's start-up, ssh, git and PATH files run later, outside the sandbox",
  cache: "yoi runs the code it caches there at its next start",
} as const;

const REASONS: Record<string, string> = {
  ".git": WHY.git,
  ".gitmodules": WHY.git,
  ".gitconfig": WHY.git,
  ".vscode": WHY.editor,
  ".idea": WHY.editor,
  ".zed": WHY.editor,
  ".claude": WHY.agent,
  ".yoi": WHY.agent,
  ".mcp.json": WHY.agent,
  ".bashrc": WHY.shell,
  ".bash_profile": WHY.shell,
  ".zshrc": WHY.shell,
  ".zprofile": WHY.shell,
  ".profile": WHY.shell,
  ".envrc": WHY.direnv,
  ".husky": WHY.hooks,
  ".lefthook": WHY.hooks,
  "lefthook.yml": WHY.hooks,
  "lefthook.yaml": WHY.hooks,
  ".lefthook.yml": WHY.hooks,
  ".lefthook.yaml": WHY.hooks,
  "lefthook-local.yml": WHY.hooks,
  ".pre-commit-config.yaml": WHY.hooks,
  ".mise": WHY.mise,
  "mise.toml": WHY.mise,
  ".mise.toml": WHY.mise,
  "mise.local.toml": WHY.mise,
  ".mise.local.toml": WHY.mise,
};

/**
 * Why writing `real` (an absolute path) is protected, or undefined when it
 * is not. Checked against the part of the path below the write root that
 * holds it, at any depth: a nested repository's `.git`, a sub-project's
 * `.vscode` or `.envrc` are protected as well. Every path inside a `.git`
 * directory counts (the edit tools never need to write there).
 */
export function protectedPathReason(real: string, writeRoots: readonly string[]): string | undefined {
  const root = writeRoots
    .filter((r) => real === r || real.startsWith(r.endsWith(path.sep) ? r : `${r}${path.sep}`))
    .sort((a, b) => b.length - a.length)[0];
  const rel = root === undefined ? real : path.relative(root, real);
  const parts = rel.split(path.sep).filter((p) => p !== "" && p !== ".");
  for (const [i, part] of parts.entries()) {
    const name = part.toLowerCase();
    const reason = REASONS[name];
    if (reason === undefined) continue;
    const isLast = i === parts.length - 1;
    // A protected file name is protected as a file (its last part); a directory name anywhere on the way.
    if (PROTECTED_FILES.includes(name) && !isLast) continue;
    return `${parts.slice(0, i + 1).join("/")} is protected: ${reason}`;
  }
  return homePathReason(real, writeRoots) ?? cachePathReason(real, writeRoots);
}

/** The reason for a path in yoi's own cache, where a write root holds it. */
function cachePathReason(real: string, writeRoots: readonly string[]): string | undefined {
  const cache = realCacheDir();
  if (cache === undefined || !isWithin(real, cache) || !writeRoots.some((r) => isWithin(cache, r)))
    return undefined;
  const home = realHome();
  const shown = home !== "" && isWithin(cache, home) ? `~/${path.relative(home, cache)}` : cache;
  return `${shown} is protected: ${WHY.cache}`;
}

/**
 * yoi's cache directory (`~/.cache/yoi`) as a real path: the code packs
 * every start runs (apps/cli's start-up) and the sandbox probe's answer.
 * A command that wrote there would plant code run outside the sandbox.
 */
function realCacheDir(): string | undefined {
  const cache = yoiCacheDir();
  if (cache === undefined) return undefined;
  try {
    return realpathSync(cache);
  } catch {
    // Not made yet: where it would be, below the real home when it is there.
    const home = homedir();
    return isWithin(cache, home) ? path.join(realHome(), path.relative(home, cache)) : cache;
  }
}

/** The reason for a path of the home directory's own list, where a write root holds the home directory. */
function homePathReason(real: string, writeRoots: readonly string[], home = realHome()): string | undefined {
  if (home === "" || !isWithin(real, home) || !writeRoots.some((r) => isWithin(home, r))) return undefined;
  const rel = path.relative(home, real).split(path.sep).join("/");
  const hit = [...HOME_PROTECTED_DIRS, ...HOME_PROTECTED_FILES].find(
    (p) => rel === p || (HOME_PROTECTED_DIRS.includes(p) && rel.startsWith(`${p}/`)),
  );
  return hit === undefined ? undefined : `~/${hit} is protected: ${WHY.home}`;
}

/** What the sandbox does for one write root. */
export interface RootProtection {
  /** Protected paths that exist now: mounted read-only over themselves. */
  existing: string[];
  /** Protected paths that do not exist: a read-only empty directory is mounted there for the command. */
  missing: string[];
  /**
   * Files that do not exist and are not stood in for: git redirect files
   * (git refuses to run with an unreadable `commondir`) and the home
   * directory's start-up files (an empty directory in their place would
   * clutter ~ and break the shells that read them). Looked at after the
   * command, and removed if it made one.
   */
  watched: string[];
}

/**
 * The protections of one write root, from what is on disk now. `home`: the
 * user's home directory, whose own list is added when the root holds it.
 */
export function rootProtection(root: string, home: string = realHome()): RootProtection {
  const out: RootProtection = { existing: [], missing: [], watched: [] };
  const add = (p: string) => {
    // A symlink is protected where it points (the mount follows it); a dangling one cannot be mounted over.
    const kind = entryKind(p);
    if (kind === "missing") out.missing.push(p);
    else if (kind !== "dangling") out.existing.push(p);
  };
  for (const name of [...PROTECTED_DIRS, ...PROTECTED_FILES]) add(path.join(root, name));
  if (home !== "" && isWithin(home, root)) addHome(home, root, out, add);
  const cache = realCacheDir();
  if (cache !== undefined && cache !== root && isWithin(cache, root))
    addDir(root, path.relative(root, cache), out, add);
  const dotGit = path.join(root, ".git");
  const kind = entryKind(dotGit);
  if (kind === "file") {
    // A worktree or submodule checkout: the pointer itself, and the hooks and config of where it points.
    out.existing.push(dotGit);
    const target = gitdirTarget(dotGit);
    if (target !== undefined && isWithin(target, root)) addGitDir(target, root, out, add);
  } else if (kind === "directory") {
    addGitDir(dotGit, root, out, add);
  } else if (kind === "missing" && !insideWorkTree(root)) {
    // No repository here or above: `git init` would make one whose config (core.fsmonitor, hooks) the
    // model writes and the user's next git command runs. The root's .git is stood in for like the
    // others; inside a repository above, git finds that one and a .git here would split it, so not then.
    out.missing.push(dotGit);
  }
  return out;
}

/**
 * The home directory's protections, for a root that holds it: its own list,
 * and the root's list again under it when the root is above it (yoi in /).
 * A missing directory is stood in for (its missing parents with it); a
 * missing file is watched.
 */
function addHome(home: string, root: string, out: RootProtection, add: (p: string) => void): void {
  const dirs = home === root ? HOME_PROTECTED_DIRS : [...PROTECTED_DIRS, ...HOME_PROTECTED_DIRS];
  const files = home === root ? HOME_PROTECTED_FILES : [...PROTECTED_FILES, ...HOME_PROTECTED_FILES];
  for (const rel of dirs) addDir(home, rel, out, add);
  for (const rel of files) {
    const file = path.join(home, rel);
    const kind = entryKind(file);
    if (kind === "missing") out.watched.push(file);
    else if (kind !== "dangling") out.existing.push(file);
  }
}

/**
 * The directory `rel` below `base`, existing or stood in for: `.local/bin`
 * without `.local` gets its placeholder where the path first goes missing.
 */
function addDir(base: string, rel: string, out: RootProtection, add: (p: string) => void): void {
  let at = base;
  for (const part of rel.split("/")) {
    at = path.join(at, part);
    if (entryKind(at) === "missing") break;
  }
  if (!out.missing.includes(at) && !out.existing.includes(at)) add(at);
}

/** The home directory as the roots are given (real paths), or "" when there is none. */
function realHome(): string {
  const home = homedir();
  try {
    return realpathSync(home);
  } catch {
    return home;
  }
}

/** Whether a directory above `dir` holds a `.git` (dir is inside an enclosing work tree). */
function insideWorkTree(dir: string): boolean {
  for (let up = path.dirname(dir); ; up = path.dirname(up)) {
    if (entryKind(path.join(up, ".git")) !== "missing") return true;
    if (path.dirname(up) === up) return false;
  }
}

function addGitDir(gitDir: string, root: string, out: RootProtection, add: (p: string) => void): void {
  add(path.join(gitDir, "hooks"));
  const config = path.join(gitDir, "config");
  add(config);
  for (const name of ["commondir", "config.worktree"]) {
    const file = path.join(gitDir, name);
    if (entryKind(file) === "missing") out.watched.push(file);
    else out.existing.push(file);
  }
  // Submodules keep their git directories under modules/: each one's hooks and config.
  for (const sub of submoduleGitDirs(path.join(gitDir, "modules"), 3)) {
    add(path.join(sub, "hooks"));
    add(path.join(sub, "config"));
  }
  // A hooks directory the config moved into the project (husky's `.husky`) holds hooks too.
  const hooksPath = configuredHooksPath(config);
  if (hooksPath !== undefined) {
    const dir = path.resolve(root, hooksPath);
    if (isWithin(dir, root) && dir !== root && entryKind(dir) === "directory") out.existing.push(dir);
  }
}

type EntryKind = "missing" | "dangling" | "file" | "directory" | "other";

function entryKind(p: string): EntryKind {
  try {
    const link = lstatSync(p);
    if (!link.isSymbolicLink()) return link.isDirectory() ? "directory" : link.isFile() ? "file" : "other";
  } catch {
    return "missing";
  }
  try {
    const target = statSync(p);
    return target.isDirectory() ? "directory" : target.isFile() ? "file" : "other";
  } catch {
    return "dangling";
  }
}

/** The directory a `.git` file points at (`gitdir: <path>`), absolute. */
function gitdirTarget(file: string): string | undefined {
  try {
    const text = readFileSync(file, "utf8").slice(0, 4096);
    const match = /^gitdir:\s*(.+?)\s*$/m.exec(text);
    return match?.[1] === undefined ? undefined : path.resolve(path.dirname(file), match[1]);
  } catch {
    return undefined;
  }
}

/** Git directories under `modules` (a submodule's may nest: `modules/a/modules/b`). */
function submoduleGitDirs(modules: string, depth: number): string[] {
  if (depth === 0 || entryKind(modules) !== "directory") return [];
  const out: string[] = [];
  let names: string[];
  try {
    names = readdirSync(modules);
  } catch {
    return [];
  }
  for (const name of names) {
    const dir = path.join(modules, name);
    if (entryKind(path.join(dir, "HEAD")) === "file") {
      out.push(dir);
      out.push(...submoduleGitDirs(path.join(dir, "modules"), depth - 1));
    } else if (entryKind(dir) === "directory") {
      // A submodule named with a slash (`libs/a`) nests one level per part.
      out.push(...submoduleGitDirs(dir, depth - 1));
    }
  }
  return out;
}

/** `core.hooksPath` of a git config file, when set there. */
function configuredHooksPath(config: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(config, "utf8");
  } catch {
    return undefined;
  }
  let section = "";
  let found: string | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const header = /^\[\s*([^\s\]"]+)/.exec(line);
    if (header?.[1] !== undefined) {
      section = header[1].toLowerCase();
      continue;
    }
    const entry = /^hookspath\s*=\s*(.*)$/i.exec(line);
    if (section === "core" && entry?.[1] !== undefined) found = entry[1].replace(/^"(.*)"$/, "$1").trim();
  }
  return found === "" ? undefined : found;
}

function isWithin(p: string, root: string): boolean {
  const rel = path.relative(root, p);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}
