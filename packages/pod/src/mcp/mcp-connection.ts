/**
 * One MCP server: started over stdio or reached over Streamable HTTP with
 * the official SDK (imported when the first server starts, so sessions
 * without MCP servers and `yoi --version` never load it). Keeps the
 * server's tools and prompts current (`list_changed`), the tail of its
 * stderr for error messages, and its state.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ToolError } from "@yoi/llm-worker";
import type { McpServerConfig } from "@yoi/manifest";
import { errorMessage, rootCauseMessage } from "@yoi/manifest/errors";
import { trackChild, untrackChild } from "./child-reaper.ts";
import { expandMap, expandVars } from "./expand-vars.ts";
import type { McpCallResult } from "./tool-result.ts";

/** Default time a server has to start and list its tools. */
export const MCP_STARTUP_TIMEOUT_MS = 30_000;
const STDERR_TAIL_BYTES = 2_000;
/** Largest single message accepted from a stdio server. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
const CLIENT_INFO = { name: "yoi", version: "0.0.0" };

/**
 * An MCP server in this process (an `McpServer` of `@modelcontextprotocol/sdk`):
 * yoi connects its client to it over a linked in-memory transport pair.
 */
export interface InProcessMcpServer {
  connect(transport: Transport): Promise<void>;
}

/** How a connection reaches its server: a config entry, or a server in this process. */
export type McpConnectionConfig =
  | McpServerConfig
  | {
      type: "in_process";
      server: InProcessMcpServer;
      disabled?: undefined;
      startupTimeoutMs?: undefined;
      toolTimeoutMs?: undefined;
    };

/** `starting` → `ready`, or `failed` (never started, or died); `closed` once yoi closed it; `disabled` by config. */
export type McpServerState = "starting" | "ready" | "failed" | "closed" | "disabled";

/** A tool as the server lists it. */
export interface McpToolInfo {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
}

/** A prompt as the server lists it. */
export interface McpPromptInfo {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  arguments?:
    | { name: string; description?: string | undefined; required?: boolean | undefined }[]
    | undefined;
}

export interface McpConnectionOptions {
  name: string;
  config: McpConnectionConfig;
  /** Where `${VAR}` values come from. */
  env: Readonly<Record<string, string | undefined>>;
  /** Working directory of a stdio server without `cwd`. */
  cwd: string;
  /** The tools or prompts changed (after start, or on the server's notification). */
  onChange: () => void;
  /** The server failed to start or died: called once with a message naming it. */
  onFailure: (message: string) => void;
  /**
   * Largest message read from a stdio server; a larger one closes the
   * connection (reading it whole would cost its size in memory, and more in
   * copying). Default 64 MiB.
   */
  maxMessageBytes?: number;
}

export class McpConnection {
  readonly name: string;
  readonly config: McpConnectionConfig;
  #state: McpServerState = "starting";
  #error: string | undefined;
  /** The server sent a message over `maxMessageBytes` (the connection was closed for it). */
  #overflowed = false;
  #tools: McpToolInfo[] = [];
  #prompts: McpPromptInfo[] = [];
  #client: Client | undefined;
  #transport: Transport | undefined;
  #stderr = "";
  #closing = false;
  /** The re-listing after a list_changed notification, while it runs. */
  #refreshing: Promise<void> | undefined;
  #reported = false;
  readonly #options: McpConnectionOptions;

  constructor(options: McpConnectionOptions) {
    this.name = options.name;
    this.config = options.config;
    this.#options = options;
  }

  get state(): McpServerState {
    return this.#state;
  }
  /** Why it failed. */
  get error(): string | undefined {
    return this.#error;
  }
  get tools(): readonly McpToolInfo[] {
    return this.#tools;
  }
  get prompts(): readonly McpPromptInfo[] {
    return this.#prompts;
  }
  /** The last lines the server wrote to stderr (stdio servers). */
  get stderrTail(): string {
    return this.#stderr;
  }
  /** Whether the server offers resources (`@<server>:<uri>`). */
  get hasResources(): boolean {
    return this.#client?.getServerCapabilities()?.resources !== undefined;
  }
  get transportKind(): "stdio" | "http" | "sse" | "in_process" {
    if ("command" in this.config) return "stdio";
    if (this.config.type === "in_process") return "in_process";
    return this.config.type === "sse" ? "sse" : "http";
  }

