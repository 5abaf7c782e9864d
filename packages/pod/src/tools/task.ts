/**
 * `task`: delegates a self-contained piece of work to a subagent, a child
 * Worker with a fresh history (the prompt is its first user message), its
 * own system prompt and a subset of the session's tools, under the same
 * scope, permissions and sandbox. The child's final answer is the result;
 * its whole transcript is stored as a blob and reported to the pod.
 */
import { type Item, type LlmClient, messageText, type RequestSettings, type Usage } from "@yoi/llm-client";
import {
  type BlobStore,
  defineTool,
  type Hook,
  type Interceptor,
  type ResponseBounds,
  type RunResult,
  type Tool,
  ToolError,
  type ToolExecutionContext,
  type ToolOutputLimits,
  Worker,
  type WorkerEvent,
} from "@yoi/llm-worker";
import { WEB_SEARCH_TOOL_NAME } from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import * as z from "zod";
import type { AgentDefinition } from "../agents/agent-definition.ts";

export const TASK_TOOL_NAME = "task";

/** One child event, as the pod forwards it to UIs. */
export interface SubagentEventInfo {
  /** The parent's `task` call id: groups a child's events. */
  callId: string;
  description: string;
  agent?: string;
  /** `<provider>/<model>` the child runs on. */
  model: string;
  /** 1 for a child of the main agent. */
  depth: number;
  event: WorkerEvent;
}

/** How a subagent ended, with its transcript. */
export interface SubagentResult {
  callId: string;
  description: string;
  agent?: string;
  /** `<provider>/<model>`. */
  model: string;
  depth: number;
  status: RunResult["status"];
  turns: number;
  usage: Usage;
  blobId?: string;
  items: Item[];
  error?: string;
}

export interface TaskToolOptions {
  /** 1 for the main agent's tool (its children are depth 1). */
  depth: number;
  /** Deepest level a child may be at; children at it get no `task` tool. */
  maxDepth: number;
  /** Wall-clock limit of one child run. */
  timeoutMs: number;
  /** Model calls one child may make. */
  maxTurns: number;
  /** The session's client (children use it unless their agent names a model). */
  client: LlmClient;
  /** A client for an agent's `model` ref; throws when the ref cannot be resolved. */
  clientFor: (ref: string) => LlmClient;
  /** The tools a child may use (the session's, without `task` and `todo_write`). */
  tools: () => readonly Tool[];
  agents: ReadonlyMap<string, AgentDefinition>;
  /** Project root, named in the child's system prompt. */
  root: string;
  /** The project instructions (AGENTS.md) the session's prompt carries, added to the child's. */
  instructions?: () => string | undefined;
  settings?: RequestSettings;
  /** The permission hook and the session's hooks: children ask exactly as the parent does. */
  hooks?: readonly Hook[];
  /**
   * The child's interceptors for its client (the web search offer, which
   * depends on the child's model); an agent whose `tools` list leaves out
   * `web_search` gets none of them.
   */
  interceptors?: (client: LlmClient) => readonly Interceptor[];
  blobStore?: BlobStore;
  toolTimeoutMs?: number;
  toolOutput?: ToolOutputLimits;
  /** What one response of a subagent may make its worker do; the session's bounds. */
  bounds?: ResponseBounds;
  onEvent?: (info: SubagentEventInfo) => void;
  onDone?: (result: SubagentResult) => void;
}

/** The arguments `task` takes . */
export const taskInput = z.object({
  description: z
    .string()
    .trim()
    .min(1, "description must not be empty")
    .max(120, "description must be at most 120 characters")
    .describe("3-8 words saying what the subagent does (shown to the user)."),
  prompt: z
    .string()
    .trim()
    .min(1, "prompt must not be empty")
    .describe("The complete task: the subagent sees nothing of this conversation but this text."),
  agent: z.string().optional().describe("Name of a defined agent to run (default: a general-purpose one)."),
});

function describeTool(options: TaskToolOptions): string {
  const lines = [
    "Delegate a self-contained task to a subagent that works on its own with the same tools " +
      "and permissions, and returns only its final report. Use it for broad searches or " +
      "independent sub-tasks whose details would crowd this conversation. The subagent sees " +
      "none of this conversation: put every needed fact in `prompt`, and say what to report. " +
      "Several task calls in one response run in parallel.",
  ];
  if (options.agents.size > 0) {
    lines.push("Agents (`agent`):");
    for (const a of options.agents.values()) lines.push(`- ${a.name}: ${a.description}`);
  }
  return lines.join("\n");
}

function childSystem(
  options: TaskToolOptions,
  tools: readonly Tool[],
  description: string,
  ctx: ToolExecutionContext,
  agent: AgentDefinition | undefined,
): string {
  const lines = [
    `You are a subagent of yoi, a coding agent. The main agent delegated one task to you: ${description}.`,
    `Project root: ${options.root}. Paths are relative to it; nothing outside it can be read or written.`,
    `Tools: ${tools.map((t) => t.name).join(", ")}.`,
    "Work on your own: nobody answers questions. When done, reply with a concise final report " +
      "(what you found or changed, with file paths); that message is all the main agent sees.",
  ];
  if (ctx.batchSize > 1) {
    lines.push(
      `You are task ${ctx.callIndex + 1} of ${ctx.batchSize} running in parallel; ` +
        "stay within your task and do not edit files the other tasks may be working on.",
    );
  }
  if (agent !== undefined && agent.prompt !== "") lines.push("", agent.prompt);
  const instructions = options.instructions?.();
  if (instructions) lines.push("", instructions);
  return lines.join("\n");
}

/** The text of the last assistant message, where a child's final answer is. */
function finalAnswer(items: readonly Item[]): string {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.type === "message" && item.role === "assistant") {
      const text = messageText(item).trim();
      if (text !== "") return text;
    }
    if (item.type === "message" && item.role === "user") break;
    if (item.type === "tool_result") break;
  }
  return "";
}

