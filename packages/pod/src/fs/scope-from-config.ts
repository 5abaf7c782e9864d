import { homedir } from "node:os";
import * as path from "node:path";
import { type Config, privateUserFiles } from "@yoi/manifest";
import { ScopedFs } from "./scoped-fs.ts";

/**
 * The scope a config gives a session started in `cwd`: the root is
 * `scope.root` (default: `cwd`), writable unless `scope.writeRoots` says
 * otherwise, plus `scope.readRoots`; relative entries resolve against the
 * root, and relative paths start there. `hidden`: private files and
 * directories no tool may open even inside the roots (see `privatePaths`).
 */
export function scopeFromConfig(
  scope: Config["scope"],
  cwd: string,
  hidden: readonly string[] = [],
): Promise<ScopedFs> {
  const root = path.resolve(cwd, scope.root ?? ".");
  const resolveAll = (dirs: readonly string[] | undefined) => (dirs ?? []).map((d) => path.resolve(root, d));
  return ScopedFs.create({
    writeRoots: scope.writeRoots ? resolveAll(scope.writeRoots) : [root],
    readRoots: resolveAll(scope.readRoots),
    cwd: root,
    hidden,
  });
}

/**
 * What no tool of a session may open, whatever its scope holds: yoi's own
 * (see {@link yoiPrivatePaths}) and the credential stores of the home
 * directory ({@link HOME_CREDENTIAL_STORES}). They matter where a root holds
 * them (a session started in the home directory); elsewhere the scope keeps
 * them out already.
 */
export function privatePaths(dataDir: string, home: string = homedir()): string[] {
  return [...yoiPrivatePaths(dataDir, home), ...HOME_CREDENTIAL_STORES.map((p) => path.join(home, p))];
}

/**
 * yoi's own private files: the session store of `dataDir` (every project's
 * conversations and tool outputs) and the user's saved keys and prompt
 * history. The bash sandbox hides these wherever they are.
 */
export function yoiPrivatePaths(dataDir: string, home: string = homedir()): string[] {
  return [path.join(dataDir, "sessions"), path.join(dataDir, "blobs"), ...privateUserFiles(home)];
}

/**
 * Where common tools keep the user's credentials, below the home directory:
 * private keys, cloud and registry tokens, saved passwords. Hidden from a
 * session's tools (sandboxed bash included) only where a write root holds
 * them: a command the user approves in a project session still reads them
 * as it always could (`git push` over ssh with the sandbox's network on).
 */
export const HOME_CREDENTIAL_STORES: readonly string[] = [
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".config/gcloud",
  ".kube",
  ".docker/config.json",
  ".config/gh/hosts.yml",
  ".password-store",
  ".local/share/keyrings",
  ".netrc",
  ".git-credentials",
  ".config/git/credentials",
  ".npmrc",
  ".pypirc",
];