  /** Connects and lists tools and prompts. Never throws: a failure sets `failed` and is reported once. */
  async start(): Promise<void> {
    const timeoutMs = this.config.startupTimeoutMs ?? MCP_STARTUP_TIMEOUT_MS;
    try {
      const [{ Client }, transport] = await Promise.all([
        import("@modelcontextprotocol/sdk/client/index.js"),
        this.#createTransport(),
      ]);
      this.#transport = transport;
      // Closed while the SDK loaded: start nothing.
      if (this.#closing) return;
      const { PromptListChangedNotificationSchema, ToolListChangedNotificationSchema } = await import(
        "@modelcontextprotocol/sdk/types.js"
      );
      const client = new Client(CLIENT_INFO, { capabilities: {} });
      this.#client = client;
      // Our own handlers rather than the SDK's debounced ones: a call that made the server change its
      // list waits for the new list (see callTool), so the model's next request already has it.
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.#listChanged(timeoutMs));
      client.setNotificationHandler(PromptListChangedNotificationSchema, () => this.#listChanged(timeoutMs));
      // A server that answers garbage: the first protocol error ends the start, instead of a timeout.
      let protocolError: ((error: Error) => void) | undefined;
      const garbage = new Promise<never>((_resolve, reject) => {
        protocolError = reject;
      });
      garbage.catch(() => {});
      client.onerror = (error) => {
        if (/ReadBuffer exceeded maximum size/.test(error.message)) this.#overflowed = true;
        if (this.#state === "starting") protocolError?.(error);
      };
      client.onclose = () => this.#closed();
      await withTimeout(
        Promise.race([
          (async () => {
            await client.connect(transport, { timeout: timeoutMs });
            await this.#refresh(timeoutMs);
          })(),
          garbage,
        ]),
        timeoutMs,
        `did not finish starting within ${timeoutMs} ms (raise mcpServers.${this.name}.startupTimeoutMs if it is slow)`,
      );
      if (this.#closing) {
        await this.#shutdown();
        return;
      }
      if (this.#state !== "starting") return;
      this.#state = "ready";
      this.#options.onChange();
    } catch (error) {
      // Closed while starting (the pod closed): nothing to report.
      if (this.#closing) return;
      this.#fail(describeStartError(error, this.config));
      await this.#shutdown();
    }
  }

  /** Calls a tool; `signal` cancels it (the server gets `notifications/cancelled`). */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<McpCallResult> {
    const client = this.#usable();
    let result: McpCallResult;
    try {
      result = (await client.callTool({ name, arguments: args }, undefined, {
        signal: options.signal,
        timeout: options.timeoutMs,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: options.timeoutMs,
        // A progress callback makes the SDK ask for progress notifications, which reset the timeout.
        onprogress: () => {},
      })) as McpCallResult;
    } catch (error) {
      if (!this.#overflowed) throw error;
      const max = this.#options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
      throw new ToolError(
        `The MCP server ${this.name} answered with a message over ${max} bytes, more than a result may have (worker.maxMcpResultBytes); yoi closed the connection and kept nothing of it. Ask for less (a narrower query, a page of the results).`,
      );
    }
    // A list_changed sent during the call arrived before its result (one ordered stream).
    await this.#refreshing;
    return result;
  }

  /** Gets a prompt's messages with its arguments filled. */
  async getPrompt(
    name: string,
    args: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<{
    messages: { role: string; content: { type: string; text?: string } & Record<string, unknown> }[];
  }> {
    const client = this.#usable();
    return (await client.getPrompt({ name, arguments: args }, signal ? { signal } : undefined)) as {
      messages: { role: string; content: { type: string; text?: string } & Record<string, unknown> }[];
    };
  }

  /** Reads a resource. */
  async readResource(
    uri: string,
    signal?: AbortSignal,
  ): Promise<{ contents: { uri: string; mimeType?: string; text?: string; blob?: string }[] }> {
    const client = this.#usable();
    return (await client.readResource({ uri }, signal ? { signal } : undefined)) as {
      contents: { uri: string; mimeType?: string; text?: string; blob?: string }[];
    };
  }

  /** Closes the connection; a stdio server's process is ended (stdin closed, then SIGTERM, then SIGKILL). */
  async close(): Promise<void> {
    if (this.#state === "closed" || this.#state === "disabled") return;
    this.#closing = true;
    if (this.#state !== "failed") this.#state = "closed";
    await this.#shutdown();
  }

  #usable(): Client {
    if (this.#state !== "ready" || this.#client === undefined) {
      const why = this.#state === "failed" ? `failed: ${this.#error ?? "unknown error"}` : this.#state;
      throw new Error(`MCP server "${this.name}" is not available (${why})`);
    }
    return this.#client;
  }

  async #createTransport(): Promise<Transport> {
    const env = this.#options.env;
    const config = this.config;
    if ("command" in config) {
      const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
      const transport = new StdioClientTransport({
        command: expandVars(config.command, env),
        args: (config.args ?? []).map((a) => expandVars(a, env)),
        ...(config.env ? { env: expandMap(config.env, env)! } : {}),
        cwd: config.cwd ?? this.#options.cwd,
        stderr: "pipe",
        // The SDK's 10 MB default closes the connection on one large result (a 5 MB file read
        // arrives twice: as text and as structured content); large results are stored anyway.
        maxBufferSize: this.#options.maxMessageBytes ?? MAX_MESSAGE_BYTES,
      });
      transport.stderr?.on("data", (chunk: Buffer) => {
        this.#stderr = (this.#stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
      });
      const start = transport.start.bind(transport);
      // The pid exists once spawned: track it so the child never outlives yoi.
      transport.start = async () => {
        await start();
        if (transport.pid !== null) trackChild(transport.pid);
      };
      return transport;
    }
    if (config.type === "in_process") {
      const { InMemoryTransport } = await import("@modelcontextprotocol/sdk/inMemory.js");
      const [client, server] = InMemoryTransport.createLinkedPair();
      await config.server.connect(server);
      return client;
    }
    const url = new URL(expandVars(config.url, env));
    const headers = expandMap(config.headers, env);
    const requestInit = headers ? { headers } : undefined;
    if (config.type === "sse") {
      const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js");
      return new SSEClientTransport(url, requestInit ? { requestInit } : undefined);
    }
    const { StreamableHTTPClientTransport } = await import(
      "@modelcontextprotocol/sdk/client/streamableHttp.js"
    );
    return new StreamableHTTPClientTransport(url, requestInit ? { requestInit } : undefined);
  }

  async #refresh(timeoutMs: number): Promise<void> {
    const client = this.#client!;
    const caps = client.getServerCapabilities() ?? {};
    const tools: McpToolInfo[] = [];
    if (caps.tools !== undefined) {
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs });
        tools.push(...(page.tools as McpToolInfo[]));
        cursor = page.nextCursor;
      } while (cursor);
    }
    const prompts: McpPromptInfo[] = [];
    if (caps.prompts !== undefined) {
      let cursor: string | undefined;
      do {
        const page = await client.listPrompts(cursor ? { cursor } : undefined, { timeout: timeoutMs });
        prompts.push(...(page.prompts as McpPromptInfo[]));
        cursor = page.nextCursor;
      } while (cursor);
    }
    this.#tools = tools;
    this.#prompts = prompts;
  }

  /** Re-lists tools and prompts after the server said they changed. */
  #listChanged(timeoutMs: number): void {
    if (this.#state !== "ready") return;
    const previous = this.#refreshing;
    this.#refreshing = (async () => {
      await previous;
      try {
        await this.#refresh(timeoutMs);
        if (this.#state === "ready") this.#options.onChange();
      } catch (error) {
        this.#options.onFailure(
          `MCP server "${this.name}" changed its tools or prompts but listing them failed: ${errorMessage(error)}`,
        );
      }
    })();
  }

  #closed(): void {
    if (this.#closing || this.#state === "closed") return;
    if (this.#state === "ready") {
      this.#fail("stopped unexpectedly (the connection closed)");
      this.#tools = [];
      this.#prompts = [];
      this.#options.onChange();
      void this.#shutdown();
    }
  }

  #fail(reason: string): void {
    this.#state = "failed";
    this.#error = reason;
    if (this.#reported) return;
    this.#reported = true;
    const tail = this.#stderr.trim().split("\n").slice(-5).join(" | ");
    this.#options.onFailure(
      `MCP server "${this.name}" ${reason}${tail ? `; its stderr ends: ${tail}` : ""}; the session goes on without it`,
    );
  }

