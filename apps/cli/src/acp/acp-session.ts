/**
 * One ACP session: a Pod opened the way every yoi session is
 * (open-session.ts), its events turned into `session/update`s, its
 * permission questions asked through `session/request_permission`, and its
 * file text read and written through the editor when the editor offers it.
 */
import type * as acp from "@agentclientprotocol/sdk";
import { RequestError } from "@agentclientprotocol/sdk";
import { type Item, messageText, redactDeep, type ServerToolItem, serverToolInput } from "@yoi/llm-client";
import type { RunResult } from "@yoi/llm-worker";
import type { PermissionMode } from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import {
  bashPrefixRules,
  contextTokens,
  createStreamTextRedaction,
  EXIT_PLAN_MODE_TOOL_NAME,
  type FileAccess,
  formatRuleSpec,
  ImageError,
  type PermissionDecision,
  type PermissionPrompt,
  type PodEvent,
} from "@yoi/pod";
import { initPrompt } from "../commands/init-prompt.ts";
import { describeAlert, describeError, describeFailure } from "../describe-error.ts";
import type { OpenedPod } from "../open-session.ts";
import { approveForProject, projectRulesFor, quoteRules } from "../project-approvals.ts";
import { projectRoot } from "../project-root.ts";
import { callsExtensionCommand, expandSlash } from "../ui/extension-commands.ts";
import { parseArgs } from "../ui/tool-summary.ts";
import { serverToolLine } from "../ui/web-sources.ts";
import { promptInput } from "./prompt-input.ts";
import {
  LIVE_OUTPUT_CHARS,
  liveContent,
  planEntries,
  resultContent,
  toolDiff,
  toolKind,
  toolLocations,
  toolTitle,
} from "./tool-calls.ts";

/** The permission modes, as ACP session modes. */
export const SESSION_MODES: readonly acp.SessionMode[] = [
  { id: "default", name: "Default", description: "Ask before edits and commands" },
  { id: "acceptEdits", name: "Accept edits", description: "Edit files in the project without asking" },
  { id: "plan", name: "Plan", description: "Read and plan; no edits, no commands" },
  {
    id: "bypassPermissions",
    name: "Bypass permissions",
    description: "Run everything without asking (only inside the sandbox)",
  },
];

/** Commands of yoi's own that work in an editor (the rest are the terminal UI's). */
const BUILTIN_COMMANDS: readonly acp.AvailableCommand[] = [
  {
    name: "compact",
    description: "Summarize the conversation so far, to free the context window",
  },
  {
    name: "init",
    description: "Write AGENTS.md: the instructions every session on this project starts with",
    input: { hint: "what else to mention" },
  },
];

interface CallState {
  name: string;
  args: unknown;
  diff?: acp.ToolCallContent;
  /** The end of the output streamed so far (bash), its whole length, and whether an update showing it is on its way. */
  output?: string;
  outputChars?: number;
  outputQueued?: boolean;
}

/** The answers to `exit_plan_mode` (the plan hand-over), as the terminal offers them. */
const PLAN_OPTIONS: acp.PermissionOption[] = [
  { optionId: "acceptEdits", name: "Yes, and accept edits", kind: "allow_always" },
  { optionId: "default", name: "Yes, and ask before edits", kind: "allow_once" },
  { optionId: "reject", name: "No, keep planning", kind: "reject_once" },
];

export interface AcpSessionOptions {
  client: acp.AgentContext;
  /** One line to stderr. */
  log: (line: string) => void;
}

export class AcpSession {
  readonly opened: OpenedPod;
  readonly #client: acp.AgentContext;
  readonly #log: (line: string) => void;
  readonly #calls = new Map<string, CallState>();
  /** Server tool calls (web searches) announced and not yet finished. */
  readonly #serverCalls = new Set<string>();
  /** Updates go out in order; a prompt answers after the updates it caused. */
  #sent: Promise<void> = Promise.resolve();
  #running = false;
  #mode: PermissionMode;
  #lastStop: string | undefined;
  readonly #unsubscribe: () => void;

