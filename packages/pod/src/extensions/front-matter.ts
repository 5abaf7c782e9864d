/**
 * YAML front matter of Markdown extension files (custom commands, skills):
 * an optional `---` block at the very top. The YAML parser is loaded only
 * for files that have one.
 */
import { YoiError } from "@yoi/manifest/errors";

/** A file's front matter could not be read; `message` says where and what. */
export class FrontMatterError extends YoiError<"front_matter"> {
  override readonly name = "FrontMatterError";
  static override readonly marker: symbol = Symbol.for("yoi.error.FrontMatterError");

  constructor(message: string, options: { cause?: unknown } = {}) {
    super("front_matter", message, options);
  }
}

export interface MarkdownWithFrontMatter {
  /** The front matter's keys (empty without front matter). */
  data: Record<string, unknown>;
  /** The Markdown after the front matter. */
  body: string;
}

const FENCE = /^---[ \t]*$/;

/** Splits and parses; throws FrontMatterError for an unclosed block, bad YAML or a non-mapping. */
export async function parseFrontMatter(text: string): Promise<MarkdownWithFrontMatter> {
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const lines = source.split(/\r?\n/);
  if (!FENCE.test(lines[0] ?? "")) return { data: {}, body: source };
  const end = lines.findIndex((line, i) => i > 0 && FENCE.test(line));
  if (end === -1)
    throw new FrontMatterError(
      "the front matter opened with --- on line 1 is never closed (add a line --- after it)",
    );
  const yamlText = lines.slice(1, end).join("\n");
  const body = lines.slice(end + 1).join("\n");
  if (yamlText.trim() === "") return { data: {}, body };
  const { parseDocument } = await import("yaml");
  const doc = parseDocument(yamlText);
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    const line = first.linePos?.[0]?.line;
    // +1: the opening --- line.
    throw new FrontMatterError(
      `the front matter is not valid YAML${line !== undefined ? ` (line ${line + 1})` : ""}: ${first.message.split("\n")[0]}`,
    );
  }
  const data: unknown = doc.toJS();
  if (data === null || typeof data !== "object" || Array.isArray(data))
    throw new FrontMatterError("the front matter must be key: value lines (a YAML mapping)");
  return { data: data as Record<string, unknown>, body };
}
