/**
 * `yoi acp`: yoi as an Agent Client Protocol agent on stdio, for editors
 * (Zed, JetBrains IDEs, Neovim). stdout carries JSON-RPC and nothing else:
 * every other write to it, and the console, goes to stderr. Each
 * `session/new` or `session/load` opens a Pod on the client's directory the
 * way print mode does (config, trust, model, permission flags); the
 * protocol's side is the official SDK's stable v1 entry point.
 */
import { statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { Readable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { errorMessage } from "@yoi/manifest/errors";
import type { Command, SessionFlags } from "../args.ts";
import { CliError } from "../cli-error.ts";
import { captureConsole } from "../console-capture.ts";
import { describeError } from "../describe-error.ts";
import { EXIT } from "../exit-codes.ts";
import { openPodWith, restoreWarnings } from "../open-session.ts";
import { sandboxNotice } from "../permission-flags.ts";
import { untrustedNote } from "../project-trust.ts";
import { applySessionFlags, loadProjectConfig, type ModelSetup, modelSetup } from "../session-setup.ts";
import { chatSessionPlan } from "../sessions/resume-target.ts";
import { sanitize } from "../terminal-text.ts";
import { cliVersion } from "../version.ts";
import { AcpSession, editorFileAccess } from "./acp-session.ts";

/** How long the command list waits for MCP servers still starting before it is sent again. */
const MCP_COMMANDS_WAIT_MS = 10_000;

export async function acpCommand(command: Extract<Command, { kind: "acp" }>): Promise<number> {
  const log = (line: string) => process.stderr.write(`yoi acp: ${sanitize(line)}\n`);
  const output = claimStdout();
  const secrets: string[] = [];
  const restoreConsole = captureConsole(log, secrets);
  const agent = new AcpAgent(command.flags, log, secrets);
  const connection = agent.app.connect(
    acp.ndJsonStream(output, Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>),
  );
  await connection.closed;
  await agent.closeAll();
  restoreConsole();
  return EXIT.ok;
}

/**
 * The JSON-RPC stream on the real stdout; `process.stdout.write` from here
 * on goes to stderr, so no library, SDK or stray log line can break the protocol.
 */
function claimStdout(): WritableStream<Uint8Array> {
  const stdout = process.stdout;
  const write = stdout.write.bind(stdout);
  stdout.write = ((chunk: never, encoding?: never, callback?: never) =>
    process.stderr.write(chunk, encoding, callback)) as typeof stdout.write;
  return new WritableStream<Uint8Array>({
    write: (chunk) =>
      new Promise<void>((resolve, reject) => {
        write(chunk, (error?: Error | null) => (error ? reject(error) : resolve()));
      }),
  });
}

class AcpAgent {
  readonly app: acp.AgentApp;
  readonly #flags: SessionFlags;
  readonly #log: (line: string) => void;
  readonly #secrets: string[];
  readonly #sessions = new Map<string, AcpSession>();
  #capabilities: acp.ClientCapabilities | undefined;

  constructor(flags: SessionFlags, log: (line: string) => void, secrets: string[]) {
    this.#flags = flags;
    this.#log = log;
    this.#secrets = secrets;
    this.app = acp
      .agent({ name: "yoi" })
      .onRequest("initialize", ({ params }) => this.#initialize(params))
      .onRequest("session/new", ({ params, client }) => this.#newSession(params, client))
      .onRequest("session/load", ({ params, client }) => this.#loadSession(params, client))
      .onRequest("session/prompt", ({ params }) => this.#session(params.sessionId).prompt(params.prompt))
      .onRequest("session/set_mode", ({ params }) => {
        this.#session(params.sessionId).setMode(params.modeId);
        return {};
      })
      .onNotification("session/cancel", ({ params }) => {
        this.#sessions.get(params.sessionId)?.cancel();
      });
  }

  #initialize(params: acp.InitializeRequest): acp.InitializeResponse {
    this.#capabilities = params.clientCapabilities;
    return {
      protocolVersion: Math.min(params.protocolVersion, acp.PROTOCOL_VERSION),
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: true },
      },
      agentInfo: { name: "yoi", title: "yoi", version: cliVersion() },
      authMethods: [],
    };
  }

  #session(id: string): AcpSession {
    const session = this.#sessions.get(id);
    if (session === undefined) throw acp.RequestError.sessionNotFound(id);
    return session;
  }

  async #newSession(
    params: acp.NewSessionRequest,
    client: acp.AgentContext,
  ): Promise<acp.NewSessionResponse> {
    const session = await this.#open(params, client);
    return { sessionId: session.id, modes: session.modes };
  }

  async #loadSession(
    params: acp.LoadSessionRequest,
    client: acp.AgentContext,
  ): Promise<acp.LoadSessionResponse> {
    const open = this.#sessions.get(params.sessionId);
    if (open?.running) {
      throw acp.RequestError.invalidRequest(
        { sessionId: params.sessionId },
        `session ${params.sessionId} is answering a prompt; cancel it before loading it again`,
      );
    }
    if (open !== undefined) {
      this.#sessions.delete(params.sessionId);
      await open.close();
    }
    const session = await this.#open(params, client, params.sessionId);
    session.replay(session.opened.pod.history);
    await session.flushed();
    return { modes: session.modes };
  }

  /** Opens a pod on the client's directory (with its MCP servers), as print mode opens one. */
  async #open(
    params: acp.NewSessionRequest | acp.LoadSessionRequest,
    client: acp.AgentContext,
    resume?: string,
  ): Promise<AcpSession> {
    if (!isAbsolute(params.cwd))
      throw acp.RequestError.invalidParams(
        { cwd: params.cwd },
        `cwd must be an absolute path; got "${params.cwd}"`,
      );
    if (!statSync(params.cwd, { throwIfNoEntry: false })?.isDirectory())
      throw acp.RequestError.invalidParams({ cwd: params.cwd }, `cwd ${params.cwd} is not a directory`);
    let id = resume ?? "";
    let session: AcpSession | undefined;
    try {
      const base = await loadProjectConfig(
        { cwd: params.cwd },
        {
          trust: {
            onIgnored: (ignored) => this.#log(untrustedNote(ignored, "there")),
          },
        },
      );
      const plan = await chatSessionPlan(
        { flags: this.#flags, continueLast: false, ...(resume !== undefined ? { resume } : {}) },
        base,
        async () => undefined,
      );
      const setup = withClientMcp(
        await modelSetup(await applySessionFlags(base, plan.flags)),
        params.mcpServers,
        this.#log,
      );
      this.#secrets.push(setup.apiKey);
      const fileAccess = editorFileAccess(client, this.#capabilities, () => id);
      const opened = await openPodWith(setup, {
        ...plan.open,
        ask: (request) => (session as AcpSession).ask(request),
        ...(fileAccess ? { fileAccess } : {}),
      });
      id = opened.pod.id;
      session = new AcpSession(opened, { client, log: this.#log });
      for (const note of setup.notes) this.#log(`note: ${note}`);
      const sandbox = sandboxNotice(opened.pod.sandbox);
      if (sandbox) this.#log(`warn: ${sandbox}`);
      for (const warning of restoreWarnings(opened.pod)) this.#log(`warn: ${warning}`);
    } catch (error) {
      throw requestError(error);
    }
    this.#sessions.set(session.id, session);
    this.#announceCommands(session);
    return session;
  }

  /** The command list right after the session's response, and again once its MCP servers' prompts are in. */
  #announceCommands(session: AcpSession): void {
    setImmediate(() => session.sendCommands());
    const { mcp } = session.opened.pod;
    if (mcp.configured) {
      void mcp.ready(MCP_COMMANDS_WAIT_MS).then(
        () => {
          if (this.#sessions.get(session.id) === session && mcp.prompts().length > 0) session.sendCommands();
        },
        () => {},
      );
    }
  }

  /** When the client is gone: every run stops (open questions count as denials) and every log is closed. */
  async closeAll(): Promise<void> {
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(
      sessions.map((s) =>
        s.close().catch((error: unknown) => this.#log(`closing ${s.id}: ${errorMessage(error)}`)),
      ),
    );
  }
}

/** The client's MCP servers, added to the config's like configured ones (same name: the client's). */
function withClientMcp(
  setup: ModelSetup,
  servers: readonly acp.McpServer[],
  log: (line: string) => void,
): ModelSetup {
  if (servers.length === 0) return setup;
  // Entries are checked when the pod starts them, like the config file's (a bad one is an alert, not a crash).
  const mcpServers: Record<string, Record<string, unknown>> = { ...setup.config.mcpServers };
  for (const server of servers) {
    if (Object.hasOwn(mcpServers, server.name))
      log(`MCP server "${server.name}" of the editor replaces the configured one`);
    mcpServers[server.name] =
      "url" in server
        ? {
            type: server.type,
            url: server.url,
            headers: Object.fromEntries(server.headers.map((h) => [h.name, h.value])),
          }
        : {
            command: server.command,
            args: server.args,
            env: Object.fromEntries(server.env.map((e) => [e.name, e.value])),
          };
  }
  return { ...setup, config: { ...setup.config, mcpServers } };
}

/** A failure to open a session as a JSON-RPC error that says what was wrong. */
function requestError(error: unknown): unknown {
  if (error instanceof acp.RequestError) return error;
  if (CliError.isInstance(error)) {
    if (/^no session "/.test(error.message) || /is not a session id/.test(error.message))
      return new acp.RequestError(-32002, error.message);
    return acp.RequestError.invalidParams(undefined, error.message);
  }
  return acp.RequestError.internalError(undefined, describeError(error).message);
}
