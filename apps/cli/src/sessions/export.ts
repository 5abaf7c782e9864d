/**
 * `/export`: a session's conversation as a Markdown file to keep or share.
 * Each prompt is quoted under "You" (its `@path` refs as typed; the files
 * themselves are not copied), each answer follows under "yoi" as the model
 * wrote it, with a line per tool call and whether it failed. The text is
 * made safe to `cat` (escape sequences shown, not obeyed), as everything
 * yoi shows is, and keys are masked, as in the session log.
 */
import { isCompactionMessage } from "@yoi/compaction";
import type { Item } from "@yoi/llm-client";
import { messageText, redactSecrets } from "@yoi/llm-client";
import { sanitize } from "../terminal-text.ts";
import { parseArgs, shortArgs } from "../ui/tool-summary.ts";
import { serverToolLine } from "../ui/web-sources.ts";

export interface ExportFacts {
  sessionId: string;
  /** `provider/model` at the time of the export. */
  model: string;
  cwd: string;
  at: Date;
}

/** The placeholder an `@path` ref leaves in the stored prompt (see @yoi/pod's segments), turned back. */
const REF_PLACEHOLDER = /\[unresolved file ref: ([^\]\n]+)\]/g;

/** The conversation of `history` as Markdown, and how many prompts it holds. */
export function conversationMarkdown(
  history: readonly Item[],
  facts: ExportFacts,
): { markdown: string; turns: number } {
  const failed = new Map<string, boolean>();
  for (const item of history) if (item.type === "tool_result") failed.set(item.callId, item.isError);
  const out = [
    `# yoi session ${facts.sessionId}`,
    "",
    `- model: ${facts.model}`,
    `- directory: ${facts.cwd}`,
    `- exported: ${facts.at.toISOString()}`,
  ];
  let turns = 0;
  // "yoi" heads the answer once per prompt, however many model calls and tool calls it took.
  let answering = false;
  // Tool lines that follow each other make one list.
  let listing = false;
  for (const item of history) {
    if (isCompactionMessage(item) && item.type === "message") {
      // What a compaction put in place of the earlier turns: its summary, not a prompt.
      const text = sanitize(messageText(item))
        .replace(/^\[Compacted conversation\][^\n]*\n+/, "")
        .replace(/^<(summary|retain)>\n?([\s\S]*?)\n?<\/\1>\s*$/, "$2")
        .trim();
      out.push("", "## Earlier, compacted", "", text);
      answering = false;
      listing = false;
      continue;
    }
    if (item.type === "message" && item.role === "user") {
      turns++;
      answering = false;
      const text = sanitize(messageText(item).replace(REF_PLACEHOLDER, "@$1")).trimEnd();
      out.push("", "## You", "", ...text.split("\n").map((line) => (line === "" ? ">" : `> ${line}`)));
      listing = false;
      continue;
    }
    const toolLine = (text: string) => {
      if (!listing) out.push("");
      listing = true;
      out.push(`- ${text}`);
    };
    const head = () => {
      if (answering) return;
      answering = true;
      out.push("", "## yoi");
    };
    if (item.type === "message" && item.role === "assistant") {
      const text = sanitize(messageText(item)).trim();
      if (text === "") continue;
      head();
      out.push("", text);
      listing = false;
    } else if (item.type === "tool_call") {
      head();
      const mark = failed.get(item.callId) === true ? " (failed)" : "";
      const args = sanitize(shortArgs(item.name, parseArgs(item.arguments)));
      toolLine(`\`${sanitize(item.name)}\`${args === "" ? "" : ` ${args}`}${mark}`);
    } else if (item.type === "server_tool") {
      head();
      // The line says itself whether the search failed.
      toolLine(sanitize(serverToolLine(item)));
    }
  }
  // A file to share: what reads like a key is masked, as in the session log it was kept in.
  return { markdown: redactSecrets(`${out.join("\n")}\n`), turns };
}