  constructor(opened: OpenedPod, options: AcpSessionOptions) {
    this.opened = opened;
    this.#client = options.client;
    this.#log = options.log;
    this.#mode = opened.pod.permissions.mode;
    const redact = createStreamTextRedaction();
    this.#unsubscribe = opened.pod.subscribe((event) => {
      for (const shown of redact(event)) this.#onEvent(shown);
    });
  }

  get id(): string {
    return this.opened.pod.id;
  }

  get running(): boolean {
    return this.#running;
  }

  get modes(): acp.SessionModeState {
    return { currentModeId: this.opened.pod.permissions.mode, availableModes: [...SESSION_MODES] };
  }

  /**
   * Sends one update, in order after the ones before it; `update` may be
   * made when its turn comes (to read what it shows). Secrets are masked.
   */
  update(update: acp.SessionUpdate | (() => Promise<acp.SessionUpdate>)): void {
    this.#sent = this.#sent
      .then(async () => {
        const made = typeof update === "function" ? await update() : update;
        const params = redactDeep({ sessionId: this.id, update: made }) as acp.SessionNotification;
        await this.#client.notify("session/update", params);
      })
      .catch((error: unknown) => this.#log(`an update could not be sent: ${errorMessage(error)}`));
  }

  /** Resolves once every update so far is written. */
  flushed(): Promise<void> {
    return this.#sent;
  }

  /** The session's commands: yoi's own that make sense here, the project's and the user's, MCP prompts. */
  sendCommands(): void {
    const { pod } = this.opened;
    const commands: acp.AvailableCommand[] = [
      ...BUILTIN_COMMANDS,
      ...pod.extensions.commands.map((c) => ({
        name: c.name,
        description: `${c.description} (${c.source})`,
        ...(c.argumentHint ? { input: { hint: c.argumentHint } } : {}),
      })),
      ...pod.mcp.prompts().map((p) => {
        const hint = (p.prompt.arguments ?? [])
          .map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`))
          .join(" ");
        return {
          name: p.command,
          description: `${p.prompt.description ?? p.prompt.title ?? p.prompt.name} (mcp: ${p.server})`,
          ...(hint ? { input: { hint } } : {}),
        };
      }),
    ];
    this.update({ sessionUpdate: "available_commands_update", availableCommands: commands });
  }

  /** Sends the history of a loaded session as the updates it was made of. */
  replay(history: readonly Item[]): void {
    const cwd = this.opened.pod.fs.cwd;
    const calls = new Map<string, { name: string; args: unknown }>();
    for (const item of history) {
      switch (item.type) {
        case "message": {
          if (item.role === "system") break;
          const text = messageText(item);
          if (text === "") break;
          this.update({
            sessionUpdate: item.role === "user" ? "user_message_chunk" : "agent_message_chunk",
            content: { type: "text", text },
          });
          break;
        }
        case "server_tool":
          this.#serverTool(item);
          break;
        case "reasoning":
          if (item.text !== "" && !item.redacted)
            this.update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: item.text } });
          break;
        case "tool_call": {
          const args = parseArgs(item.arguments);
          calls.set(item.callId, { name: item.name, args });
          this.update({
            sessionUpdate: "tool_call",
            toolCallId: item.callId,
            title: toolTitle(item.name, args),
            kind: toolKind(item.name),
            status: "pending",
            locations: toolLocations(item.name, args, cwd),
            rawInput: args,
          });
          break;
        }
        case "tool_result": {
          const call = calls.get(item.callId);
          const diff = call && !item.isError ? toolDiff(call.name, call.args, cwd) : undefined;
          this.update({
            sessionUpdate: "tool_call_update",
            toolCallId: item.callId,
            status: item.isError ? "failed" : "completed",
            content: resultContent(item.output, diff),
          });
          calls.delete(item.callId);
          break;
        }
      }
    }
    // Calls the log has no result for (the session stopped before they ran) did not run.
    for (const callId of calls.keys())
      this.update({ sessionUpdate: "tool_call_update", toolCallId: callId, status: "failed" });
    const todos = this.opened.pod.todos.items;
    if (todos.length > 0) this.update({ sessionUpdate: "plan", entries: planEntries(todos) });
  }

  /** Runs a prompt to its end; the answer's stop reason, or a JSON-RPC error saying why it could not run. */
  async prompt(blocks: readonly acp.ContentBlock[]): Promise<acp.PromptResponse> {
    if (this.#running) {
      throw RequestError.invalidRequest(
        { sessionId: this.id },
        `session ${this.id} is already answering a prompt; wait for its response or send session/cancel`,
      );
    }
    this.#running = true;
    try {
      return await this.#prompt(blocks);
    } finally {
      this.#running = false;
    }
  }

  async #prompt(blocks: readonly acp.ContentBlock[]): Promise<acp.PromptResponse> {
    const { pod } = this.opened;
    const input = promptInput(blocks, pod.fs.cwd);
    let text = input.text;
    if (text.trim() === "" && input.images.length === 0)
      throw RequestError.invalidParams(undefined, "the prompt is empty; send text, an image or a file");
    if (text.trim() === "") text = "See the attached image.";
    let allowTools: readonly string[] | undefined;
    const command = /^\/(\S+)\s*([\s\S]*)$/.exec(text.trim());
    if (command?.[1] === "compact") return this.#compact();
    if (command?.[1] === "init") text = initPrompt(command[2]);
    else if (callsExtensionCommand(pod, text)) {
      const expanded = await expandSlash(pod, text);
      if (expanded.kind === "error")
        throw RequestError.invalidParams(undefined, `${expanded.message} — nothing was sent`);
      text = expanded.text;
      allowTools = expanded.allowTools;
    }
    this.#lastStop = undefined;
    let result: RunResult;
    try {
      result = await pod.run(text, {
        ...(allowTools ? { allowTools } : {}),
        ...(input.images.length > 0 ? { images: input.images } : {}),
      });
    } catch (error) {
      if (ImageError.isInstance(error)) throw RequestError.invalidParams(undefined, error.message);
      throw error;
    }
    await this.flushed();
    return { stopReason: this.#stopReason(result) };
  }

  #stopReason(result: RunResult): acp.StopReason {
    switch (result.status) {
      case "completed":
        return this.#lastStop === "max_tokens" ? "max_tokens" : "end_turn";
      case "cancelled":
        return "cancelled";
      case "max_turns":
        return "max_turn_requests";
      case "paused":
        this.#log(`paused: ${result.reason ?? "by a hook"}`);
        return "end_turn";
      default: {
        const message = result.error
          ? describeFailure(result.error, this.opened.provider)
          : (result.reason ?? "the run failed");
        throw RequestError.internalError({ code: result.error?.code ?? "failed" }, message);
      }
    }
  }

  async #compact(): Promise<acp.PromptResponse> {
    const replaced = await this.opened.pod.compact();
    const text = replaced === undefined ? "Nothing to compact yet." : "Compacted the conversation.";
    this.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
    await this.flushed();
    return { stopReason: "end_turn" };
  }

  /** Stops the running prompt, tools and open questions included; the prompt answers `cancelled`. */
  cancel(): void {
    if (this.opened.pod.running) this.opened.pod.cancel("cancelled by the editor");
  }

  setMode(modeId: string): void {
    if (!SESSION_MODES.some((m) => m.id === modeId)) {
      throw RequestError.invalidParams(
        { modeId },
        `unknown mode "${modeId}"; one of ${SESSION_MODES.map((m) => m.id).join(", ")}`,
      );
    }
    try {
      this.opened.pod.permissions.setMode(modeId as PermissionMode);
    } catch (error) {
      throw RequestError.invalidParams({ modeId }, describeError(error).message);
    }
    this.#mode = this.opened.pod.permissions.mode;
  }

  async close(): Promise<void> {
    this.cancel();
    this.#unsubscribe();
    await this.opened.pod.close();
  }

  /**
   * The pod's permission question, asked in the editor with the terminal's
   * answers: once, always in this session (bash: the prefix rule of each
   * command of the line), always in this project (kept in
   * ~/.yoi/approvals.json) where a rule can answer the question, or no.
   */
  readonly ask: PermissionPrompt = async (request) => {
    const call = this.#announce(request.callId, request.tool, request.args);
    const plan = request.tool === EXIT_PLAN_MODE_TOOL_NAME;
    const prefixes =
      request.tool === "bash" && request.subject !== undefined
        ? await bashPrefixRules(request.subject).catch(() => undefined)
        : undefined;
    const project = plan ? undefined : projectRulesFor(request, prefixes);
    const always =
      request.tool === "bash"
        ? prefixes !== undefined
          ? `Always allow ${quoteRules(prefixes)} in this session`
          : "Always allow this command in this session"
        : `Always allow ${request.tool} in this session`;
    const planText = (request.args as { plan?: unknown } | undefined)?.plan;
    const content: acp.ToolCallContent[] = plan
      ? typeof planText === "string"
        ? [{ type: "content", content: { type: "text", text: planText } }]
        : []
      : call.diff
        ? [call.diff]
        : [];
    await this.flushed();
    const response = await this.#client.request(
      "session/request_permission",
      redactDeep({
        sessionId: this.id,
        toolCall: {
          toolCallId: request.callId,
          title: toolTitle(request.tool, request.args),
          kind: toolKind(request.tool),
          status: "pending",
          rawInput: request.args,
          locations: toolLocations(request.tool, request.args, this.opened.pod.fs.cwd),
          ...(content.length > 0 ? { content } : {}),
        },
        options: plan
          ? PLAN_OPTIONS
          : [
              { optionId: "allow_once", name: "Allow", kind: "allow_once" },
              { optionId: "allow_always", name: always, kind: "allow_always" },
              ...(project !== undefined
                ? [
                    {
                      optionId: "allow_project",
                      name: `Always allow ${project.map((rule) => formatRuleSpec(rule)).join(", ")} in this project`,
                      kind: "allow_always" as const,
                    },
                  ]
                : []),
              { optionId: "reject_once", name: "Reject", kind: "reject_once" },
            ],
      }) as acp.RequestPermissionRequest,
      // A cancelled turn stops waiting at once (the pod has moved on); a closed connection rejects: a denial.
      { cancellationSignal: request.signal, stopWaitingOnCancel: true },
    );
    if (response.outcome.outcome !== "selected") return "deny";
    const chosen = response.outcome.optionId;
    if (plan) {
      // The work goes on in the mode chosen (the policy switches to it); the editor's selector follows.
      return chosen === "acceptEdits" || chosen === "default"
        ? { action: "approve_plan", mode: chosen }
        : "deny";
    }
    if (chosen === "allow_project" && project !== undefined) {
      const { setup, pod } = this.opened;
      try {
        await approveForProject(
          setup.homeDir,
          await projectRoot(setup.cwd, setup.config.scope.root),
          pod.permissions,
          project,
        );
      } catch (error) {
        this.#log(`allowed this once; the approval was not saved: ${describeError(error).message}`);
      }
      return "allow";
    }
    const decision: PermissionDecision =
      chosen === "allow_once"
        ? "allow"
        : chosen === "allow_always"
          ? prefixes !== undefined
            ? { action: "allow_always", rule: prefixes }
            : "allow_always"
          : "deny";
    return decision;
  };

  /** Sends the `tool_call` of a call the first time it is seen (the model's response, or a question about it). */
  #announce(callId: string, name: string, args: unknown): CallState {
    const known = this.#calls.get(callId);
    if (known !== undefined) return known;
    const cwd = this.opened.pod.fs.cwd;
    const call: CallState = { name, args };
    const diff = toolDiff(name, args, cwd);
    if (diff !== undefined) call.diff = diff;
    this.#calls.set(callId, call);
    this.update(async () => ({
      sessionUpdate: "tool_call",
      toolCallId: callId,
      title: toolTitle(name, args),
      kind: toolKind(name),
      status: "pending",
      locations: await this.#locations(name, args, "old_string"),
      rawInput: args,
      ...(diff ? { content: [diff] } : {}),
    }));
    return call;
  }

  #onEvent(event: PodEvent): void {
    switch (event.type) {
      case "text_delta":
        this.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: event.text } });
        return;
      case "thinking_delta":
        this.update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: event.text } });
        return;
      case "item_committed": {
        const { item } = event;
        if (item.type === "tool_call") this.#announce(item.callId, item.name, parseArgs(item.arguments));
        else if (item.type === "tool_result") this.#finish(item.callId, item.output, item.isError);
        return;
      }
      case "tool_call_start":
        this.#announce(event.callId, event.name, event.args);
        this.update({ sessionUpdate: "tool_call_update", toolCallId: event.callId, status: "in_progress" });
        return;
      case "tool_output_delta":
        this.#streamOutput(event.callId, event.name, event.text);
        return;
      case "server_tool":
        this.#serverTool(event.item);
        return;
      case "tool_call_end":
        // A tool may change the mode (plan mode's hand-over): the editor's selector follows.
        if (this.opened.pod.permissions.mode !== this.#mode) {
          this.#mode = this.opened.pod.permissions.mode;
          this.update({ sessionUpdate: "current_mode_update", currentModeId: this.#mode });
        }
        return;
      case "todos":
        this.update({ sessionUpdate: "plan", entries: planEntries(event.todos) });
        return;
      case "usage":
        this.update({
          sessionUpdate: "usage_update",
          used: contextTokens(event.usage),
          size: this.opened.setup.window,
        });
        return;
      case "turn_end":
        this.#lastStop = event.stopReason;
        return;
      case "retry":
        this.#log(
          `retrying (attempt ${event.attempt}) in ${(event.delayMs / 1000).toFixed(1)} s: ${event.reason}`,
        );
        return;
      case "alert":
        if (event.alert.level !== "info")
          this.#log(`${event.alert.level}: ${describeAlert(event.alert, "print")}`);
        return;
      default:
        return;
    }
  }

  /**
   * A search the provider runs (web_search) as a tool call of kind
   * `search`: announced while it runs, completed with the pages it found.
   */
  #serverTool(item: ServerToolItem): void {
    const title = serverToolLine(item);
    const sources = item.sources.map((s) => (s.title ? `${s.title} — ${s.url}` : s.url)).join("\n");
    if (!this.#serverCalls.has(item.callId)) {
      this.#serverCalls.add(item.callId);
      this.update({
        sessionUpdate: "tool_call",
        toolCallId: item.callId,
        title,
        kind: "search",
        status: "in_progress",
        rawInput: serverToolInput(item),
      });
    }
    if (item.status === "running") return;
    this.#serverCalls.delete(item.callId);
    this.update({
      sessionUpdate: "tool_call_update",
      toolCallId: item.callId,
      title,
      status: item.status === "failed" ? "failed" : "completed",
      rawOutput: { sources: item.sources },
      ...(sources !== "" ? { content: [{ type: "content", content: { type: "text", text: sources } }] } : {}),
    });
  }

  #finish(callId: string, output: string, isError: boolean): void {
    const call = this.#calls.get(callId);
    this.#calls.delete(callId);
    this.update(async () => ({
      sessionUpdate: "tool_call_update",
      toolCallId: callId,
      status: isError ? "failed" : "completed",
      content: resultContent(output, isError ? undefined : call?.diff),
      // Where the edit landed, so the editor can follow along.
      ...(call?.name === "edit_file" && !isError
        ? { locations: await this.#locations(call.name, call.args, "new_string") }
        : {}),
    }));
  }

  /**
   * A running command's output as the call's content. ACP replaces a
   * call's content with each update, so the update carries the output so
   * far; one update at a time is queued, and it shows what has come when it
   * is sent.
   */
  #streamOutput(callId: string, name: string, text: string): void {
    const call = this.#announce(callId, name, undefined);
    call.output = ((call.output ?? "") + text).slice(-LIVE_OUTPUT_CHARS);
    call.outputChars = (call.outputChars ?? 0) + text.length;
    if (call.outputQueued) return;
    call.outputQueued = true;
    this.update(async () => {
      call.outputQueued = false;
      return {
        sessionUpdate: "tool_call_update",
        toolCallId: callId,
        content: liveContent(call.output ?? "", call.outputChars ?? 0),
      };
    });
  }

  /** A call's locations; for edit_file with the line where `text` (its old or new string) starts in the file now. */
  async #locations(
    name: string,
    args: unknown,
    text: "old_string" | "new_string",
  ): Promise<acp.ToolCallLocation[]> {
    const { pod } = this.opened;
    const locations = toolLocations(name, args, pod.fs.cwd);
    const wanted = (args as Record<string, unknown> | undefined)?.[text];
    const file = (args as Record<string, unknown> | undefined)?.path;
    if (name !== "edit_file" || typeof wanted !== "string" || wanted === "" || typeof file !== "string")
      return locations;
    try {
      const content = (await pod.view.readBytes(file)).toString("utf8");
      const at = content.indexOf(wanted);
      if (at === -1) return locations;
      const line = content.slice(0, at).split("\n").length;
      return locations.map((l) => ({ ...l, line }));
    } catch {
      return locations; // out of scope or gone: the tool says so; the location stays the path
    }
  }
}

/** Reads and writes of in-scope files through the editor, for what its `fs` capability offers. */
export function editorFileAccess(
  client: acp.AgentContext,
  capabilities: acp.ClientCapabilities | undefined,
  sessionId: () => string,
): FileAccess | undefined {
  const fs = capabilities?.fs;
  if (!fs?.readTextFile && !fs?.writeTextFile) return undefined;
  return {
    ...(fs.readTextFile
      ? {
          readText: async (path: string) =>
            (await client.request("fs/read_text_file", { sessionId: sessionId(), path })).content,
        }
      : {}),
    ...(fs.writeTextFile
      ? {
          writeText: async (path: string, content: string) => {
            await client.request("fs/write_text_file", { sessionId: sessionId(), path, content });
          },
        }
      : {}),
  };
}
