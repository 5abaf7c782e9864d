import { randomUUID } from "node:crypto";
import type {
  FunctionCall,
  GenerateContentResponse,
  GenerateContentResponseUsageMetadata,
} from "@google/genai";
import { LlmError } from "../../errors.ts";
import type { Event, StopReason, Usage } from "../../event.ts";
import type { Citation, ProviderData, ServerToolItem, ServerToolSource } from "../../item.ts";
import type { AdapterStream, Normalizer } from "../adapter.ts";
import { endAborted, failStream, OpenBlocks } from "../stream-end.ts";
import { classifyGeminiError } from "./errors.ts";
import { FUNCTION_CALL_ID, THOUGHT_SIGNATURE } from "./request.ts";

interface TextRun {
  index: number;
  block: "text" | "thinking";
  signature?: string;
}

/** A call whose arguments Gemini streams as `partialArgs` (Vertex `streamFunctionCallArguments`). */
interface PendingCall {
  index: number;
  args: Record<string, unknown>;
  /** Path of a string value still being continued. */
  continuing?: string;
  providerData: ProviderData | undefined;
}

export interface GeminiNormalizeOptions {
  signal: AbortSignal;
  /** Retry-after of the last HTTP error, for classification. */
  retryAfterMs?: () => number | undefined;
}

const FILTERED = new Set(["SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY"]);

/**
 * Normalizes a `generateContentStream` iterator into the flat Event union.
 * Parts of one kind that follow each other form one block; a thought
 * signature stays with the block (text, thinking or tool call) whose part
 * carried it, so it can be sent back on the same part.
 *
 * Google Search grounding (`groundingMetadata`, the latest a chunk sent)
 * becomes one `server_tool` event at the end (the queries and the pages
 * found), and its supports become the citations of the text block open
 * at the end. Gemini takes none of it back: nothing of it is replayed.
 */
