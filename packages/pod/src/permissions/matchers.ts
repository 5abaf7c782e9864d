/**
 * The two kinds of rule patterns: a command glob for bash (`git status *`)
 * and a path glob (picomatch) for everything else.
 */
import picomatch from "picomatch";

/**
 * A command glob: `*` matches anything (slashes and spaces included), `?`
 * one character; a trailing ` *` also matches nothing, so `git status *`
 * covers `git status` itself.
 */
export function commandMatcher(glob: string): (command: string) => boolean {
  let re = "";
  const trimmed = glob.trim();
  const optionalTail = trimmed.endsWith(" *") && trimmed.length > 2;
  const body = optionalTail ? trimmed.slice(0, -2) : trimmed;
  for (const ch of body) {
    if (ch === "*") re += "[\\s\\S]*";
    else if (ch === "?") re += "[\\s\\S]";
    else re += ch.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  if (optionalTail) re += "(?:\\s[\\s\\S]*)?";
  const compiled = new RegExp(`^${re}$`);
  return (command) => compiled.test(command.trim());
}

/** A path or tool-name glob as a one-argument predicate (picomatch's matcher takes a second, truthy-index argument). */
export function pathMatcher(glob: string): (subject: string) => boolean {
  const isMatch = picomatch(glob, { dot: true });
  return (subject) => isMatch(subject);
}
