/**
 * yoi's tool calls as ACP shows them: a kind (so the editor picks an icon
 * and a view), a title, the files they touch (`locations`, so the editor
 * can follow along) and, for edits, a diff. Used live and when a loaded
 * session's history is replayed.
 */
import * as path from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import {
  BASH_OUTPUT_TOOL_NAME,
  EXIT_PLAN_MODE_TOOL_NAME,
  KILL_BASH_TOOL_NAME,
  TASK_TOOL_NAME,
  type TodoItem,
  WEB_FETCH_TOOL_NAME,
} from "@yoi/pod";

const TODO_WRITE = "todo_write";

/** Longest tool output sent to the editor as a call's content, in characters. */
const OUTPUT_CHARS = 20_000;

/** The ACP kind of a yoi tool. */
export function toolKind(name: string): acp.ToolKind {
  switch (name) {
    case "read_file":
    case "list_dir":
    case "tool_output_cache":
      return "read";
    case "edit_file":
    case "write_file":
      return "edit";
    case "grep":
    case "glob":
    case "tool_output_cache_grep":
      return "search";
    case "bash":
    case BASH_OUTPUT_TOOL_NAME:
    case KILL_BASH_TOOL_NAME:
      return "execute";
    case WEB_FETCH_TOOL_NAME:
      return "fetch";
    case EXIT_PLAN_MODE_TOOL_NAME:
      return "switch_mode";
    case TODO_WRITE:
    case TASK_TOOL_NAME:
    case "skill":
      return "think";
    default:
      return "other";
  }
}

type Args = Record<string, unknown>;

function str(args: Args, key: string): string | undefined {
  const value = args[key];
  return typeof value === "string" ? value : undefined;
}

function num(args: Args, key: string): number | undefined {
  const value = args[key];
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** One line; long ones cut. */
function short(text: string, max = 80): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The title an editor shows for a call. */
export function toolTitle(name: string, rawArgs: unknown): string {
  const args = (rawArgs ?? {}) as Args;
  const file = str(args, "path");
  switch (name) {
    case "read_file": {
      const offset = num(args, "offset");
      const limit = num(args, "limit");
      const lines =
        offset !== undefined || limit !== undefined
          ? ` (lines ${offset ?? 1}-${limit !== undefined ? (offset ?? 1) + limit - 1 : "end"})`
          : "";
      return `Read ${file ?? "file"}${lines}`;
    }
    case "list_dir":
      return `List ${file ?? "."}`;
    case "edit_file":
      return `Edit ${file ?? "file"}`;
    case "write_file":
      return `Write ${file ?? "file"}`;
    case "grep":
      return `grep ${JSON.stringify(str(args, "pattern") ?? "")}${file ? ` in ${file}` : ""}`;
    case "glob":
      return `glob ${str(args, "pattern") ?? ""}`;
    case "bash":
      return short(str(args, "command") ?? "bash", 120);
    case WEB_FETCH_TOOL_NAME:
      return `Fetch ${str(args, "url") ?? ""}`;
    case TODO_WRITE:
      return "Update the todo list";
    case EXIT_PLAN_MODE_TOOL_NAME:
      return "Ready to code?";
    case TASK_TOOL_NAME:
      return `Task: ${short(str(args, "description") ?? str(args, "prompt") ?? "subagent")}`;
    default:
      return name;
  }
}

/** The files a call touches, absolute (the editor opens them); `line` is 1-based. */
export function toolLocations(name: string, rawArgs: unknown, cwd: string): acp.ToolCallLocation[] {
  const args = (rawArgs ?? {}) as Args;
  const file = str(args, "path");
  if (file === undefined) return [];
  const at = path.resolve(cwd, file);
  switch (name) {
    case "read_file":
      return [{ path: at, line: num(args, "offset") ?? 1 }];
    case "edit_file":
    case "write_file":
    case "list_dir":
    case "grep":
    case "glob":
      return [{ path: at }];
    default:
      return [];
  }
}

/**
 * The diff of an edit, from its arguments (so it can be shown before the
 * edit is allowed): edit_file's old and new text; write_file's whole new
 * content against `before` (undefined: a new file).
 */
export function toolDiff(
  name: string,
  rawArgs: unknown,
  cwd: string,
  before?: string,
): acp.ToolCallContent | undefined {
  const args = (rawArgs ?? {}) as Args;
  const file = str(args, "path");
  if (file === undefined) return undefined;
  const at = path.resolve(cwd, file);
  if (name === "edit_file") {
    const oldText = str(args, "old_string");
    const newText = str(args, "new_string");
    if (oldText === undefined || newText === undefined) return undefined;
    return { type: "diff", path: at, oldText, newText };
  }
  if (name === "write_file") {
    const content = str(args, "content");
    if (content === undefined) return undefined;
    return { type: "diff", path: at, oldText: before ?? null, newText: content };
  }
  return undefined;
}

/** What a finished call shows: edits their diff, everything else its output (cut when long). */
export function resultContent(output: string, diff: acp.ToolCallContent | undefined): acp.ToolCallContent[] {
  if (diff !== undefined) return [diff];
  if (output === "") return [];
  const text =
    output.length > OUTPUT_CHARS
      ? `${output.slice(0, OUTPUT_CHARS)}\n… [${output.length - OUTPUT_CHARS} more characters]`
      : output;
  return [{ type: "content", content: { type: "text", text: fence(text) } }];
}

/** Characters of a running command's output kept to show (its end). */
export const LIVE_OUTPUT_CHARS = OUTPUT_CHARS;

/** A running command's output so far: `tail`, its last part, out of `total` characters. */
export function liveContent(tail: string, total: number): acp.ToolCallContent[] {
  const text = total > tail.length ? `… [${total - tail.length} earlier characters]\n${tail}` : tail;
  return [{ type: "content", content: { type: "text", text: fence(text) } }];
}

/** Text shown as it is: in a code block the text cannot close. */
export function fence(text: string): string {
  let ticks = "```";
  while (text.includes(ticks)) ticks += "`";
  return `${ticks}\n${text}${text.endsWith("\n") ? "" : "\n"}${ticks}`;
}

/** The todo list as an ACP plan. */
export function planEntries(todos: readonly TodoItem[]): acp.PlanEntry[] {
  return todos.map((t) => ({ content: t.content, priority: "medium", status: t.status }));
}
