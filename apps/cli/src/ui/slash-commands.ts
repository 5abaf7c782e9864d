/**
 * Slash commands of the interactive session, as a table: each command is
 * one entry (name, synopsis, one line of help, what it runs), so adding a
 * command is adding a line, and `/help`, the `/` menu and Tab completion
 * read the same table.
 */
import type { Menu, MenuItem } from "./line-editor.ts";

/** One slash command. */
export interface SlashCommand {
  /** As typed, with the slash: `/model`. */
  readonly name: string;
  /** Other names it answers to (`/quit` for `/exit`). */
  readonly aliases?: readonly string[];
  /** The argument synopsis shown by `/help` (`[ref]`, `<id>`); empty for none. */
  readonly args?: string;
  /** One line for `/help`. */
  readonly summary: string;
  /** Runs the command; `arg` is the rest of the line, trimmed. */
  run(arg: string): Promise<void> | void;
}

/** The command a typed name means (by name or alias), if any. */
export function findSlashCommand(commands: readonly SlashCommand[], name: string): SlashCommand | undefined {
  return commands.find((c) => c.name === name || (c.aliases ?? []).includes(name));
}

/** Splits `/name rest of line` into the name and the trimmed argument. */
export function parseSlash(text: string): { name: string; arg: string } {
  const match = /^(\S+)\s*([\s\S]*)$/.exec(text.trim());
  return { name: match?.[1] ?? "", arg: (match?.[2] ?? "").trim() };
}

/** Where `/help` starts the descriptions of rows other than the built-in commands (the session's own commands, keys). */
export const HELP_COLUMN = 19;

/** One row of `/help`: what to type, what it does, and the column where that starts. */
export interface HelpRow {
  readonly head: string;
  readonly body: string;
  readonly indent: number;
}

/** The `/help` rows of the commands: synopses in one column, summaries in the next. */
export function slashHelp(commands: readonly SlashCommand[]): HelpRow[] {
  const synopsis = commands.map((c) => (c.args ? `${c.name} ${c.args}` : c.name));
  const indent = Math.max(...synopsis.map((s) => s.length)) + 2;
  return commands.map((c, i) => ({ head: synopsis[i] ?? "", body: c.summary, indent }));
}

/** A command as the `/` menu lists it. */
export type MenuCommand = Pick<SlashCommand, "name" | "args" | "summary">;

/**
 * The `/` menu for the input as typed: while the whole input is one `/word`
 * (the cursor at its end), every command whose name starts with it, then
 * those that contain it, each with its synopsis and summary. Enter on a
 * command runs it when it needs no argument (none, or only optional ones in
 * brackets: `/resume [id]` opens its picker); one that needs an argument is
 * put in the input to be completed. Tab always puts the command in the input.
 */
export function slashMenu(text: string, cursor: number, commands: readonly MenuCommand[]): Menu | undefined {
  if (cursor !== text.length || !/^\/\S*$/.test(text)) return undefined;
  const typed = text.toLowerCase();
  const starts = commands.filter((c) => c.name.toLowerCase().startsWith(typed));
  const contains = commands.filter(
    (c) => !starts.includes(c) && c.name.toLowerCase().includes(typed.slice(1)),
  );
  const items: MenuItem[] = [...starts, ...contains].map((c) => ({
    value: c.args ? `${c.name} ` : c.name,
    label: c.args ? `${c.name} ${c.args}` : c.name,
    detail: c.summary,
    run: c.args === undefined || OPTIONAL_ONLY.test(c.args),
  }));
  return { from: 0, items, enterTakes: true };
}

/** A synopsis of optional arguments only (`[id]`, `[N] [focus]`). */
const OPTIONAL_ONLY = /^\s*(?:\[[^\]]*\]\s*)+$/;
