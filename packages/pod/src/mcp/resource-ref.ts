/**
 * `@<server>:<uri>` in submitted input attaches an MCP resource, the way
 * `@path` attaches a file (docs/design/file-refs.md): read at submit, committed after the
 * user message as `[Resource: <server>:<uri>]` with its text, cut to the
 * same byte cap as a file ref.
 */
import { type MessageItem, systemMessage } from "@yoi/llm-client";
import type { McpManager } from "./mcp-manager.ts";

const REF_RE = /^([A-Za-z0-9][A-Za-z0-9_-]*):(.+)$/;

/** The server and URI of a ref that names a configured MCP server, else undefined (a file ref). */
export function parseResourceRef(
  ref: string,
  isServer: (name: string) => boolean,
): { server: string; uri: string } | undefined {
  const m = REF_RE.exec(ref);
  if (m === null || !isServer(m[1]!)) return undefined;
  return { server: m[1]!, uri: m[2]! };
}

/** Reads the resource and builds the item; throws an Error naming server and URI. */
export async function resolveResourceRef(
  manager: McpManager,
  ref: { server: string; uri: string },
  maxBytes: number,
  signal?: AbortSignal,
): Promise<MessageItem> {
  let { text } = await manager.readResource(ref.server, ref.uri, signal);
  const bytes = Buffer.byteLength(text);
  if (bytes > maxBytes) {
    const cut = Buffer.from(text)
      .subarray(0, maxBytes)
      .toString("utf8")
      .replace(/\uFFFD$/, "");
    text = `${cut}\n[truncated: ${bytes} bytes, first ${maxBytes} shown]`;
  }
  return systemMessage(`[Resource: ${ref.server}:${ref.uri}]\n${text}`);
}
