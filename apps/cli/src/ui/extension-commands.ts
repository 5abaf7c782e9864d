/**
 * Slash commands a session gets from outside the CLI: the user's and the
 * project's Markdown commands (`/review`, `/git:commit`) and MCP prompts
 * (`/mcp__<server>__<prompt>`). Each expands to the text submitted as the
 * user's input (its `@path` refs are attached as usual).
 */

import { errorMessage } from "@yoi/manifest/errors";
import type { Pod } from "@yoi/pod";
import { expandCommand } from "@yoi/pod";
import type { Style } from "../style.ts";
import { sanitizeLine } from "../terminal-text.ts";
import { HELP_COLUMN, type HelpRow, type MenuCommand } from "./slash-commands.ts";

/** What a slash command submits. */
export interface ExpandedCommand {
  text: string;
  /** Tools pre-approved during the run (a command's `allowed-tools`). */
  allowTools?: readonly string[];
}

export type SlashExpansion = ({ kind: "submit" } & ExpandedCommand) | { kind: "error"; message: string };

/** How long a prompt command waits for MCP servers still starting. */
const MCP_WAIT_MS = 10_000;

/** Expands `/name args` from the pod's commands and MCP prompts; an error names what is wrong. */
export async function expandSlash(pod: Pod, input: string, signal?: AbortSignal): Promise<SlashExpansion> {
  const match = /^\/(\S+)\s*([\s\S]*)$/.exec(input.trim());
  const name = match?.[1] ?? "";
  const args = match?.[2] ?? "";
  const command = pod.extensions.commands.find((c) => c.name === name);
  if (command !== undefined) {
    const text = expandCommand(command, args);
    return {
      kind: "submit",
      text,
      ...(command.allowedTools.length > 0 ? { allowTools: command.allowedTools } : {}),
    };
  }
  if (name.startsWith("mcp__") && pod.mcp.configured) {
    await pod.mcp.ready(MCP_WAIT_MS);
    if (pod.mcp.prompts().some((p) => p.command === name)) {
      try {
        const text = await pod.mcp.renderPrompt(name, args, signal);
        if (text.trim() === "")
          return { kind: "error", message: `/${name} returned an empty prompt; nothing was sent` };
        return { kind: "submit", text };
      } catch (error) {
        return {
          kind: "error",
          message: `/${name}: ${errorMessage(error)}`,
        };
      }
    }
  }
  return { kind: "error", message: `unknown command /${name} (try /help)` };
}

/**
 * Whether `input` calls one of the session's own commands (print mode sends
 * other input starting with `/`, like a path, as it is).
 */
export function callsExtensionCommand(pod: Pod, input: string): boolean {
  const name = /^\/(\S+)/.exec(input.trim())?.[1];
  if (name === undefined) return false;
  return (
    pod.extensions.commands.some((c) => c.name === name) || (name.startsWith("mcp__") && pod.mcp.configured)
  );
}

/** `/help` rows for the session's own commands, each with where it comes from. */
export function extensionHelpRows(pod: Pod, style: Style): HelpRow[] {
  const rows: HelpRow[] = [];
  // Names and descriptions are the command files' and the MCP servers' text: made visible before styling.
  for (const c of pod.extensions.commands) {
    const usage = sanitizeLine(`/${c.name}${c.argumentHint ? ` ${c.argumentHint}` : ""}`);
    rows.push({
      head: usage,
      body: `${sanitizeLine(c.description)} ${style.dim(`(${c.source}: ${sanitizeLine(shortFile(c.file, c.source))})`)}`,
      indent: HELP_COLUMN,
    });
  }
  for (const p of pod.mcp.prompts()) {
    const args = (p.prompt.arguments ?? [])
      .map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`))
      .join(" ");
    const usage = sanitizeLine(`/${p.command}${args ? ` ${args}` : ""}`);
    rows.push({
      head: usage,
      body: `${sanitizeLine(p.prompt.description ?? p.prompt.title ?? "")} ${style.dim(`(mcp: ${sanitizeLine(p.server)})`)}`,
      indent: HELP_COLUMN,
    });
  }
  if (pod.extensions.skills.length > 0)
    rows.push({
      head: "",
      body: style.dim(
        sanitizeLine(`skills: ${pod.extensions.skills.map((s) => `${s.name} (${s.source})`).join(", ")}`),
      ),
      indent: 0,
    });
  return rows;
}

/** The session's own commands (custom commands, MCP prompts) for the `/` menu. */
export function extensionMenuCommands(pod: Pod): MenuCommand[] {
  return [
    ...pod.extensions.commands.map((c) => ({
      name: sanitizeLine(`/${c.name}`),
      ...(c.argumentHint ? { args: sanitizeLine(c.argumentHint) } : {}),
      summary: `${sanitizeLine(c.description)} (${c.source})`,
    })),
    ...pod.mcp.prompts().map((p) => {
      const args = (p.prompt.arguments ?? [])
        .map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`))
        .join(" ");
      return {
        name: sanitizeLine(`/${p.command}`),
        ...(args ? { args: sanitizeLine(args) } : {}),
        summary: `${sanitizeLine(p.prompt.description ?? p.prompt.title ?? "")} (mcp: ${sanitizeLine(p.server)})`,
      };
    }),
  ];
}

/** `.yoi/commands/x.md` of the project, `~/.yoi/commands/x.md` of the user. */
function shortFile(file: string, source: "project" | "user"): string {
  const at = file.lastIndexOf("/.yoi/");
  if (at === -1) return file;
  return `${source === "user" ? "~" : ""}${source === "user" ? file.slice(at) : file.slice(at + 1)}`;
}
