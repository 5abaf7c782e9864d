/**
 * One clear line for any error that reaches the top, and its exit code.
 * Errors are told by their class and typed code (never by matching message
 * text). The libraries state facts; the words that name the CLI's flags,
 * commands and keys are added here. Provider errors name the provider and
 * what to do; API keys are never printed.
 */
import { LlmError, type LlmErrorCode, redactSecrets, registerSecret } from "@yoi/llm-client";
import type { WorkerError } from "@yoi/llm-worker";
import { ConfigError } from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import { type Alert, PermissionModeError, SANDBOX_NOTICE_TAIL } from "@yoi/pod";
import { CliError } from "./cli-error.ts";
import { EXIT, type ExitCode } from "./exit-codes.ts";
import { SANDBOX_NOTICE_CLI_TAIL } from "./permission-flags.ts";
import { formatReset } from "./rate-limit-reset.ts";
import { sanitize } from "./terminal-text.ts";

/** What a provider failure message needs to know about the session. */
export interface ProviderContext {
  /** Provider name as configured (`anthropic`, `openai-chat`, ...). */
  provider: string;
  model?: string;
  baseURL?: string;
  /** Variable the key came from. */
  keyEnv?: string;
  /** Base URL variable of the provider (for messages). */
  baseURLEnv?: string;
  customServer?: boolean;
  /** Secrets to scrub from any text shown (the API key). */
  secrets?: readonly string[];
}

/** One line for any error, for a person: secrets scrubbed, control characters made visible. */
export function describeError(
  error: unknown,
  context?: ProviderContext,
): { message: string; exitCode: ExitCode } {
  const described = describe(error, context);
  return { ...described, message: sanitize(described.message) };
}

function describe(error: unknown, context?: ProviderContext): { message: string; exitCode: ExitCode } {
  if (CliError.isInstance(error)) return { message: error.message, exitCode: error.exitCode };
  if (ConfigError.isInstance(error)) return { message: error.message, exitCode: EXIT.usage };
  if (PermissionModeError.isInstance(error))
    return { message: describePermissionSetting(error), exitCode: EXIT.usage };
  if (LlmError.isInstance(error)) {
    const failure: WorkerError = {
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      ...(error.status !== undefined ? { status: error.status } : {}),
    };
    const ctx = context ?? { provider: error.provider ?? "the provider" };
    return {
      message: describeFailure(failure, ctx),
      exitCode: error.code === "config" ? EXIT.usage : EXIT.error,
    };
  }
  const message = errorMessage(error);
  return { message: scrub(`internal error: ${message}`, context?.secrets), exitCode: EXIT.error };
}

/** A permission setting the session cannot take, with the flag that allows it where there is one. */
export function describePermissionSetting(error: PermissionModeError): string {
  return error.code === "bypass_without_sandbox"
    ? `${error.message}; pass --dangerously-bypass-without-sandbox to allow it anyway`
    : error.message;
}

/**
 * An alert's message, with what to do about it in this part of the CLI where
 * the pod states only the fact: on the screen a slash command, in print mode
 * a flag.
 */
export function describeAlert(
  alert: Pick<Alert, "source" | "code" | "message">,
  ui: "screen" | "print",
): string {
  if (alert.source === "file_ref" && alert.code === "unsupported")
    return `${alert.message} (${ui === "screen" ? "/model switches the model" : "--model chooses another"})`;
  // Said when the sandbox probe, run after the session opened, found none (sandboxNotice says it at the start).
  if (alert.source === "sandbox" && alert.code === "sandbox_unavailable")
    return alert.message.replace(SANDBOX_NOTICE_TAIL, SANDBOX_NOTICE_CLI_TAIL);
  return alert.message;
}

/**
 * Why a server could not be reached, for the line that already says so: the
 * system's reason and what the client added after its own sentence (how
 * often it tried), or the whole message when it did not say why.
 */
