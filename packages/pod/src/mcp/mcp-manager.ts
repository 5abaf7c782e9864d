/**
 * The MCP servers of a session: all started in parallel when the pod opens,
 * each reported once if it fails (the session goes on without it), their
 * tools offered as `mcp__<server>__<tool>`, their prompts as slash commands
 * and their resources as `@<server>:<uri>` attachments.
 */
import type { BlobStore, Tool } from "@yoi/llm-worker";
import {
  checkMcpServer,
  MCP_SERVER_NAME_EXPECTED,
  MCP_SERVER_NAME_PATTERN,
  WORKER_DEFAULTS,
} from "@yoi/manifest";
import * as z from "zod";
import {
  type InProcessMcpServer,
  McpConnection,
  type McpConnectionConfig,
  type McpPromptInfo,
  type McpServerState,
} from "./mcp-connection.ts";
import { mcpName } from "./tool-name.ts";
import { toToolReturn } from "./tool-result.ts";

export interface McpManagerOptions {
  /** The `mcpServers` config section (entries are checked here, one by one). */
  servers: Readonly<Record<string, unknown>>;
  /** Servers in this process, by name (a config entry of the same name gives way to one). */
  inProcess?: Readonly<Record<string, InProcessMcpServer>> | undefined;
  /** For `${VAR}` in the servers' settings. */
  env: Readonly<Record<string, string | undefined>>;
  /** Working directory of stdio servers without `cwd` (the project root). */
  cwd: string;
  /** Where image and audio results are kept. */
  blobStore?: BlobStore | undefined;
  /** Tool call limit when a server sets none (the worker's `toolTimeoutMs`). */
  toolTimeoutMs: number;
  /** Most bytes of one tool result; a larger one fails the call. Default `WORKER_DEFAULTS.maxMcpResultBytes`. */
  maxResultBytes?: number;
  /** Failures and notices for the user, each once. */
  onAlert: (level: "info" | "warn" | "error", message: string) => void;
  /** Tools or prompts came, went or changed. */
  onChange: () => void;
}

/** One server as `/mcp` and `yoi mcp list` show it. */
export interface McpServerStatus {
  name: string;
  state: McpServerState;
  transport: "stdio" | "http" | "sse" | "in_process" | "unknown";
  /** Tool names as the model sees them. */
  tools: string[];
  /** Slash commands of its prompts. */
  prompts: string[];
  resources: boolean;
  error?: string;
  stderrTail?: string;
}

/** An MCP prompt as a slash command (`/mcp__<server>__<prompt>`). */
export interface McpPromptCommand {
  /** Without the slash. */
  command: string;
  server: string;
  prompt: McpPromptInfo;
}

/** A resource read for `@<server>:<uri>`. */
export interface McpResourceText {
  uri: string;
  mimeType?: string | undefined;
  text: string;
}

/** The input schema of every MCP tool (the server checks its own arguments); built when the first is listed. */
const ARGS_SCHEMA = z.lazy(() => z.record(z.string(), z.unknown()));

export class McpManager {
  readonly #options: McpManagerOptions;
  readonly #connections = new Map<string, McpConnection>();
  /** Entries the config got wrong: name -> message. */
  readonly #invalid = new Map<string, string>();
  #started: Promise<void> | undefined;
  /** Tool names already reported as clashing. */
  readonly #clashes = new Set<string>();
  /** Tools per connection, rebuilt when its list changes. */
  readonly #toolCache = new WeakMap<object, Tool[]>();

  constructor(options: McpManagerOptions) {
    this.#options = options;
  }

  /** Whether any server is configured. */
  get configured(): boolean {
    return this.#names().length > 0;
  }

