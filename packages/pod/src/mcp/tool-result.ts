/**
 * An MCP `tools/call` result as a yoi tool result. Tool results are text
 * (llm-client's tool result item), so each content block becomes text:
 * text as is, structured content as JSON, images and audio described with
 * their type and size (their bytes go to the blob store when there is one,
 * so `inspect`/`yoi inspect` can still get them), resource links and
 * embedded resources with their URI (attachable with `@<server>:<uri>`).
 * Large text goes through the worker's Inline/Stored path like any tool's.
 */
import type { BlobStore, ToolReturn } from "@yoi/llm-worker";
import { ToolError } from "@yoi/llm-worker";
import { WORKER_DEFAULTS } from "@yoi/manifest";

/** The parts of a CallToolResult this reads (the SDK's type, loosely: servers vary). */
export interface McpCallResult {
  content?: readonly McpContentBlock[];
  structuredContent?: unknown;
  isError?: boolean;
  /** Old protocol versions: `{ toolResult }`. */
  toolResult?: unknown;
}

/** One content block (text, image, audio, resource_link, resource). */
export interface McpContentBlock {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  title?: string;
  description?: string;
  resource?: { uri: string; mimeType?: string; text?: string; blob?: string };
}

export interface ResultContext {
  server: string;
  blobStore?: BlobStore | undefined;
  /** Most bytes of the result (its text, data and structured content). Default `WORKER_DEFAULTS.maxMcpResultBytes`. */
  maxBytes?: number;
}

/**
 * The text the model gets; throws ToolError when the server says the call
 * failed, or when the result is larger than `maxBytes` (nothing of it is
 * kept: not in history, the log or the blob store).
 */
export async function toToolReturn(result: McpCallResult, ctx: ResultContext): Promise<ToolReturn> {
  const max = ctx.maxBytes ?? WORKER_DEFAULTS.maxMcpResultBytes;
  const size = resultBytes(result);
  if (size > max)
    throw new ToolError(
      `The MCP server ${ctx.server} answered with ${size} bytes, more than the ${max} a result may have (worker.maxMcpResultBytes); nothing of it was kept. Ask for less (a narrower query, a page of the results).`,
    );
  const parts: string[] = [];
  for (const block of result.content ?? []) parts.push(await blockText(block, ctx));
  // Structured content is shown when the server gave no content blocks; servers that give both
  // repeat it as text (the spec asks them to) or give the text form the model should read.
  if (parts.length === 0 && result.structuredContent !== undefined && result.structuredContent !== null)
    parts.push(JSON.stringify(result.structuredContent, null, 2));
  if (result.content === undefined && result.toolResult !== undefined)
    parts.push(JSON.stringify(result.toolResult));
  const text = parts.join("\n");
  if (result.isError)
    throw new ToolError(text.trim() === "" ? "the MCP server reported an error without details" : text);
  return text === "" ? "(the tool returned no content)" : text;
}

/** The bytes of what a result would keep: its blocks' text and data, else its structured content. */
function resultBytes(result: McpCallResult): number {
  let total = 0;
  for (const block of result.content ?? []) {
    total += Buffer.byteLength(block.text ?? "") + (block.data?.length ?? 0);
    if (block.resource !== undefined)
      total += Buffer.byteLength(block.resource.text ?? "") + (block.resource.blob?.length ?? 0);
  }
  // As toToolReturn reads them: structured content only without blocks, the old form only without content.
  if ((result.content ?? []).length === 0 && result.structuredContent != null)
    total += Buffer.byteLength(JSON.stringify(result.structuredContent) ?? "");
  if (result.content === undefined && result.toolResult !== undefined)
    total += Buffer.byteLength(JSON.stringify(result.toolResult) ?? "");
  return total;
}

async function blockText(block: McpContentBlock, ctx: ResultContext): Promise<string> {
  switch (block.type) {
    case "text":
      return block.text ?? "";
    case "image":
    case "audio":
      return binaryNote(block.type, block.mimeType, block.data ?? "", ctx);
    case "resource_link": {
      const label = block.title ?? block.name ?? block.uri ?? "";
      const meta = [block.mimeType, block.description].filter(Boolean).join("; ");
      return `[resource link: ${label} <${block.uri ?? ""}>${meta ? ` (${meta})` : ""}; attach with @${ctx.server}:${block.uri ?? ""}]`;
    }
    case "resource": {
      const r = block.resource;
      if (r === undefined) return "[resource without content]";
      if (typeof r.text === "string")
        return `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ""}]\n${r.text}`;
      return binaryNote(`resource ${r.uri}`, r.mimeType, r.blob ?? "", ctx);
    }
    default:
      return `[${block.type} content, not shown]`;
  }
}

/** Base64 payloads are described, and kept in the blob store when there is one. */
async function binaryNote(
  what: string,
  mimeType: string | undefined,
  base64: string,
  ctx: ResultContext,
): Promise<string> {
  const bytes =
    Math.floor((base64.length * 3) / 4) - (base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0);
  const size = bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${bytes} bytes`;
  let where = "";
  if (ctx.blobStore !== undefined && base64 !== "") {
    try {
      const id = await ctx.blobStore.store({
        kind: "structured",
        value: { mimeType: mimeType ?? null, base64 },
      });
      where = `, kept as [blob:${id}]`;
    } catch {
      // Describing it is enough; the store's failure must not fail the call.
    }
  }
  return `[${what}: ${mimeType ?? "unknown type"}, ${size}${where}; tool results carry text only]`;
}
