/**
 * The `hooks` config section mapped onto the worker's two extension
 * surfaces (docs/design/file-refs.md#interceptors-and-hooks):
 * - events that may change the run are an Interceptor: PreToolUse (block a
 *   call: the model gets the reason; add context to the call's result),
 *   UserPromptSubmit (block the prompt; add context after it);
 * - events that only observe are a Hook: PostToolUse, Stop (the model ended
 *   its turn);
 * - SessionStart runs once when the session opens; what it prints is added
 *   as context to the first prompt.
 * A hook that fails, hangs or crashes is reported (an error alert naming the
 * event and command) and the run goes on as if it were not there.
 */
import { type Item, messageText, systemMessage } from "@yoi/llm-client";
import type { Hook, Interceptor, ToolCallInfo, ToolResultInfo } from "@yoi/llm-worker";
import type { HookCommandConfig, HookEventName, HooksConfig } from "@yoi/manifest";
import picomatch from "picomatch";
import { HOOK_TIMEOUT_MS, type HookRun, runHook } from "./hook-runner.ts";

export interface ConfiguredHooksOptions {
  hooks: HooksConfig;
  /** The project root: hooks run there. */
  cwd: string;
  /** The hooks' environment (without API keys). */
  env: Readonly<Record<string, string | undefined>>;
  /** The session id, for the hooks' input. */
  sessionId: () => string;
  /** A hook failed or blocked: for the user. */
  onAlert: (level: "warn" | "error", message: string) => void;
}

interface Entry {
  config: HookCommandConfig;
  matches: (tool: string) => boolean;
}

/** The configured hooks of a session. */
export class ConfiguredHooks {
  readonly #options: ConfiguredHooksOptions;
  readonly #entries: Record<HookEventName, Entry[]>;
  /** Context a PreToolUse hook added, by call id, for its result. */
  readonly #callContext = new Map<string, string>();

  constructor(options: ConfiguredHooksOptions) {
    this.#options = options;
    const entries = {} as Record<HookEventName, Entry[]>;
    for (const [event, list] of Object.entries(options.hooks) as [
      HookEventName,
      HookCommandConfig[] | undefined,
    ][]) {
      entries[event] = (list ?? []).map((config) => {
        const isMatch = config.matcher === undefined ? undefined : picomatch(config.matcher);
        return { config, matches: (tool: string) => (isMatch === undefined ? true : isMatch(tool)) };
      });
    }
    this.#entries = entries;
  }

  /** Whether any hook is configured. */
  get configured(): boolean {
    return Object.values(this.#entries).some((list) => list.length > 0);
  }

  /** PreToolUse and UserPromptSubmit: may block or add context. */
  interceptor(): Interceptor {
    return {
      name: "configured-hooks",
      onPromptSubmit: async (info) => {
        if (!this.#has("UserPromptSubmit")) return undefined;
        const first = info.input[0];
        const prompt = first?.type === "message" ? messageText(first) : "";
        const runs = await this.#run("UserPromptSubmit", { prompt }, undefined, info.signal, true);
        const blocked = runs.find((r) => r.outcome === "block");
        if (blocked) {
          this.#options.onAlert("warn", `UserPromptSubmit hook blocked the prompt: ${blocked.reason}`);
          return { action: "cancel", reason: `blocked by a UserPromptSubmit hook: ${blocked.reason}` };
        }
        const items = contextItems(runs, "UserPromptSubmit");
        return items.length > 0 ? { action: "continue_with", items } : undefined;
      },
      beforeToolCall: async (call) => {
        if (!this.#has("PreToolUse", call.name)) return undefined;
        const runs = await this.#run("PreToolUse", toolInput(call), call.name, call.signal, false);
        const blocked = runs.find((r) => r.outcome === "block");
        if (blocked) {
          this.#options.onAlert("warn", `PreToolUse hook blocked ${call.name}: ${blocked.reason}`);
          return { action: "skip", result: `Blocked by a PreToolUse hook: ${blocked.reason}` };
        }
        const context = runs.flatMap((r) => (r.context ? [r.context] : [])).join("\n");
        if (context !== "") this.#callContext.set(call.callId, context);
        return undefined;
      },
      afterToolCall: (call, result) => {
        const context = this.#callContext.get(call.callId);
        if (context === undefined) return undefined;
        this.#callContext.delete(call.callId);
        if (result.outcome !== "ok" && result.outcome !== "error") return undefined;
        // Stored outputs keep their summary and ref; the note goes after it.
        return {
          action: "replace",
          output: `${result.output}\n\n[hook context] ${context}`,
          isError: result.isError,
        };
      },
    };
  }

  /** PostToolUse and Stop: observe only. */
  hook(): Hook {
    return {
      name: "configured-hooks",
      afterToolCall: async (call: ToolCallInfo, result: ToolResultInfo) => {
        if (!this.#has("PostToolUse", call.name)) return;
        await this.#run(
          "PostToolUse",
          {
            ...toolInput(call),
            tool_response: { output: result.output, is_error: result.isError, outcome: result.outcome },
          },
          call.name,
          call.signal,
          false,
        );
      },
      onTurnEnd: async (info) => {
        if (!this.#has("Stop")) return;
        await this.#run(
          "Stop",
          { stop_reason: info.stopReason ?? null, turn: info.turnIndex },
          undefined,
          info.signal,
          false,
        );
      },
    };
  }

  /** Runs the SessionStart hooks; returns the context items they printed. */
  async sessionStart(source: "startup" | "resume"): Promise<Item[]> {
    if (!this.#has("SessionStart")) return [];
    const runs = await this.#run("SessionStart", { source }, undefined, undefined, true);
    return contextItems(runs, "SessionStart");
  }

  #has(event: HookEventName, tool?: string): boolean {
    const list = this.#entries[event] ?? [];
    return tool === undefined ? list.length > 0 : list.some((e) => e.matches(tool));
  }

  async #run(
    event: HookEventName,
    fields: Record<string, unknown>,
    tool: string | undefined,
    signal: AbortSignal | undefined,
    stdoutIsContext: boolean,
  ): Promise<HookRun[]> {
    const list = (this.#entries[event] ?? []).filter((e) => tool === undefined || e.matches(tool));
    const input = {
      hook_event_name: event,
      session_id: this.#options.sessionId(),
      cwd: this.#options.cwd,
      ...fields,
    };
    // Hooks of one event run in parallel, like the peers'; each is reported on its own.
    return Promise.all(
      list.map(async ({ config }) => {
        const run = await runHook({
          command: config.command,
          input,
          cwd: this.#options.cwd,
          env: { ...this.#options.env, YOI_PROJECT_DIR: this.#options.cwd, YOI_HOOK_EVENT: event },
          timeoutMs: config.timeoutMs ?? HOOK_TIMEOUT_MS,
          stdoutIsContext,
          signal,
        });
        if (run.outcome === "failed" && !signal?.aborted)
          this.#options.onAlert(
            "error",
            `${event} hook \`${short(config.command)}\` ${run.error}; the run goes on without it`,
          );
        return run;
      }),
    );
  }
}

function toolInput(call: ToolCallInfo): Record<string, unknown> {
  return { tool_name: call.name, tool_input: call.args ?? null, tool_call_id: call.callId };
}

function contextItems(runs: readonly HookRun[], event: HookEventName): Item[] {
  return runs.flatMap((r) => (r.context ? [systemMessage(`[${event} hook context]\n${r.context}`)] : []));
}

function short(command: string): string {
  const line = command.split("\n")[0] ?? "";
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}
