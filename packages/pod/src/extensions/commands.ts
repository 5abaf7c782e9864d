/**
 * Custom slash commands: Markdown files in `.yoi/commands/` (the project's)
 * and `~/.yoi/commands/` (the user's). `review.md` is `/review`;
 * `git/commit.md` is `/git:commit`. Optional front matter:
 *
 * ```markdown
 * ---
 * description: Review a file for bugs
 * argument-hint: <file> [focus]
 * allowed-tools: [read_file, grep, "mcp__fs__*"]
 * ---
 * Review @$1 and look closely at $2. Everything given: $ARGUMENTS
 * ```
 *
 * `$ARGUMENTS` is everything after the command, `$1..$n` single words
 * (the last placeholder does not take the rest). `@path` refs in the body
 * are attached like typed ones when the expanded text is submitted.
 * `allowed-tools` (names or globs) run without asking during that turn;
 * a deny rule still wins. Only the user's own commands may do that: a
 * repository cannot widen what runs without asking (its `allowed-tools`
 * is ignored, with a notice; permission rules, which need the project's
 * trust, are the way). A project command overrides a user command of the
 * same name.
 */
import { readdir, readFile } from "node:fs/promises";
import * as path from "node:path";
import { errorMessage } from "@yoi/manifest/errors";
import { FrontMatterError, parseFrontMatter } from "./front-matter.ts";

/** Where an extension file comes from. */
export type ExtensionSource = "project" | "user";

export interface CustomCommand {
  /** Without the slash: `review`, `git:commit`. */
  name: string;
  description: string;
  /** Shown after the name in /help (`argument-hint`). */
  argumentHint?: string;
  /** Tool names or globs allowed without asking while the command's turn runs (user commands only). */
  allowedTools: string[];
  source: ExtensionSource;
  file: string;
  /** The Markdown body (the prompt template). */
  body: string;
}

/** A file that could not be used, with one message naming it. */
export interface ExtensionProblem {
  file: string;
  message: string;
  /** The file is still used (only part of it was refused). Default: the file is skipped. */
  kept?: boolean;
}

export interface ExtensionDirs {
  /** The project root (`.yoi/` is below it). */
  projectDir: string;
  /** The user's home (`.yoi/` is below it). */
  homeDir: string;
}

const NAME_PART = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
/** Names the CLI keeps for itself. */
export const RESERVED_COMMANDS = new Set([
  "help",
  "exit",
  "quit",
  "compact",
  "sessions",
  "resume",
  "model",
  "mcp",
  "skills",
]);
const MAX_DEPTH = 3;

/** Loads both directories; a broken file is a problem, the others still load. */
export async function loadCommands(
  dirs: ExtensionDirs,
): Promise<{ commands: CustomCommand[]; problems: ExtensionProblem[] }> {
  const problems: ExtensionProblem[] = [];
  const byName = new Map<string, CustomCommand>();
  // User first, then project: the project's command of the same name wins.
  for (const [source, base] of [
    ["user", dirs.homeDir],
    ["project", dirs.projectDir],
  ] as const) {
    const root = path.join(base, ".yoi", "commands");
    for (const file of await markdownFiles(root)) {
      const rel = path.relative(root, file).slice(0, -3).split(path.sep);
      if (!rel.every((p) => NAME_PART.test(p))) {
        problems.push({
          file,
          message: "the file name makes no command name (use letters, digits, '.', '_' or '-')",
        });
        continue;
      }
      const name = rel.join(":");
      if (RESERVED_COMMANDS.has(name)) {
        problems.push({ file, message: `/${name} is a built-in command; rename the file` });
        continue;
      }
      try {
        const command = await readCommand(file, name, source);
        if (source === "project" && command.allowedTools.length > 0) {
          problems.push({
            file,
            message: `allowed-tools (${command.allowedTools.join(", ")}) is ignored for a project's command: a repository cannot approve tools for itself (use permission rules, or put the command in ~/.yoi/commands)`,
            kept: true,
          });
          command.allowedTools = [];
        }
        byName.set(name, command);
      } catch (error) {
        problems.push({ file, message: errorMessage(error) });
      }
    }
  }
  return { commands: [...byName.values()].sort((a, b) => a.name.localeCompare(b.name)), problems };
}

async function readCommand(file: string, name: string, source: ExtensionSource): Promise<CustomCommand> {
  const { data, body } = await parseFrontMatter(await readFile(file, "utf8"));
  const description = optionalString(data, "description");
  const argumentHint = optionalString(data, "argument-hint");
  const allowed = data["allowed-tools"];
  let allowedTools: string[] = [];
  if (typeof allowed === "string") allowedTools = allowed.split(/[\s,]+/).filter((t) => t !== "");
  else if (Array.isArray(allowed) && allowed.every((t) => typeof t === "string")) allowedTools = allowed;
  else if (allowed !== undefined && allowed !== null)
    throw new FrontMatterError("allowed-tools: expected a list of tool names, like [read_file, grep]");
  if (body.trim() === "") throw new FrontMatterError("the command has no text after its front matter");
  return {
    name,
    description: description ?? firstLine(body),
    ...(argumentHint !== undefined ? { argumentHint } : {}),
    allowedTools,
    source,
    file,
    body,
  };
}

function optionalString(data: Record<string, unknown>, key: string): string | undefined {
  const value = data[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" && typeof value !== "number")
    throw new FrontMatterError(`${key}: expected text, found ${JSON.stringify(value)}`);
  return String(value).trim();
}

function firstLine(body: string): string {
  const line = body.split("\n").find((l) => l.trim() !== "") ?? "";
  const text = line.replace(/^#+\s*/, "").trim();
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** `.md` files below `root`, a few levels deep, sorted; none when it does not exist. */
async function markdownFiles(root: string, depth = 0): Promise<string[]> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = await readdir(root, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const full = path.join(root, entry.name);
    if (entry.isDirectory() && depth < MAX_DEPTH) out.push(...(await markdownFiles(full, depth + 1)));
    else if (entry.isFile() && entry.name.endsWith(".md")) out.push(full);
  }
  return out;
}

/**
 * The text a command submits: `$ARGUMENTS` becomes `args` as typed, `$1..$n`
 * its words (missing ones become empty). Without any placeholder, the
 * arguments are appended after a blank line, so they are never lost.
 */
export function expandCommand(command: Pick<CustomCommand, "body">, args: string): string {
  const words = args.trim() === "" ? [] : args.trim().split(/\s+/);
  let used = false;
  const text = command.body.replace(/\$(ARGUMENTS\b|\d+)/g, (_whole, what: string) => {
    used = true;
    if (what === "ARGUMENTS") return args.trim();
    return words[Number(what) - 1] ?? "";
  });
  if (!used && args.trim() !== "") return `${text.trimEnd()}\n\n${args.trim()}`;
  return text.trim();
}
