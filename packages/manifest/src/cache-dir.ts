import { homedir } from "node:os";
import * as path from "node:path";

/**
 * yoi's cache directory: `$XDG_CACHE_HOME/yoi`, else `~/.cache/yoi`. A
 * relative XDG_CACHE_HOME is invalid (XDG Base Directory spec) and ignored.
 * Undefined when there is no home directory either. Caches are things yoi
 * can lose and rebuild: the sandbox probe, the CLI's code caches.
 */
export function yoiCacheDir(
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, "yoi");
  const home = env.HOME || homedir();
  return home ? path.join(home, ".cache", "yoi") : undefined;
}
