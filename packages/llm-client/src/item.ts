/**
 * The neutral history model. History is an array of Items; every adapter
 * converts it to its provider's request on each call, so nothing
 * provider-specific survives compaction except what an Item carries.
 */

import type { ProviderKind } from "@yoi/manifest";

/** A built-in provider: the closed set `createClient` accepts and yoi handles exhaustively. */
export type { ProviderKind };

/**
 * The name of the provider behind a client, a reasoning item or an error:
 * a built-in {@link ProviderKind}, or the name an outside adapter declares
 * through `createClientWithAdapter` (e.g. `"ndjson"`). Code that must handle
 * every provider switches on `ProviderKind`; code that only compares names
 * (is this reasoning mine?) takes a `ProviderName`.
 */
export type ProviderName = ProviderKind | (string & {});

export interface TextPart {
  type: "text";
  text: string;
  /** Sources the provider cited for this text (web search results); absent when none. */
  citations?: Citation[];
}

/**
 * A source a provider cited for a piece of its answer (Anthropic text
 * citations, OpenAI `url_citation` annotations, Gemini grounding supports).
 */
export interface Citation {
  url: string;
  title?: string;
  /** The passage of the source the text rests on, when the provider gives it. */
  citedText?: string;
  /** The provider that produced it; its `providerData` is only replayed there. */
  provider: ProviderName;
  /** What the provider needs to accept the citation back (Anthropic's `encrypted_index`). Opaque. */
  providerData?: ProviderData;
}

/** One result of a server-side tool (a web page a search found). */
export interface ServerToolSource {
  url: string;
  title?: string;
  /** When the page was published or last seen, as the provider wrote it. */
  pageAge?: string;
}

/** An image, either inline base64 data or a URL. */
export interface ImagePart {
  type: "image";
  /** MIME type, e.g. `image/png`. Required for `data`. */
  mediaType: string;
  /** Base64-encoded bytes (no `data:` prefix). */
  data?: string;
  /** A URL the provider fetches itself (not every provider accepts one). */
  url?: string;
}

export type ContentPart = TextPart | ImagePart;

export type Role = "user" | "assistant" | "system";

/** Reference to the full content of a tool output kept in a BlobStore. */
export interface OutputRef {
  /** Blob id (UUID v7). */
  id: string;
  byteSize?: number;
  lineCount?: number;
}

export interface MessageItem {
  type: "message";
  role: Role;
  content: ContentPart[];
  /**
   * Provider-specific replay data attached to an assistant message part
   * (e.g. Gemini's `thoughtSignature` on a text part). Opaque to callers.
   */
  providerData?: ProviderData;
}

export interface ToolCallItem {
  type: "tool_call";
  /** The provider's call id (or a generated unique one where the provider has none). */
  callId: string;
  name: string;
  /** Arguments as a JSON string (an object). `"{}"` for a call with no arguments. */
  arguments: string;
  /** `custom` for OpenAI Responses free-form (custom) tools, whose input is raw text in `arguments`. */
  kind?: "function" | "custom";
  providerData?: ProviderData;
}

export interface ToolResultItem {
  type: "tool_result";
  callId: string;
  /** Tool name; Gemini pairs function responses by name, so adapters need it. */
  name?: string;
  /** What the model sees. */
  output: string;
  isError: boolean;
  /** The stored full output, when the in-context view is a summary or trimmed. */
  outputRef?: OutputRef;
  /**
   * Images the tool returned (read_file on a picture). Sent inside the tool
   * result where the provider takes that (`acceptsToolResultImages`); other
   * providers get a note in their place.
   */
  images?: ImagePart[];
}

export interface ReasoningItem {
  type: "reasoning";
  /** Visible reasoning text (may be empty when the provider only returns a summary or nothing). */
  text: string;
  /** OpenAI reasoning summary parts. */
  summary?: string[];
  /** Anthropic thinking signature. */
  signature?: string;
  /** OpenAI encrypted reasoning content, or Anthropic redacted-thinking data. */
  encryptedContent?: string;
  /** Anthropic `redacted_thinking`: `encryptedContent` holds the opaque data. */
  redacted?: boolean;
  /** The provider family that produced it; reasoning is only replayed there. */
  provider: ProviderName;
  /** Provider-specific ids (e.g. OpenAI reasoning item id, Gemini thought signature). */
  providerData?: ProviderData;
}

/**
 * A tool the provider ran on its own side during the response (web search):
 * the call and its results in one item. Kept in history because some
 * providers require it back (Anthropic's `server_tool_use` and
 * `web_search_tool_result` blocks, encrypted content included); it is only
 * replayed to the provider that produced it, and dropped for the others.
 */
export interface ServerToolItem {
  type: "server_tool";
  /** The provider's id of the call. */
  callId: string;
  /** The neutral tool name, e.g. `web_search`. */
  name: string;
  /** The call's input as a JSON object string (e.g. `{"query":"..."}`); `"{}"` when the provider gives none. */
  arguments: string;
  /** `completed` with results, `failed` when the provider reported an error (`error`), `running` when the response ended first. */
  status: "running" | "completed" | "failed";
  /** What it found, in the provider's order. */
  sources: ServerToolSource[];
  /** The provider's error code, when `status` is `failed`. */
  error?: string;
  /** The provider family that ran it; it is only replayed there. */
  provider: ProviderName;
  /** The raw blocks the provider needs back. Opaque. */
  providerData?: ProviderData;
}

/** Opaque, JSON-serializable provider replay data. */
export type ProviderData = Record<string, unknown>;

export type Item = MessageItem | ToolCallItem | ToolResultItem | ReasoningItem | ServerToolItem;

/** Convenience constructors. */
export function userMessage(text: string): MessageItem {
  return { type: "message", role: "user", content: [{ type: "text", text }] };
}

export function systemMessage(text: string): MessageItem {
  return { type: "message", role: "system", content: [{ type: "text", text }] };
}

export function assistantMessage(text: string): MessageItem {
  return { type: "message", role: "assistant", content: [{ type: "text", text }] };
}

/** The concatenated text parts of a message. */
export function messageText(item: MessageItem): string {
  let out = "";
  for (const part of item.content) if (part.type === "text") out += part.text;
  return out;
}

/** A server tool call's input as an object: `{}` when its `arguments` are not a JSON object. */
export function serverToolInput(item: Pick<ServerToolItem, "arguments">): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(item.arguments);
    if (value !== null && typeof value === "object" && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // not JSON: no input to show or send
  }
  return {};
}
