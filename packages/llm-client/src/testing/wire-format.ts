import type { ProviderKind } from "../item.ts";

/** A tool call a scripted response makes. */
export interface ScriptedToolCall {
  id: string;
  name: string;
  /** Arguments object (serialized by the wire format). */
  arguments: Record<string, unknown>;
}

export interface ScriptedTurnOptions {
  /** Usage numbers to report, in the llm-client convention (input includes cached). */
  usage?: { inputTokens?: number; outputTokens?: number; cacheReadTokens?: number };
  /** Reasoning/thinking text to emit before the answer (where the provider has it). */
  thinking?: string;
  /** Split text into deltas of this many characters (default 16). */
  chunkSize?: number;
}

/**
 * How a provider's wire looks, for the scripted fake server: builders that
 * produce recorded-format payload lines (one JSON document per line, framed
 * by `frameLines`) and a validator that rejects malformed requests the way
 * the real API does.
 */
export interface WireFormat {
  provider: ProviderKind;
  /** Payload lines of a response with text (and optional tool calls after it). */
  response(text: string, toolCalls?: ScriptedToolCall[], options?: ScriptedTurnOptions): string[];
  /**
   * Checks a request body like the real API: returns a message describing
   * the first violation (e.g. a tool result that answers no tool call of the
   * previous assistant turn), or undefined when the request is valid.
   */
  validate(body: unknown): string | undefined;
  /** HTTP error body in the provider's shape. */
  errorBody(status: number, message: string): unknown;
}

/**
 * Splits text into the deltas of a scripted stream, `size` characters each
 * (code points, so a surrogate pair never straddles two deltas).
 */
export function chunkText(text: string, size: number): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += Math.max(1, size)) out.push(chars.slice(i, i + size).join(""));
  return out;
}

let responses = 0;

/** A number for the next scripted response's id, unique across every wire in this process. */
export function nextResponseNumber(): number {
  responses += 1;
  return responses;
}
