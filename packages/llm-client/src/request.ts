import type { Event } from "./event.ts";
import type { Item, ProviderName } from "./item.ts";

/** A tool the model may call. `parameters` is a JSON Schema object (generated from zod by callers). */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  /** `custom`: OpenAI Responses free-form tool (raw text input). Default `function`. */
  kind?: "function" | "custom";
}

/** Reasoning settings: an effort level (OpenAI style) or a token budget (Anthropic/Gemini style). */
export interface ReasoningSettings {
  effort?: "minimal" | "low" | "medium" | "high";
  budgetTokens?: number;
}

/** Where Anthropic `cache_control` breakpoints go. Default: all three. */
export interface PromptCacheSettings {
  /** Default true. */
  enabled?: boolean;
  system?: boolean;
  tools?: boolean;
  /** The last message of the conversation. */
  conversation?: boolean;
}

export interface RequestSettings {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
  reasoning?: ReasoningSettings;
  /** Stable key that helps the provider route to a warm prompt cache (OpenAI `prompt_cache_key`). */
  cacheKey?: string;
  promptCache?: PromptCacheSettings;
  /** Whether the model may call several tools in one response (default: provider default). */
  parallelToolCalls?: boolean;
}

export interface Request {
  system?: string;
  items: Item[];
  tools?: ToolSpec[];
  settings?: RequestSettings;
  /**
   * Provider built-in (server-side) tools passed through verbatim, e.g.
   * `{ type: "web_search" }` for OpenAI Responses.
   */
  serverTools?: Record<string, unknown>[];
}

/** Retry policy shared by every provider (the SDKs' own retries are turned off). */
export interface RetryOptions {
  /** Total attempts including the first. Default 4. */
  maxAttempts?: number;
  /** First backoff delay. Default 500 ms. */
  initialDelayMs?: number;
  /** Cap of one backoff delay. Default 20 s. */
  maxDelayMs?: number;
  /** A server `retry-after` above this fails fast instead of waiting. Default 60 s. */
  maxRetryAfterMs?: number;
  /** Total time budget for all attempts and waits. Default 120 s. */
  totalBudgetMs?: number;
}

export interface TimeoutOptions {
  /** Time from sending the request to the first event. Default 60 s. */
  firstEventMs?: number;
  /** Longest silence between two events once streaming. Default 120 s. */
  idleMs?: number;
}

/** Something the client wants a caller to know without failing (e.g. a dropped setting). */
export interface ClientWarning {
  /**
   * `unsupported_setting`: a setting the model cannot take was not sent.
   * `dropped_reasoning`: reasoning from another provider was not sent.
   * `repaired_history`: tool calls without results (or results without calls) were made valid.
   */
  code: "unsupported_setting" | "dropped_reasoning" | "unknown_event" | "repaired_history";
  message: string;
  detail?: Record<string, unknown>;
}

export interface ClientOptions {
  /**
   * Which provider: a built-in kind for `createClient`; with
   * `createClientWithAdapter`, the outside adapter's own name (it appears in
   * errors and marks the reasoning items it produces).
   */
  provider: ProviderName;
  /** Model id as the provider names it. */
  model: string;
  apiKey?: string;
  baseURL?: string;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  retry?: RetryOptions;
  timeout?: TimeoutOptions;
  /**
   * Receives the warnings of every call (retries are `retry` events on the
   * stream); a call's own `StreamOptions.onWarning` receives its warnings too.
   */
  onWarning?: (warning: ClientWarning) => void;
  /** Sees every raw provider payload (debugging, unknown events). */
  onRawEvent?: (payload: unknown) => void;
  /**
   * Whether the server accepts a system message after the first turn.
   * Default: per adapter. OpenAI's own APIs do; an OpenAI-compatible server
   * (any other `baseURL`) is assumed not to (llama.cpp and vLLM chat
   * templates reject it); Anthropic and Gemini take system text only at the
   * top, whatever this says. A non-leading system message the target does
   * not accept is sent as user-role text wrapped in `<system-reminder>`.
   * Set it from the catalog or config (`capabilities.systemMessagesAnywhere`).
   */
  systemMessagesAnywhere?: boolean;
}

export interface StreamOptions {
  signal?: AbortSignal;
  /**
   * Receives this call's warnings (settings the model cannot take, history
   * repaired), after the client's own `onWarning`: the caller that makes the
   * request hears about it without wiring itself into the client.
   */
  onWarning?: (warning: ClientWarning) => void;
}

export interface LlmClient {
  readonly provider: ProviderName;
  readonly model: string;
  /**
   * Streams one model call. Failures are retried per the policy (reported as
   * `retry` events) while no tool call has completed; otherwise they are
   * `error` events followed by `status: failed`.
   */
  stream(request: Request, options?: StreamOptions): AsyncIterable<Event>;
  /**
   * Loads what the first call needs (the provider's adapter and SDK) now, so
   * that it can overlap other work (reading files, waiting for git) instead
   * of delaying the request. Never rejects: a failure is the call's to report.
   */
  prepare?(): Promise<void>;
}
