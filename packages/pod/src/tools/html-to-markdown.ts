/**
 * HTML to Markdown with turndown (and its server-side DOM), loaded on the
 * first web page so start-up pays nothing for them.
 */
import type TurndownService from "turndown";

let service: Promise<TurndownService> | undefined;

async function create(): Promise<TurndownService> {
  const { default: Turndown } = await import("turndown");
  const td = new Turndown({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
  // What a reader of the page never sees.
  td.remove(["script", "style", "noscript", "iframe", "template", "head", "svg", "canvas"] as never);
  return td;
}

/** The page as Markdown; runs of blank lines are squeezed. */
export async function htmlToMarkdown(html: string): Promise<string> {
  service ??= create();
  const td = await service;
  return td
    .turndown(html)
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** The page's `<title>`, when it has one. */
export function htmlTitle(html: string): string | undefined {
  const m = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  const title = m?.[1]?.replace(/\s+/g, " ").trim();
  return title === undefined || title === "" ? undefined : title;
}
