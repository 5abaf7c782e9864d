/**
 * OpenTelemetry of the agent loop, through `@opentelemetry/api` only (a
 * no-op until an application registers an SDK): an `invoke_agent` span per
 * run, an `execute_tool <name>` span per tool call, and the tool-duration
 * histogram, after the GenAI semantic conventions (docs/telemetry.md). The
 * model calls' `chat` spans come from llm-client and hang under the run's
 * span because the loop runs inside its context.
 */
import {
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import {
  activeContext,
  captureMessageContent,
  GEN_AI_DURATION_BUCKETS,
  genAiProviderName,
  type LlmClient,
  lazyHistogram,
  redactSecrets,
  withSpan,
} from "@yoi/llm-client";
import type { ToolCallInfo, ToolOutcome } from "./interceptor.ts";
import type { RunOptions, RunResult } from "./options.ts";

const SCOPE = "@yoi/llm-worker";

const toolDurationHistogram = lazyHistogram(SCOPE, "yoi.tool.duration", {
  description: "Duration of a tool call, from its start to its result",
  unit: "s",
  advice: { explicitBucketBoundaries: GEN_AI_DURATION_BUCKETS },
});

/**
 * Runs `body` (one run or resume of the loop) inside an `invoke_agent` span
 * and ends the span with the run's outcome.
 */
export async function inAgentSpan(
  client: LlmClient,
  runId: string,
  mode: "run" | "resume",
  agent: RunOptions["agent"],
  body: () => Promise<RunResult>,
): Promise<RunResult> {
  const attributes: Attributes = {
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.provider.name": genAiProviderName(client.provider),
    "gen_ai.request.model": client.model,
    "yoi.run.id": runId,
    "yoi.run.mode": mode,
  };
  if (agent?.name !== undefined) attributes["gen_ai.agent.name"] = agent.name;
  if (agent?.id !== undefined) attributes["gen_ai.agent.id"] = agent.id;
  if (agent?.conversationId !== undefined) attributes["gen_ai.conversation.id"] = agent.conversationId;
  const name = agent?.name === undefined ? "invoke_agent" : `invoke_agent ${agent.name}`;
  const span = trace.getTracer(SCOPE).startSpan(name, { kind: SpanKind.INTERNAL, attributes });
  let result: RunResult | undefined;
  try {
    result = await withSpan(activeContext(), span, body);
    return result;
  } finally {
    if (result === undefined) {
      span.setAttribute("error.type", "internal");
      span.setStatus({ code: SpanStatusCode.ERROR });
    } else {
      span.setAttribute("yoi.run.status", result.status);
      span.setAttribute("yoi.run.turns", result.turns);
      if (result.usage.inputTokens !== undefined)
        span.setAttribute("gen_ai.usage.input_tokens", result.usage.inputTokens);
      if (result.usage.outputTokens !== undefined)
        span.setAttribute("gen_ai.usage.output_tokens", result.usage.outputTokens);
      if (result.error !== undefined) {
        span.setAttribute("error.type", result.error.code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: redactSecrets(result.error.message) });
      }
    }
    span.end();
  }
}

/** The span of one tool call, with what its end needs. */
export interface ToolSpan {
  /** The context the tool runs in (its own spans, a subagent's, hang under this one). */
  readonly context: Context;
  end(outcome: ToolOutcome, isError: boolean, output: string): void;
}

/** Starts the `execute_tool <name>` span of a call, under `parent` (the run's context). */
export function startToolSpan(info: ToolCallInfo, batchSize: number, parent: Context): ToolSpan {
  const attributes: Attributes = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": info.name,
    "gen_ai.tool.call.id": info.callId,
    "gen_ai.tool.type": "function",
    "yoi.tool.batch.id": info.batchId,
    "yoi.tool.batch.index": info.callIndex,
    "yoi.tool.batch.size": batchSize,
    "yoi.turn.index": info.turnIndex,
  };
  const capture = captureMessageContent();
  if (capture) attributes["gen_ai.tool.call.arguments"] = redactSecrets(info.arguments);
  const started = performance.now();
  const span: Span = trace
    .getTracer(SCOPE)
    .startSpan(`execute_tool ${info.name}`, { kind: SpanKind.INTERNAL, attributes }, parent);
  return {
    context: trace.setSpan(parent, span),
    end(outcome, isError, output) {
      span.setAttribute("yoi.tool.outcome", outcome);
      const metricAttributes: Attributes = { "gen_ai.tool.name": info.name, "yoi.tool.outcome": outcome };
      if (isError) {
        // The outcome names the failure kind (error, timeout, invalid_args, skipped, ...).
        span.setAttribute("error.type", outcome);
        span.setStatus({ code: SpanStatusCode.ERROR });
        metricAttributes["error.type"] = outcome;
      }
      if (capture) span.setAttribute("gen_ai.tool.call.result", redactSecrets(output));
      span.end();
      toolDurationHistogram().record((performance.now() - started) / 1000, metricAttributes);
    },
  };
}
