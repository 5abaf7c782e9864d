/**
 * Hook: the public, read-only extension surface. Hooks may stop things
 * (cancel a prompt, deny or abort a tool call) and observe results, but
 * never add items: Hook types deliberately have no ContinueWith
 * (docs/design/file-refs.md#interceptors-and-hooks).
 */
import type {
  Interceptor,
  PromptSubmitInfo,
  ToolCallInfo,
  ToolResultInfo,
  TurnEndInfo,
} from "./interceptor.ts";

export type HookPromptAction = { action: "continue" } | { action: "cancel"; reason: string };

/**
 * `deny`: the call is not run and the model gets `message` as an error result. `abort`: the run ends
 * `cancelled`. `continue` with `args`: the call runs with these arguments (a permission decision that
 * edits the call, as `query()`'s `canUseTool` may); the hooks after this one and the tool see them.
 */
export type HookToolAction =
  | { action: "continue"; args?: unknown }
  | { action: "deny"; message: string }
  | { action: "abort"; reason: string };

type MaybePromise<T> = T | Promise<T>;

export interface Hook {
  readonly name?: string;
  onPromptSubmit?(info: PromptSubmitInfo): MaybePromise<HookPromptAction | undefined>;
  beforeToolCall?(call: ToolCallInfo): MaybePromise<HookToolAction | undefined>;
  /** Observe only. */
  afterToolCall?(call: ToolCallInfo, result: ToolResultInfo): MaybePromise<void>;
  /** Observe only. */
  onTurnEnd?(info: TurnEndInfo): MaybePromise<void>;
}

/** Runs a Hook as an Interceptor, mapping its smaller actions. */
export function hookAsInterceptor(hook: Hook): Interceptor {
  const out: {
    -readonly [K in keyof Interceptor]: Interceptor[K];
  } = {};
  if (hook.name !== undefined) out.name = `hook:${hook.name}`;
  const onPrompt = hook.onPromptSubmit?.bind(hook);
  if (onPrompt) {
    out.onPromptSubmit = async (info: PromptSubmitInfo) => {
      const action = await onPrompt(info);
      if (action?.action === "cancel") return { action: "cancel", reason: action.reason };
      return undefined;
    };
  }
  const before = hook.beforeToolCall?.bind(hook);
  if (before) {
    out.beforeToolCall = async (call: ToolCallInfo) => {
      const action = await before(call);
      if (action?.action === "deny") return { action: "skip", result: action.message };
      if (action?.action === "abort") return { action: "abort", reason: action.reason };
      if (action?.action === "continue" && action.args !== undefined)
        return { action: "continue", args: action.args };
      return undefined;
    };
  }
  const after = hook.afterToolCall?.bind(hook);
  if (after) {
    out.afterToolCall = async (call: ToolCallInfo, result: ToolResultInfo) => {
      await after(call, result);
      return undefined;
    };
  }
  const turnEnd = hook.onTurnEnd?.bind(hook);
  if (turnEnd) {
    out.onTurnEnd = async (info: TurnEndInfo) => {
      await turnEnd(info);
      return undefined;
    };
  }
  return out;
}