export function normalizeGeminiStream(
  stream: AsyncIterable<GenerateContentResponse>,
  options: GeminiNormalizeOptions,
): AdapterStream {
  const { signal } = options;
  // The client hands its queue to every call; events are pushed onto it.
  let out: Event[] = [];
  let started = false;
  let nextIndex = 0;
  let run: TextRun | undefined;
  let pending: PendingCall | undefined;
  let sawToolCall = false;
  let finishReason: string | undefined;
  let blockReason: string | undefined;
  let usageMeta: GenerateContentResponseUsageMetadata | undefined;
  let grounding: GroundingMetadata | undefined;

  function closeRun(citations?: Citation[]): void {
    if (!run) return;
    const current = run;
    run = undefined;
    if (current.block === "thinking") {
      out.push({
        type: "block_stop",
        index: current.index,
        block: "thinking",
        replay: {
          provider: "gemini",
          ...(current.signature === undefined
            ? {}
            : { providerData: { [THOUGHT_SIGNATURE]: current.signature } }),
        },
      });
    } else {
      out.push({
        type: "block_stop",
        index: current.index,
        block: "text",
        ...(current.signature === undefined
          ? {}
          : { providerData: { [THOUGHT_SIGNATURE]: current.signature } }),
        ...(citations !== undefined && citations.length > 0 ? { citations } : {}),
      });
    }
  }

  function finishPending(): void {
    if (!pending) return;
    const call = pending;
    pending = undefined;
    out.push({
      type: "block_delta",
      index: call.index,
      delta: "input_json",
      text: JSON.stringify(call.args),
    });
    out.push({
      type: "block_stop",
      index: call.index,
      block: "tool_use",
      ...(call.providerData === undefined ? {} : { providerData: call.providerData }),
    });
  }

  /** The open blocks in the shared form of stream-end.ts (they are ending: forgotten here). */
  function openBlocks(): OpenBlocks {
    const blocks = new OpenBlocks();
    if (run) blocks.start(run.index, run.block);
    if (pending) blocks.start(pending.index, "tool_use");
    run = undefined;
    pending = undefined;
    return blocks;
  }

  function fail(error: LlmError): void {
    out.push(...failStream(error, openBlocks()));
  }

  function startCall(call: FunctionCall, signature: string | undefined): void {
    closeRun();
    sawToolCall = true;
    const index = nextIndex++;
    // Gemini often gives no id; the same function may be called twice in one response.
    const id = call.id ?? `call_${randomUUID()}`;
    out.push({ type: "block_start", index, block: "tool_use", id, name: call.name ?? "" });
    let providerData: ProviderData | undefined;
    if (call.id !== undefined || signature !== undefined) {
      providerData = {};
      if (call.id !== undefined) providerData[FUNCTION_CALL_ID] = call.id;
      if (signature !== undefined) providerData[THOUGHT_SIGNATURE] = signature;
    }
    if (call.willContinue) {
      pending = { index, args: { ...(call.args ?? {}) }, providerData };
      applyPartialArgs(pending, call);
      return;
    }
    out.push({ type: "block_delta", index, delta: "input_json", text: JSON.stringify(call.args ?? {}) });
    out.push({
      type: "block_stop",
      index,
      block: "tool_use",
      ...(providerData === undefined ? {} : { providerData }),
    });
  }

  // Gemini has no terminal payload: the stream's end decides (see \`end\`).
  const step = (chunk: GenerateContentResponse): boolean => {
    if (!started) {
      started = true;
      out.push({
        type: "status",
        status: "started",
        ...(chunk.modelVersion === undefined ? {} : { model: chunk.modelVersion }),
        ...(chunk.responseId === undefined ? {} : { responseId: chunk.responseId }),
      });
    }
    // Each chunk carries the running totals: keep the latest, convert once at the end.
    if (chunk.usageMetadata) usageMeta = chunk.usageMetadata;
    if (chunk.promptFeedback?.blockReason) blockReason = chunk.promptFeedback.blockReason;
    const candidate = chunk.candidates?.[0];
    const parts = candidate?.content?.parts;
    if (parts) {
      for (const part of parts) {
        const call = part.functionCall;
        if (call) {
          if (pending) {
            if (call.name !== undefined) {
              finishPending();
              startCall(call, part.thoughtSignature);
            } else if (call.partialArgs !== undefined || call.willContinue) {
              applyPartialArgs(pending, call);
            } else {
              finishPending();
            }
            continue;
          }
          if (call.name === undefined && call.partialArgs === undefined) continue;
          startCall(call, part.thoughtSignature);
          continue;
        }
        const text = part.text;
        if (typeof text !== "string") continue; // inline data, code execution, ...: not ours to render
        const signature = part.thoughtSignature;
        if (text === "" && signature === undefined) continue;
        finishPending();
        const kind = part.thought ? "thinking" : "text";
        // A signed part is never merged with a later one: each goes back with its own signature.
        if (run && (run.block !== kind || run.signature !== undefined)) closeRun();
        if (!run) {
          run = { index: nextIndex++, block: kind };
          out.push({ type: "block_start", index: run.index, block: kind });
        }
        if (text !== "") out.push({ type: "block_delta", index: run.index, delta: kind, text });
        if (signature !== undefined) run.signature = signature;
      }
    }
    if (candidate?.groundingMetadata) grounding = candidate.groundingMetadata as GroundingMetadata;
    if (candidate?.finishReason) finishReason = candidate.finishReason;
    return false;
  };

  const end = (): void => {
    if (signal.aborted) {
      cancelled(started);
      return;
    }
    if (!started) out.push({ type: "status", status: "started" });
    if (finishReason === undefined && blockReason === undefined) {
      fail(
        new LlmError(
          "incomplete_stream",
          "the Gemini stream ended without a finishReason: the connection was cut or the server stopped",
          { provider: "gemini" },
        ),
      );
      return;
    }
    if (finishReason === "MALFORMED_FUNCTION_CALL" || finishReason === "UNEXPECTED_TOOL_CALL") {
      fail(
        new LlmError(
          "parse",
          `Gemini stopped with ${finishReason}: the model produced a function call that does not match the declared tools`,
          { provider: "gemini", retryable: true },
        ),
      );
      return;
    }
    finishPending();
    if (grounding !== undefined) {
      closeRun(run?.block === "text" ? groundingCitations(grounding) : undefined);
      const search = groundingSearch(grounding);
      if (search) out.push({ type: "server_tool", index: nextIndex++, item: search });
    }
    closeRun();
    const usage = usageMeta ? toUsage(usageMeta) : undefined;
    if (usage) out.push({ type: "usage", usage });
    out.push({
      type: "status",
      status: "completed",
      stopReason: stopReasonOf(finishReason, blockReason, sawToolCall),
    });
  };

  function cancelled(wasStarted: boolean): void {
    if (!wasStarted) out.push({ type: "status", status: "started" });
    // The shared ending: a timeout (the client's LlmError abort reason) fails, anything else cancels.
    out.push(...endAborted(signal, openBlocks()));
  }

  const normalizer: Normalizer = {
    payload(payload, queue) {
      out = queue;
      return step(payload as GenerateContentResponse);
    },
    end(queue) {
      out = queue;
      end();
    },
    fail(error, queue) {
      out = queue;
      if (signal.aborted) {
        cancelled(started);
        return;
      }
      if (!started) out.push({ type: "status", status: "started" });
      fail(classifyGeminiError(error, { inStream: true, retryAfterHeaderMs: options.retryAfterMs?.() }));
    },
  };
  return { payloads: stream, normalizer };
}

/** The fields of Gemini's `groundingMetadata` read here (Google Search grounding). */
interface GroundingMetadata {
  webSearchQueries?: string[];
  groundingChunks?: Array<{ web?: { uri?: string; title?: string } }>;
  groundingSupports?: Array<{
    segment?: { text?: string };
    groundingChunkIndices?: number[];
  }>;
}

