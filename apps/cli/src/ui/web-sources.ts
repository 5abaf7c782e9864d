/**
 * How the terminal shows a web search: the line while it runs or when it
 * ends (`web_search: "query"` and what it found), and the sources under an
 * answer. One place for print mode and the interactive screen.
 */
import { type ServerToolItem, serverToolInput } from "@yoi/llm-client";

/** A page a search found or an answer cites. */
export interface ShownSource {
  url: string;
  title?: string;
}

/** What a server tool call did, in a few words: its query, or the page it opened. */
export function serverToolSubject(item: Pick<ServerToolItem, "arguments">): string {
  const input = serverToolInput(item);
  if (typeof input.query === "string") return JSON.stringify(input.query);
  if (Array.isArray(input.queries))
    return input.queries
      .filter((q): q is string => typeof q === "string")
      .map((q) => JSON.stringify(q))
      .join(", ");
  if (typeof input.url === "string")
    return typeof input.pattern === "string" ? `${JSON.stringify(input.pattern)} in ${input.url}` : input.url;
  return "";
}

/** One line for a server tool call: `Searching the web: "query"`, then `Searched the web: "query" (5 results)`. */
export function serverToolLine(item: ServerToolItem): string {
  const subject = serverToolSubject(item);
  const what = subject === "" ? "" : `: ${subject}`;
  if (item.status === "running") return `Searching the web${what}…`;
  if (item.status === "failed") return `Web search failed${what} (${item.error ?? "error"})`;
  const count = item.sources.length;
  return `Searched the web${what} (${count} result${count === 1 ? "" : "s"})`;
}

/** The sources block under an answer: a heading and one numbered line per source. */
export function sourcesText(sources: readonly ShownSource[]): string {
  const lines = sources.map((source, i) =>
    source.title ? `  [${i + 1}] ${source.title} — ${source.url}` : `  [${i + 1}] ${source.url}`,
  );
  return ["Sources:", ...lines].join("\n");
}
