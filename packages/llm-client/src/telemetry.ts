/**
 * OpenTelemetry for model calls, through `@opentelemetry/api` only: without
 * an SDK registered by the application every call below is a no-op. One
 * `chat <model>` span per `stream` call and the GenAI client metrics, after
 * the OpenTelemetry GenAI semantic conventions (docs/telemetry.md).
 *
 * Prompt and completion text are recorded only when
 * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, and then
 * through {@link redactSecrets} like everything else that leaves the process.
 */
import {
  type Attributes,
  type Context,
  context,
  type Histogram,
  type MetricOptions,
  metrics,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import type { Event, StopReason, Usage } from "./event.ts";
import type { Item } from "./item.ts";
import { redactSecrets } from "./redact.ts";
import type { Request } from "./request.ts";

/** The instrumentation scope of the library's spans and metrics. */
const SCOPE = "@yoi/llm-client";

/** Bucket bounds the conventions advise for `gen_ai.client.token.usage`. */
const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
/** Bucket bounds the conventions advise for `gen_ai.client.operation.duration` (seconds). */
export const GEN_AI_DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/**
 * Whether prompt and completion text (and tool arguments and results) go
 * into spans: the GenAI instrumentations' standard opt-in variable. Read on
 * each call, so a test or an embedding application may set it late.
 */
export function captureMessageContent(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === "true";
}

/**
 * `gen_ai.provider.name` for a yoi provider kind: the conventions' well-known
 * values where there is one, the name itself for a provider plugged in.
 */
export function genAiProviderName(provider: string): string {
  switch (provider) {
    case "openai-chat":
    case "openai-responses":
      return "openai";
    case "gemini":
      return "gcp.gemini";
    default:
      return provider;
  }
}

/**
 * A histogram of the instrumentation scope `scope`, made when first asked
 * for (never at import time) and made again when the application has
 * registered another meter provider since (an SDK registered late gets its own).
 */
export function lazyHistogram(scope: string, name: string, options: MetricOptions): () => Histogram {
  let histogram: Histogram | undefined;
  let from: unknown;
  return () => {
    const provider = metrics.getMeterProvider();
    if (histogram === undefined || from !== provider) {
      from = provider;
      histogram = provider.getMeter(scope).createHistogram(name, options);
    }
    return histogram;
  };
}

const tokenHistogram = lazyHistogram(SCOPE, "gen_ai.client.token.usage", {
  description: "Tokens used by a model call, by gen_ai.token.type (input, output)",
  unit: "{token}",
  advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
});
const durationHistogram = lazyHistogram(SCOPE, "gen_ai.client.operation.duration", {
  description: "Duration of a model call, from the request to the end of its stream",
  unit: "s",
  advice: { explicitBucketBoundaries: GEN_AI_DURATION_BUCKETS },
});

/** What a model call's telemetry needs to know of its client. */
export interface CallTelemetryOptions {
  provider: string;
  model: string;
  baseURL?: string | undefined;
}

/**
 * The telemetry of one model call: a span started when the call starts,
 * fed the events the caller receives, ended (with the metrics recorded) by
 * the terminal status or when the caller stops reading.
 */
export class CallTelemetry {
  readonly #span: Span;
  readonly #parent: Context;
  readonly #started = performance.now();
  readonly #attributes: Attributes;
  readonly #capture: boolean;
  #usage: Usage = {};
  #responseModel: string | undefined;
  #errorType: string | undefined;
  #ended = false;
  /** Output text and tool calls, kept only when content is captured. */
  #output: Map<number, { kind: string; id?: string; name?: string; text: string }> | undefined;

  constructor(options: CallTelemetryOptions, request: Request, parent: Context) {
    const provider = genAiProviderName(options.provider);
    this.#parent = parent;
    this.#attributes = {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": provider,
      "gen_ai.request.model": options.model,
    };
    const attributes: Attributes = { ...this.#attributes, ...requestAttributes(request, options.baseURL) };
    this.#capture = captureMessageContent();
    if (this.#capture) {
      attributes["gen_ai.input.messages"] = redactSecrets(JSON.stringify(inputMessages(request.items)));
      if (request.system !== undefined)
        attributes["gen_ai.system_instructions"] = redactSecrets(
          JSON.stringify([{ type: "text", content: request.system }]),
        );
      this.#output = new Map();
    }
    this.#span = trace
      .getTracer(SCOPE)
      .startSpan(`chat ${options.model}`, { kind: SpanKind.CLIENT, attributes }, parent);
  }

  /** Runs `fn` with the call's span active: what the provider SDK traces hangs under it. */
  within<T>(fn: () => T): T {
    return withSpan(this.#parent, this.#span, fn);
  }

  /** Whether block deltas are wanted (only to capture the completion's text). */
  get wantsDeltas(): boolean {
    return this.#output !== undefined;
  }

  /** One event on its way to the caller. */
  event(event: Event): void {
    if (this.#ended) return;
    switch (event.type) {
      case "status":
        if (event.status === "started") {
          if (event.model !== undefined) this.#responseModel = event.model;
          if (event.responseId !== undefined) this.#span.setAttribute("gen_ai.response.id", event.responseId);
          return;
        }
        this.end(event.status === "completed" ? event.stopReason : undefined);
        return;
      case "usage":
        // Later values win per field (event.ts).
        this.#usage = { ...this.#usage, ...event.usage };
        return;
      case "retry":
        this.#span.addEvent("yoi.retry", {
          "yoi.retry.attempt": event.attempt,
          "yoi.retry.max_attempts": event.maxAttempts,
          "yoi.retry.delay_ms": event.delayMs,
          "yoi.retry.discarded": event.discarded,
          "error.type": event.code,
          ...(event.status !== undefined ? { "http.response.status_code": event.status } : {}),
        });
        if (event.discarded) this.#output?.clear();
        return;
      case "error":
        this.#errorType = event.code;
        this.#span.setStatus({ code: SpanStatusCode.ERROR, message: redactSecrets(event.message) });
        return;
      case "block_start":
        this.#output?.set(event.index, {
          kind: event.block,
          ...(event.id !== undefined ? { id: event.id } : {}),
          ...(event.name !== undefined ? { name: event.name } : {}),
          text: "",
        });
        return;
      case "block_delta":
        if (this.#output !== undefined) {
          const block = this.#output.get(event.index);
          if (block) block.text += event.text;
          else
            this.#output.set(event.index, {
              kind: event.delta === "input_json" ? "tool_use" : event.delta,
              text: event.text,
            });
        }
        return;
      case "block_abort":
        this.#output?.delete(event.index);
        return;
      default:
        return;
    }
  }

  /**
   * Ends the span and records the metrics, once. `stopReason` is the
   * completed call's; a call the caller stopped reading ends without one.
   */
  end(stopReason?: StopReason): void {
    if (this.#ended) return;
    this.#ended = true;
    const span = this.#span;
    const responseModel = this.#responseModel ?? String(this.#attributes["gen_ai.request.model"]);
    const metricAttributes: Attributes = { ...this.#attributes, "gen_ai.response.model": responseModel };
    if (this.#errorType !== undefined) {
      metricAttributes["error.type"] = this.#errorType;
      span.setAttribute("error.type", this.#errorType);
    }
    span.setAttribute("gen_ai.response.model", responseModel);
    if (stopReason !== undefined) span.setAttribute("gen_ai.response.finish_reasons", [stopReason]);
    const usage = this.#usage;
    if (usage.inputTokens !== undefined) span.setAttribute("gen_ai.usage.input_tokens", usage.inputTokens);
    if (usage.outputTokens !== undefined) span.setAttribute("gen_ai.usage.output_tokens", usage.outputTokens);
    if (usage.cacheReadTokens !== undefined)
      span.setAttribute("gen_ai.usage.cache_read.input_tokens", usage.cacheReadTokens);
    if (usage.cacheWriteTokens !== undefined)
      span.setAttribute("gen_ai.usage.cache_creation.input_tokens", usage.cacheWriteTokens);
    if (usage.reasoningTokens !== undefined)
      span.setAttribute("yoi.usage.reasoning_tokens", usage.reasoningTokens);
    if (this.#output !== undefined && stopReason !== undefined) {
      span.setAttribute(
        "gen_ai.output.messages",
        redactSecrets(JSON.stringify([outputMessage([...this.#output.values()], stopReason)])),
      );
    }
    span.end();
    const tokens = tokenHistogram();
    durationHistogram().record((performance.now() - this.#started) / 1000, metricAttributes);
    if (usage.inputTokens !== undefined)
      tokens.record(usage.inputTokens, { ...metricAttributes, "gen_ai.token.type": "input" });
    if (usage.outputTokens !== undefined)
      tokens.record(usage.outputTokens, { ...metricAttributes, "gen_ai.token.type": "output" });
  }
}

/** The context active now: where a span started here hangs (a call's span, a batch's tool spans). */
export function activeContext(): Context {
  return context.active();
}

/** Runs `fn` with `span` active, as a child of `parent`: what `fn` traces hangs under the span. */
export function withSpan<T>(parent: Context, span: Span, fn: () => T): T {
  return context.with(trace.setSpan(parent, span), fn);
}

function requestAttributes(request: Request, baseURL: string | undefined): Attributes {
  const out: Attributes = {};
  const settings = request.settings;
  if (settings?.maxTokens !== undefined) out["gen_ai.request.max_tokens"] = settings.maxTokens;
  if (settings?.temperature !== undefined) out["gen_ai.request.temperature"] = settings.temperature;
  if (settings?.topP !== undefined) out["gen_ai.request.top_p"] = settings.topP;
  if (settings?.stopSequences?.length) out["gen_ai.request.stop_sequences"] = settings.stopSequences;
  if (baseURL !== undefined) {
    try {
      const url = new URL(baseURL);
      out["server.address"] = url.hostname;
      const port = url.port !== "" ? Number(url.port) : url.protocol === "http:" ? 80 : 443;
      out["server.port"] = port;
    } catch {
      // The adapter reports an unusable base URL; the span just goes without the server.
    }
  }
  return out;
}

/** History in the conventions' message shape (roles and typed parts). */
function inputMessages(items: readonly Item[]): unknown[] {
  const out: { role: string; parts: unknown[] }[] = [];
  const push = (role: string, part: unknown) => {
    const last = out.at(-1);
    if (last?.role === role) last.parts.push(part);
    else out.push({ role, parts: [part] });
  };
  for (const item of items) {
    switch (item.type) {
      case "message":
        for (const part of item.content) {
          push(
            item.role,
            part.type === "text" ? { type: "text", content: part.text } : { type: "blob", modality: "image" },
          );
        }
        break;
      case "tool_call":
        push("assistant", { type: "tool_call", id: item.callId, name: item.name, arguments: item.arguments });
        break;
      case "tool_result":
        push("tool", { type: "tool_call_response", id: item.callId, response: item.output });
        break;
      case "reasoning":
        if (item.text !== "") push("assistant", { type: "reasoning", content: item.text });
        break;
      case "server_tool":
        push("assistant", {
          type: "server_tool_call",
          id: item.callId,
          name: item.name,
          arguments: item.arguments,
        });
        break;
    }
  }
  return out;
}

function outputMessage(
  blocks: readonly { kind: string; id?: string; name?: string; text: string }[],
  stopReason: StopReason,
): unknown {
  const parts = blocks.map((block) =>
    block.kind === "tool_use"
      ? { type: "tool_call", id: block.id, name: block.name, arguments: block.text }
      : { type: block.kind === "thinking" ? "reasoning" : "text", content: block.text },
  );
  return { role: "assistant", parts, finish_reason: stopReason };
}