/** The search as one server tool item: the queries Gemini ran and the pages it grounded on. */
function groundingSearch(meta: GroundingMetadata): ServerToolItem | undefined {
  const queries = (meta.webSearchQueries ?? []).filter((q) => typeof q === "string" && q !== "");
  const sources: ServerToolSource[] = [];
  for (const chunk of meta.groundingChunks ?? []) {
    const uri = chunk.web?.uri;
    if (typeof uri !== "string" || uri === "") continue;
    const title = chunk.web?.title;
    sources.push(typeof title === "string" && title !== "" ? { url: uri, title } : { url: uri });
  }
  if (queries.length === 0 && sources.length === 0) return undefined;
  return {
    type: "server_tool",
    callId: `search_${randomUUID()}`,
    name: "web_search",
    arguments: JSON.stringify(queries.length === 1 ? { query: queries[0] } : { queries }),
    status: "completed",
    sources,
    provider: "gemini",
  };
}

/** Each grounding support as a citation of the page(s) it rests on, with the supported text. */
function groundingCitations(meta: GroundingMetadata): Citation[] {
  const chunks = meta.groundingChunks ?? [];
  const out: Citation[] = [];
  for (const support of meta.groundingSupports ?? []) {
    for (const at of support.groundingChunkIndices ?? []) {
      const web = chunks[at]?.web;
      if (typeof web?.uri !== "string" || web.uri === "") continue;
      const citation: Citation = { url: web.uri, provider: "gemini" };
      if (typeof web.title === "string" && web.title !== "") citation.title = web.title;
      const text = support.segment?.text;
      if (typeof text === "string" && text !== "") citation.citedText = text;
      out.push(citation);
    }
  }
  return out;
}

function stopReasonOf(
  finish: string | undefined,
  block: string | undefined,
  sawToolCall: boolean,
): StopReason {
  if (finish === undefined) return block === undefined ? "end_turn" : "content_filter";
  if (FILTERED.has(finish)) return "content_filter";
  if (finish === "MAX_TOKENS") return "max_tokens";
  if (sawToolCall) return "tool_use";
  return "end_turn";
}

/**
 * Gemini counts thoughts apart from candidates; our convention puts
 * reasoning inside output. promptTokenCount already includes cached content.
 */
function toUsage(meta: GenerateContentResponseUsageMetadata): Usage | undefined {
  const out: Usage = {};
  let any = false;
  if (meta.promptTokenCount !== undefined) {
    out.inputTokens = meta.promptTokenCount + (meta.toolUsePromptTokenCount ?? 0);
    any = true;
  }
  if (meta.candidatesTokenCount !== undefined || meta.thoughtsTokenCount !== undefined) {
    out.outputTokens = (meta.candidatesTokenCount ?? 0) + (meta.thoughtsTokenCount ?? 0);
    any = true;
  }
  if (meta.cachedContentTokenCount !== undefined) {
    out.cacheReadTokens = meta.cachedContentTokenCount;
    any = true;
  }
  if (meta.thoughtsTokenCount !== undefined) {
    out.reasoningTokens = meta.thoughtsTokenCount;
    any = true;
  }
  return any ? out : undefined;
}

/** Applies streamed `partialArgs` (`$.a.b[0]` paths) to the call's argument object. */
function applyPartialArgs(call: PendingCall, fc: FunctionCall): void {
  for (const arg of fc.partialArgs ?? []) {
    const path = arg.jsonPath;
    if (!path) continue;
    if (arg.stringValue !== undefined) {
      if (call.continuing === path) {
        const previous = getPath(call.args, path);
        setPath(call.args, path, `${typeof previous === "string" ? previous : ""}${arg.stringValue}`);
      } else {
        setPath(call.args, path, arg.stringValue);
      }
      call.continuing = arg.willContinue ? path : undefined;
      continue;
    }
    call.continuing = undefined;
    if (arg.numberValue !== undefined) setPath(call.args, path, arg.numberValue);
    else if (arg.boolValue !== undefined) setPath(call.args, path, arg.boolValue);
    else if (arg.nullValue !== undefined) setPath(call.args, path, null);
  }
}

function segments(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  const re = /\.([A-Za-z0-9_$-]+)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]/g;
  for (const match of path.slice(1).matchAll(re)) {
    if (match[1] !== undefined) out.push(match[1]);
    else if (match[2] !== undefined) out.push(Number(match[2]));
    else out.push(match[3] ?? match[4] ?? "");
  }
  return out;
}

function getPath(root: Record<string, unknown>, path: string): unknown {
  let node: unknown = root;
  for (const key of segments(path)) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

function setPath(root: Record<string, unknown>, path: string, value: unknown): void {
  const keys = segments(path);
  let node = root as Record<string | number, unknown>;
  for (let i = 0; i < keys.length - 1; i++) {
    const key = keys[i] as string | number;
    let next = node[key];
    if (next === null || typeof next !== "object") {
      next = typeof keys[i + 1] === "number" ? [] : {};
      node[key] = next;
    }
    node = next as Record<string | number, unknown>;
  }
  const last = keys.at(-1);
  if (last !== undefined) node[last] = value;
}
