/**
 * The stream-json events: what `yoi -p --output stream-json` prints one a
 * line, what `yoi serve` streams and what `query()` yields. Snake_case,
 * stable shapes (documented in the CLI's README). Internal worker events
 * that a script has no use for (item commits, request starts) are not
 * emitted.
 */
import { type Item, messageText, serverToolInput, type Usage } from "@yoi/llm-client";
import type { PodEvent } from "./pod-events.ts";

/** Token counts in the stream-json convention (input includes cached tokens). */
export interface JsonUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
}

/** A web page a search found or the answer cites. */
export interface JsonSource {
  url: string;
  title?: string;
}

/** One model's share of a result: its tokens, calls and dollars (null: its prices are unknown). */
export type JsonModelUsage = JsonUsage & { calls: number; cost_usd: number | null };

export type StreamJsonEvent =
  | { type: "session"; session_id: string; model: string; provider: string; cwd: string; resumed: boolean }
  | { type: "text"; turn: number; text: string }
  | { type: "thinking"; turn: number; text: string }
  /**
   * A tool the provider ran on its side (web search): once when it starts
   * (`running`, `input` may still be `{}`) and again when it ends, with what
   * it found. Same `id` both times.
   */
  | {
      type: "server_tool";
      turn: number;
      id: string;
      name: string;
      status: "running" | "completed" | "failed";
      input: unknown;
      sources: JsonSource[];
      error?: string;
    }
  | {
      type: "tool_start";
      id: string;
      name: string;
      args: unknown;
      batch_id: string;
      index: number;
      turn: number;
    }
  /** Output of a running tool as it arrives (bash), redacted; the model sees only the `tool_end` result. */
  | { type: "tool_output_delta"; id: string; name: string; text: string }
  | {
      type: "tool_end";
      id: string;
      name: string;
      is_error: boolean;
      outcome: string;
      duration_ms: number;
      /** Bytes that entered the context (the committed result). */
      output_bytes: number;
      /** Bytes of the whole output (what the blob store keeps). */
      full_bytes: number;
      preview: string;
      blob_id?: string;
    }
  | {
      type: "usage";
      turn: number;
      usage: JsonUsage;
      total: JsonUsage;
      context_tokens: number;
      context_window: number;
    }
  /** `discarded`: the `text` / `thinking` lines of this turn so far are void (the model call starts again). */
  | { type: "retry"; source: string; attempt: number; delay_ms: number; reason: string; discarded: boolean }
  | { type: "alert"; level: "info" | "warn" | "error"; source: string; message: string }
  | { type: "permission"; tool: string; subject?: string; action: "allow" | "deny"; by: string }
  /** A tool call waits for a decision (only where someone can answer: `yoi serve`). */
  | {
      type: "permission_request";
      request_id: string;
      tool: string;
      subject?: string;
      summary: string;
      args: unknown;
    }
  | { type: "compaction"; reason: string; items: number }
  | {
      type: "subagent";
      /** The parent's task call id. */
      id: string;
      description: string;
      agent?: string;
      depth: number;
      event: StreamJsonEvent;
    }
  | { type: "todos"; todos: { content: string; status: "pending" | "in_progress" | "completed" }[] }
  | { type: "turn_end"; turn: number; stop_reason?: string; tool_calls: number }
  | { type: "warning"; code: string; message: string }
  | {
      type: "result";
      status: string;
      session_id: string;
      text: string;
      turns: number;
      usage: JsonUsage;
      /** Dollars of every model call, from list prices; null when a model's prices are unknown. */
      cost_usd: number | null;
      /** Usage and dollars per `"<provider>/<model>"` (subagents' models included). */
      models: Record<string, JsonModelUsage>;
      duration_ms: number;
      /** The sources the answer cites (web search), each url once, in order; absent when none. */
      citations?: JsonSource[];
      /** `reset_at`: when a rate limit beyond the retry budget resets (ISO 8601). */
      error?: { code: string; message: string; reset_at?: string };
      /** `yoi -p "/review [base]"`: the findings (null when the reviewer's answer did not parse). */
      review?: {
        against: string;
        files: number;
        findings: { file: string; line: number | null; severity: string; text: string }[] | null;
        parse_error?: string;
      };
    };

export function jsonUsage(usage: Usage | undefined): JsonUsage {
  return {
    input_tokens: usage?.inputTokens ?? 0,
    output_tokens: usage?.outputTokens ?? 0,
    cache_read_tokens: usage?.cacheReadTokens ?? 0,
    cache_write_tokens: usage?.cacheWriteTokens ?? 0,
    reasoning_tokens: usage?.reasoningTokens ?? 0,
  };
}