/** The child's tools: an agent's list, checked against what a subagent may have. */
function pickTools(available: readonly Tool[], agent: AgentDefinition | undefined): Tool[] {
  if (agent?.tools === undefined) return [...available];
  const byName = new Map(available.map((t) => [t.name, t]));
  const unknown = agent.tools.filter((n) => !byName.has(n));
  if (unknown.length > 0) {
    throw new ToolError(
      `Agent "${agent.name}" (${agent.path}) names tools a subagent does not have: ${unknown.join(", ")}. ` +
        `Available: ${[...byName.keys()].join(", ")}. Fix its "tools:" line, or run the task without \`agent\`.`,
    );
  }
  return agent.tools.map((n) => byName.get(n)!);
}

/** The `task` tool (see the file comment). */
export function taskTool(options: TaskToolOptions): Tool {
  return defineTool({
    name: TASK_TOOL_NAME,
    description: describeTool(options),
    inputSchema: taskInput,
    timeoutMs: options.timeoutMs,
    // The answer is the point of the call: never hide it behind a blob summary.
    storeLargeOutput: false,
    async execute({ description, prompt, agent: agentName }, ctx) {
      let agent: AgentDefinition | undefined;
      if (agentName !== undefined && agentName !== "") {
        agent = options.agents.get(agentName);
        if (agent === undefined) {
          const names = [...options.agents.keys()];
          throw new ToolError(
            names.length === 0
              ? `Unknown agent "${agentName}": no agents are defined (.yoi/agents/*.md). Omit \`agent\` to use a general-purpose subagent.`
              : `Unknown agent "${agentName}". Defined agents: ${names.join(", ")}. Omit \`agent\` for a general-purpose subagent.`,
          );
        }
      }
      let client = options.client;
      if (agent?.model !== undefined) {
        try {
          client = options.clientFor(agent.model);
        } catch (error) {
          throw new ToolError(
            `Agent "${agent.name}" names model ${agent.model}, which cannot be used: ${errorMessage(error)}`,
          );
        }
      }
      const depth = options.depth;
      const base = pickTools(options.tools(), agent);
      const tools =
        depth < options.maxDepth && (agent?.tools === undefined || agent.tools.includes(TASK_TOOL_NAME))
          ? [...base, taskTool({ ...options, depth: depth + 1 })]
          : base;
      const worker = new Worker({
        client,
        tools,
        system: childSystem(options, tools, description, ctx, agent),
        ...(options.settings ? { settings: options.settings } : {}),
        maxTurns: options.maxTurns,
        ...(options.blobStore ? { blobStore: options.blobStore } : {}),
        ...(options.hooks ? { hooks: options.hooks } : {}),
        ...(options.interceptors && (agent?.tools === undefined || agent.tools.includes(WEB_SEARCH_TOOL_NAME))
          ? { interceptors: options.interceptors(client) }
          : {}),
        ...(options.toolTimeoutMs !== undefined ? { toolTimeoutMs: options.toolTimeoutMs } : {}),
        ...(options.toolOutput ? { toolOutput: options.toolOutput } : {}),
        ...(options.bounds ? { bounds: options.bounds } : {}),
      });
      const model = `${client.provider}/${client.model}`;
      const who = { callId: ctx.callId, description, ...(agent ? { agent: agent.name } : {}), model, depth };
      const unsubscribe = worker.subscribe((event) => options.onEvent?.({ ...who, event }));
      let result: RunResult;
      try {
        result = await worker.run(prompt, { signal: ctx.signal, agent: { name: agent?.name ?? "task" } });
      } finally {
        unsubscribe();
      }
      const items = [...worker.history];
      const error = result.error?.message ?? (result.status === "failed" ? result.reason : undefined);
      let blobId: string | undefined;
      if (options.blobStore) {
        try {
          blobId = await options.blobStore.store({
            kind: "structured",
            value: {
              type: "subagent_transcript",
              description,
              ...(agent ? { agent: agent.name } : {}),
              model,
              status: result.status,
              turns: result.turns,
              usage: result.usage,
              items,
            },
          });
        } catch {
          // The answer matters more than the copy; the session log still gets the transcript.
        }
      }
      options.onDone?.({
        ...who,
        status: result.status,
        turns: result.turns,
        usage: result.usage,
        ...(blobId ? { blobId } : {}),
        items,
        ...(error !== undefined ? { error } : {}),
      });
      const toolCalls = items.filter((i) => i.type === "tool_call").length;
      const transcript = blobId
        ? `transcript [blob:${blobId}] (read it with inspect)`
        : "no transcript stored";
      const facts = `${result.turns} model call${result.turns === 1 ? "" : "s"}, ${toolCalls} tool call${toolCalls === 1 ? "" : "s"}; ${transcript}`;
      switch (result.status) {
        case "failed":
          throw new ToolError(`Subagent "${description}" failed: ${error ?? "unknown error"} (${facts}).`);
        case "cancelled":
          throw new ToolError(
            `Subagent "${description}" was cancelled${result.reason ? ` (${result.reason})` : ""} (${facts}).`,
          );
        case "paused":
          throw new ToolError(
            `Subagent "${description}" was stopped by a hook: ${result.reason ?? "paused"} (${facts}).`,
          );
        default: {
          const answer = finalAnswer(items);
          const note =
            result.status === "max_turns"
              ? `[the subagent stopped after ${result.turns} model calls (task.maxTurns) before finishing]\n`
              : "";
          return `${note}${answer === "" ? "(the subagent ended without a final message)" : answer}\n\n[subagent: ${facts}]`;
        }
      }
    },
  });
}