  async #shutdown(): Promise<void> {
    this.#closing = true;
    const transport = this.#transport;
    const pid = transport && "pid" in transport ? (transport.pid as number | null) : null;
    try {
      await this.#client?.close();
    } catch {
      // Closing a broken connection may fail; the process is ended below either way.
    }
    try {
      await transport?.close();
    } catch {
      // Already closed.
    }
    if (pid !== null) untrackChild(pid);
  }
}

/** A start failure in words: a missing program, a refused connection, a timeout, garbage. */
function describeStartError(error: unknown, config: McpConnectionConfig): string {
  const code = (error as { code?: unknown }).code;
  const message = errorMessage(error);
  if ("command" in config && code === "ENOENT")
    return `could not start: the program "${config.command}" was not found (check mcpServers.<name>.command and PATH)`;
  if ("command" in config && code === "EACCES")
    return `could not start: "${config.command}" is not executable`;
  if (code === "missing_variable") return `is not configured: ${message}`;
  // The SDK's StreamableHTTPError carries the HTTP status as a numeric code.
  if (typeof code === "number" && code >= 400) {
    const hint =
      code === 401 || code === 403 ? " (check its headers: the token may be wrong or missing)" : "";
    return `refused the connection with HTTP ${code}${hint}`;
  }
  // Any other StreamableHTTPError: the server answered, but not in MCP (a web page, a wrong content type).
  if (error instanceof Error && error.constructor.name === "StreamableHTTPError")
    return `answered something that is not MCP (${firstLine(message.replace(/^Streamable HTTP error: /, ""))})`;
  // Raised by the SDK's message parsing: JSON.parse (SyntaxError) or its zod check of a JSON-RPC message.
  if (error instanceof SyntaxError || (error as { name?: unknown }).name === "ZodError")
    return `answered something that is not MCP (${firstLine(message)})`;
  if (/ECONNREFUSED|fetch failed/i.test(message + String((error as { cause?: unknown }).cause ?? "")))
    return `could not be reached at ${"url" in config ? config.url : "its address"} (${rootCauseMessage(error)})`;
  // A stdio server that exits at once: the SDK's first write (initialize) may meet a closed pipe
  // before the close is seen; either way the program ended before it started.
  if (/Connection closed/i.test(message) || ("command" in config && code === "EPIPE"))
    return "exited before it finished starting";
  return `failed to start: ${firstLine(message)}`;
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