  /** Every server's name: the config's, then the in-process ones (which replace a config entry of their name). */
  #names(): string[] {
    const inProcess = Object.keys(this.#options.inProcess ?? {});
    return [...Object.keys(this.#options.servers).filter((n) => !inProcess.includes(n)), ...inProcess];
  }

  /** A server's entry checked: the config's, or an in-process server (its name checked like a config entry's). */
  #check(name: string): { ok: true; server: McpConnectionConfig } | { ok: false; message: string } {
    const server = this.#options.inProcess?.[name];
    if (server === undefined) return checkMcpServer(name, this.#options.servers[name]);
    if (!MCP_SERVER_NAME_PATTERN.test(name))
      return { ok: false, message: `the name: expected ${MCP_SERVER_NAME_EXPECTED}` };
    if (typeof server?.connect !== "function")
      return {
        ok: false,
        message: "expected an McpServer of @modelcontextprotocol/sdk (an object with connect())",
      };
    return { ok: true, server: { type: "in_process", server } };
  }

  /** Starts every server in parallel; returns at once (see `ready`). Idempotent. */
  start(): void {
    if (this.#started !== undefined) return;
    const starts: Promise<void>[] = [];
    for (const name of this.#names()) {
      const checked = this.#check(name);
      if (!checked.ok) {
        this.#invalid.set(name, checked.message);
        this.#options.onAlert(
          "error",
          `mcpServers.${name}: ${checked.message}; the server is skipped (fix the entry in your config)`,
        );
        continue;
      }
      const connection = new McpConnection({
        name,
        config: checked.server,
        env: this.#options.env,
        cwd: this.#options.cwd,
        onChange: () => this.#options.onChange(),
        onFailure: (message) => this.#options.onAlert("error", message),
        // A result may come as text and again as structured content: twice the bound, and room for the envelope.
        maxMessageBytes:
          2 * (this.#options.maxResultBytes ?? WORKER_DEFAULTS.maxMcpResultBytes) + 1024 * 1024,
      });
      this.#connections.set(name, connection);
      if (checked.server.disabled) continue;
      starts.push(connection.start());
    }
    this.#started = Promise.all(starts).then(() => {});
  }

  /**
   * Resolves when every server has started or failed, or after `maxWaitMs`
   * (servers still starting then join later: their tools reach the model's
   * next request).
   */
  async ready(maxWaitMs = Number.POSITIVE_INFINITY): Promise<void> {
    this.start();
    if (!Number.isFinite(maxWaitMs)) return this.#started;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#started,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, maxWaitMs);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Whether a server of this name is configured and valid. */
  has(server: string): boolean {
    return this.#connections.has(server);
  }

  /**
   * The tools of every ready server. Two tools whose names become the same
   * (`a.b` and `a_b`) cannot both be offered: the first stays, the other is
   * reported once.
   */
  tools(): Tool[] {
    const out: Tool[] = [];
    const seen = new Set<string>();
    for (const connection of this.#connections.values()) {
      if (connection.state !== "ready") continue;
      const list = connection.tools;
      let tools = this.#toolCache.get(list);
      if (tools === undefined) {
        tools = list.map((info) => this.#tool(connection, info));
        this.#toolCache.set(list, tools);
      }
      for (const tool of tools) {
        if (seen.has(tool.name)) {
          if (!this.#clashes.has(tool.name)) {
            this.#clashes.add(tool.name);
            this.#options.onAlert(
              "warn",
              `MCP server "${connection.name}" has two tools named ${tool.name} once made valid for the model; only the first is offered`,
            );
          }
          continue;
        }
        seen.add(tool.name);
        out.push(tool);
      }
    }
    return out;
  }

  /** Every configured server, in config order. */
  status(): McpServerStatus[] {
    const out: McpServerStatus[] = [];
    for (const name of this.#names()) {
      const invalid = this.#invalid.get(name);
      if (invalid !== undefined) {
        out.push({
          name,
          state: "failed",
          transport: "unknown",
          tools: [],
          prompts: [],
          resources: false,
          error: invalid,
        });
        continue;
      }
      const c = this.#connections.get(name);
      if (c === undefined) continue;
      const state = c.config.disabled ? "disabled" : c.state;
      out.push({
        name,
        state,
        transport: c.transportKind,
        tools: c.tools.map((t) => mcpName(name, t.name)),
        prompts: c.prompts.map((p) => mcpName(name, p.name)),
        resources: c.state === "ready" && c.hasResources,
        ...(c.error !== undefined ? { error: c.error } : {}),
        ...(c.stderrTail.trim() !== "" ? { stderrTail: c.stderrTail } : {}),
      });
    }
    return out;
  }

  /** The prompts of every ready server as slash commands. */
  prompts(): McpPromptCommand[] {
    const out: McpPromptCommand[] = [];
    for (const c of this.#connections.values()) {
      if (c.state !== "ready") continue;
      for (const prompt of c.prompts)
        out.push({ command: mcpName(c.name, prompt.name), server: c.name, prompt });
    }
    return out;
  }

  /**
   * The text a prompt command submits: its messages' text, arguments filled
   * from `argsText` (`key=value` pairs, or values in the prompt's argument
   * order, the last taking the rest). Throws an Error saying what is missing.
   */
  async renderPrompt(command: string, argsText: string, signal?: AbortSignal): Promise<string> {
    const found = this.prompts().find((p) => p.command === command);
    if (found === undefined) throw new Error(`no MCP prompt /${command} (see /mcp)`);
    const args = promptArguments(found.prompt, argsText, command);
    const result = await this.#connections.get(found.server)!.getPrompt(found.prompt.name, args, signal);
    const parts: string[] = [];
    for (const message of result.messages) {
      const content = message.content;
      if (content.type === "text" && typeof content.text === "string") parts.push(content.text);
      else if (content.type === "resource") {
        const r = content.resource as { uri?: string; text?: string } | undefined;
        if (r?.text !== undefined) parts.push(`[resource ${r.uri ?? ""}]\n${r.text}`);
      } else parts.push(`[${content.type} content of the prompt, not shown]`);
    }
    return parts.join("\n\n");
  }

  /** Reads `uri` from `server` as text (binary contents described). Throws an Error naming server and URI. */
  async readResource(server: string, uri: string, signal?: AbortSignal): Promise<McpResourceText> {
    const connection = this.#connections.get(server);
    if (connection === undefined) throw new Error(`no MCP server "${server}" (see /mcp)`);
    const result = await connection.readResource(uri, signal);
    const texts: string[] = [];
    let mimeType: string | undefined;
    for (const content of result.contents) {
      mimeType ??= content.mimeType;
      if (typeof content.text === "string") texts.push(content.text);
      else
        texts.push(
          `[binary content ${content.mimeType ?? "of unknown type"}, ${Math.floor(((content.blob ?? "").length * 3) / 4)} bytes, not shown]`,
        );
    }
    return { uri, mimeType, text: texts.join("\n") };
  }

  /** Closes every connection (stdio servers' processes end). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#connections.values()].map((c) => c.close()));
  }

  #tool(
    connection: McpConnection,
    info: {
      name: string;
      title?: string | undefined;
      description?: string | undefined;
      inputSchema: Record<string, unknown>;
    },
  ): Tool {
    const server = connection.name;
    const timeoutMs = connection.config.toolTimeoutMs ?? this.#options.toolTimeoutMs;
    const schema = { ...info.inputSchema };
    if (schema.type !== "object") schema.type = "object";
    if (schema.properties === undefined) schema.properties = {};
    const blobStore = this.#options.blobStore;
    const maxResultBytes = this.#options.maxResultBytes;
    return {
      name: mcpName(server, info.name),
      description: `${info.description ?? info.title ?? info.name} (MCP server ${server})`,
      inputSchema: ARGS_SCHEMA,
      jsonSchema: schema,
      ...(connection.config.toolTimeoutMs !== undefined ? { timeoutMs } : {}),
      async execute(input, ctx) {
        const result = await connection.callTool(info.name, input as Record<string, unknown>, {
          signal: ctx.signal,
          // A little over the worker's limit, so the worker's own timeout message wins.
          timeoutMs: timeoutMs + 1_000,
        });
        return toToolReturn(result, {
          server,
          blobStore,
          ...(maxResultBytes !== undefined ? { maxBytes: maxResultBytes } : {}),
        });
      },
    };
  }
}

/** `key=value` pairs when every word is one of the prompt's arguments, else values in argument order. */
export function promptArguments(
  prompt: McpPromptInfo,
  argsText: string,
  command = prompt.name,
): Record<string, string> {
  const declared = prompt.arguments ?? [];
  const words = argsText.trim() === "" ? [] : argsText.trim().split(/\s+/);
  const out: Record<string, string> = {};
  const pairs = words.map((w) => /^([^=]+)=(.*)$/.exec(w));
  if (words.length > 0 && pairs.every((m) => m !== null && declared.some((a) => a.name === m[1]))) {
    for (const m of pairs) out[m![1]!] = m![2]!;
  } else {
    declared.forEach((arg, i) => {
      if (i >= words.length) return;
      out[arg.name] = i === declared.length - 1 ? words.slice(i).join(" ") : words[i]!;
    });
  }
  const missing = declared.filter((a) => a.required && out[a.name] === undefined).map((a) => a.name);
  if (missing.length > 0) {
    const usage = declared.map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(" ");
    throw new Error(`missing ${missing.join(", ")}: usage /${command} ${usage} (or name=value)`);
  }
  return out;
}