/** Tokens the context holds after a model call: what was sent plus what came back. */
export function contextTokens(usage: Usage): number {
  return (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
}

/** The stream-json line of a pod event, or undefined for events scripts do not see. */
export function toStreamJson(event: PodEvent, contextWindow: number): StreamJsonEvent | undefined {
  switch (event.type) {
    case "text_delta":
      return { type: "text", turn: event.turnIndex, text: event.text };
    case "thinking_delta":
      return { type: "thinking", turn: event.turnIndex, text: event.text };
    case "server_tool":
      return {
        type: "server_tool",
        turn: event.turnIndex,
        id: event.item.callId,
        name: event.item.name,
        status: event.item.status,
        input: serverToolInput(event.item),
        sources: event.item.sources.map(jsonSource),
        ...(event.item.error !== undefined ? { error: event.item.error } : {}),
      };
    case "tool_call_start":
      return {
        type: "tool_start",
        id: event.callId,
        name: event.name,
        args: event.args ?? null,
        batch_id: event.batchId,
        index: event.callIndex,
        turn: event.turnIndex,
      };
    case "tool_output_delta":
      return { type: "tool_output_delta", id: event.callId, name: event.name, text: event.text };
    case "tool_call_end":
      return {
        type: "tool_end",
        id: event.callId,
        name: event.name,
        is_error: event.isError,
        outcome: String(event.outcome),
        duration_ms: Math.round(event.durationMs),
        output_bytes: event.outputBytes,
        full_bytes: event.fullBytes,
        preview: event.preview,
        ...(event.blobId ? { blob_id: event.blobId } : {}),
      };
    case "usage":
      return {
        type: "usage",
        turn: event.turnIndex,
        usage: jsonUsage(event.usage),
        total: jsonUsage(event.total),
        context_tokens: contextTokens(event.usage),
        context_window: contextWindow,
      };
    case "retry":
      return {
        type: "retry",
        source: event.source,
        attempt: event.attempt,
        delay_ms: event.delayMs,
        reason: event.reason,
        discarded: event.discarded,
      };
    case "alert":
      return {
        type: "alert",
        level: event.alert.level,
        source: event.alert.source,
        message: event.alert.message,
      };
    case "permission_outcome":
      return {
        type: "permission",
        tool: event.outcome.tool,
        ...(event.outcome.subject !== undefined ? { subject: event.outcome.subject } : {}),
        action: event.outcome.action,
        by: event.outcome.by,
      };
    case "permission_request":
      return {
        type: "permission_request",
        request_id: event.request.callId,
        tool: event.request.tool,
        ...(event.request.subject !== undefined ? { subject: event.request.subject } : {}),
        summary: event.request.summary,
        args: event.request.args ?? null,
      };
    case "history_replaced":
      return event.reason === "compaction"
        ? {
            type: "compaction",
            reason: event.reason,
            items: event.items.length,
            ...(Array.isArray(event.detail?.keptTurnsTrimmedRefs)
              ? { kept_turns_trimmed_refs: event.detail.keptTurnsTrimmedRefs }
              : {}),
          }
        : undefined;
    case "turn_end":
      return {
        type: "turn_end",
        turn: event.turnIndex,
        ...(event.stopReason ? { stop_reason: event.stopReason } : {}),
        tool_calls: event.toolCalls,
      };
    case "warning":
      return { type: "warning", code: event.warning.code, message: event.warning.message };
    case "subagent": {
      const inner = toStreamJson(event.event, contextWindow);
      if (inner === undefined) return undefined;
      return {
        type: "subagent",
        id: event.callId,
        description: event.description,
        ...(event.agent !== undefined ? { agent: event.agent } : {}),
        depth: event.depth,
        event: inner,
      };
    }
    case "todos":
      return { type: "todos", todos: event.todos.map((t) => ({ content: t.content, status: t.status })) };
    default:
      return undefined;
  }
}

function jsonSource(source: { url: string; title?: string }): JsonSource {
  return source.title === undefined ? { url: source.url } : { url: source.url, title: source.title };
}

/**
 * The sources of a run's answer, each url once, in order: what its
 * assistant messages cite, or, when they cite nothing, what its web
 * searches found (OpenAI may answer from a search without annotations).
 */
export function answerSources(items: readonly Item[]): JsonSource[] {
  const cited = new Map<string, JsonSource>();
  const found = new Map<string, JsonSource>();
  for (const item of items) {
    if (item.type === "server_tool") {
      for (const source of item.sources)
        if (!found.has(source.url)) found.set(source.url, jsonSource(source));
      continue;
    }
    if (item.type !== "message" || item.role !== "assistant") continue;
    for (const part of item.content) {
      if (part.type !== "text") continue;
      for (const citation of part.citations ?? [])
        if (!cited.has(citation.url)) cited.set(citation.url, jsonSource(citation));
    }
  }
  return [...(cited.size > 0 ? cited : found).values()];
}

/** The answer of a run: the text of the last message with any (a `result` event's `text`). */
export function lastText(items: readonly Item[]): string {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item?.type === "message") {
      const text = messageText(item);
      if (text.trim() !== "") return text;
    }
  }
  return "";
}
