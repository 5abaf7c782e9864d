/**
 * Tab completion for the prompt: `@path` completes files and directories
 * inside the scope (listed through ScopedFs, so nothing outside the roots
 * and no symlink leading out is offered), `/` completes slash commands.
 */
import type { ScopedFs } from "@yoi/pod";
import type { SlashCommand } from "./slash-commands.ts";

/** Directories not worth offering unless typed explicitly. */
const NOISE = new Set([".git", "node_modules"]);

export type Completion = [string[], string];

export async function complete(
  line: string,
  fs: ScopedFs,
  commands: readonly Pick<SlashCommand, "name">[] = [],
): Promise<Completion> {
  if (/^\/\S*$/.test(line)) {
    const names = commands.map((c) => c.name);
    const hits = names.filter((c) => c.startsWith(line));
    return [hits.length > 0 ? hits : names, line];
  }
  const at = /(?:^|\s)@([^\s"]*)$/.exec(line);
  if (!at) return [[], line];
  const partial = at[1] ?? "";
  const token = `@${partial}`;
  const slash = partial.lastIndexOf("/");
  const dir = slash === -1 ? "" : partial.slice(0, slash + 1);
  const prefix = partial.slice(slash + 1);
  let entries: { name: string; kind: string }[];
  try {
    entries = (await fs.readdir(dir === "" ? "." : dir)).entries;
  } catch {
    return [[], token];
  }
  const hits = entries
    .filter((e) => e.name.startsWith(prefix))
    .filter((e) => prefix.startsWith(".") || !e.name.startsWith("."))
    .filter((e) => prefix !== "" || !NOISE.has(e.name))
    .map((e) => `@${dir}${e.name}${e.kind === "directory" ? "/" : ""}`);
  return [hits, token];
}