function unreachableBecause(error: WorkerError, detail: string, secrets: ProviderContext["secrets"]): string {
  if (error.networkReason === undefined) return `: ${detail}`;
  const reason = scrub(error.networkReason, secrets);
  const own = `could not reach the server (${reason})`;
  return detail.startsWith(own) ? ` (${reason})${detail.slice(own.length)}` : `: ${detail}`;
}

/** One line for a failed run (a worker error), naming the provider and what to do. */
export function describeFailure(error: WorkerError, ctx: ProviderContext): string {
  const code = error.code as LlmErrorCode | WorkerError["code"];
  const where = ctx.baseURL ?? "its API";
  const status = error.status !== undefined ? ` (HTTP ${error.status})` : "";
  // A client's message starts with the provider's name, which every line below already says.
  const message = firstLine(scrub(error.message, ctx.secrets));
  const detail = message.startsWith(`${ctx.provider}: `) ? message.slice(ctx.provider.length + 2) : message;
  let line: string;
  // A server error without an HTTP status never got an answer: the server is unreachable.
  const unreachable = code === "server" && error.status === undefined;
  switch (unreachable ? "network" : code) {
    case "auth":
      line =
        error.status === 403
          ? `${ctx.provider} refused the request${status}: the API key lacks access to ${ctx.model ?? "this model"}; check ${ctx.keyEnv ?? "the key"} and the account's permissions`
          : `${ctx.provider} rejected the API key${status}; check ${ctx.keyEnv ?? "the provider's key variable"} (a current key from the provider's console)`;
      break;
    case "network":
      line = `cannot reach ${ctx.provider} at ${where}${unreachableBecause(error, detail, ctx.secrets)}; check ${ctx.customServer ? "that the server is running and" : "your network and"} the base URL (--base-url${ctx.baseURLEnv ? ` or ${ctx.baseURLEnv}` : ""})`;
      break;
    case "timeout":
      line = `${ctx.provider} at ${where} did not answer in time (${detail}); try again, or check the server`;
      break;
    case "rate_limit":
      line =
        error.resetAt !== undefined
          ? `${ctx.provider} is rate limiting this key${status} until ${formatReset(error.resetAt)}, longer than yoi waits by itself (retry.maxRetryAfterMs, retry.totalBudgetMs); go on after that (yoi -c), or use another model`
          : `${ctx.provider} is rate limiting this key${status}; wait a minute and try again, or use another model`;
      break;
    case "overloaded":
    case "server":
      line = `${ctx.provider} had a server problem${status}: ${detail}; try again later`;
      break;
    case "context_overflow":
      line = `the conversation no longer fits ${ctx.model ?? "the model"}'s context window: ${detail}; run /compact or start a new session`;
      break;
    case "invalid_request":
      line =
        error.status === 404
          ? `${ctx.provider} at ${where} has no model "${ctx.model ?? "?"}" or no such endpoint${status}: ${detail}${ctx.customServer ? "; for an OpenAI-compatible server use --model openai-chat/<model>" : ""}`
          : `${ctx.provider} rejected the request${status}: ${detail}`;
      break;
    case "limit_exceeded":
    case "storage":
      // Not the provider's: a bound of the worker's (the message names its setting) or a disk that cannot be written.
      line = detail;
      break;
    case "content_filter":
      line = `${ctx.provider} blocked the response (content filter): ${detail}`;
      break;
    default:
      line = `${ctx.provider}${status}: ${detail}`;
  }
  // Provider messages are the server's text: shown, never acted on by the terminal.
  return sanitize(scrub(line, ctx.secrets));
}

/**
 * Removes `secrets` and every other secret yoi knows of (the one redactor of
 * @yoi/llm-client: keys, custom header values, credentials in URLs).
 */
export function scrub(text: string, secrets: readonly string[] = []): string {
  for (const secret of secrets) registerSecret(secret);
  return redactSecrets(text);
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}
