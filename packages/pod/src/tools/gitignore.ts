/**
 * `.gitignore` rules for walks (glob, grep), the way git reads them: blank
 * lines and `#` comments skipped, `!` re-includes, a trailing `/` matches
 * directories only, a pattern with a `/` elsewhere is anchored to its
 * file's directory, one without matches a name at any depth; the last
 * matching rule wins, and an ignored directory is not entered at all.
 */
import picomatch from "picomatch";

export interface IgnoreRule {
  /** Directory of the .gitignore, relative to the walk base ("" for the base itself or an ancestor). */
  base: string;
  /** For a .gitignore above the walk base: the base's path relative to it (prepended to subjects). */
  prefix: string;
  negate: boolean;
  dirOnly: boolean;
  anchored: boolean;
  match: (subject: string) => boolean;
}

/** Parses one .gitignore file. */
export function parseGitignore(text: string, base: string, prefix = ""): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (let line of text.split(/\r?\n/)) {
    if (line === "" || line.startsWith("#")) continue;
    line = line.replace(/(?<!\\)\s+$/, "");
    if (line === "") continue;
    let negate = false;
    if (line.startsWith("!")) {
      negate = true;
      line = line.slice(1);
    } else if (line.startsWith("\\!") || line.startsWith("\\#")) {
      line = line.slice(1);
    }
    let dirOnly = false;
    if (line.endsWith("/")) {
      dirOnly = true;
      line = line.slice(0, -1);
    }
    const anchored = line.includes("/");
    if (line.startsWith("/")) line = line.slice(1);
    if (line === "") continue;
    const isMatch = picomatch(line, { dot: true });
    rules.push({ base, prefix, negate, dirOnly, anchored, match: (s) => isMatch(s) });
  }
  return rules;
}

/** Whether `rel` (relative to the walk base, `/`-separated) is ignored by `rules` (in file order, outer first). */
export function isIgnored(rules: readonly IgnoreRule[], rel: string, isDir: boolean): boolean {
  let ignored = false;
  for (const rule of rules) {
    if (rule.dirOnly && !isDir) continue;
    let sub: string;
    if (rule.prefix !== "") sub = `${rule.prefix}/${rel}`;
    else if (rule.base === "") sub = rel;
    else if (rel.startsWith(`${rule.base}/`)) sub = rel.slice(rule.base.length + 1);
    else continue;
    const subject = rule.anchored ? sub : sub.slice(sub.lastIndexOf("/") + 1);
    if (rule.match(subject)) ignored = !rule.negate;
  }
  return ignored;
}
