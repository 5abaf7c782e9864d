/**
 * A real ACP client for the tests and the bench: the official SDK's client
 * side, connected to the shipped `dist/bin.js acp` over its stdio. Every
 * line the agent writes to stdout is kept as it came, so a test can check
 * that stdout carried JSON-RPC and nothing else.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { PassThrough, Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { yoiArgv } from "./helpers.ts";

export type PermissionAnswer = (
  request: acp.RequestPermissionRequest,
  signal: AbortSignal,
) => Promise<acp.RequestPermissionResponse>;

export interface AcpClientOptions {
  cwd: string;
  env: Record<string, string>;
  args?: string[];
  /** How the client answers permission questions. Default: reject. */
  permission?: PermissionAnswer;
  /** Editor buffers: when given, the client offers fs/read_text_file and fs/write_text_file. */
  buffers?: Map<string, string>;
}

export interface AcpClient {
  agent: acp.ClientContext;
  child: ChildProcess;
  updates: acp.SessionNotification[];
  permissionRequests: acp.RequestPermissionRequest[];
  fsCalls: string[];
  /** Every stdout line, raw. */
  stdoutLines: string[];
  stderr: () => string;
  /** Resolves when an update matching `match` has arrived (checks those already in). */
  waitForUpdate: (match: (u: acp.SessionUpdate) => boolean) => Promise<acp.SessionUpdate>;
  /** Writes raw bytes to the agent's stdin (malformed input). */
  writeRaw: (line: string) => void;
  /** Closes stdin and waits for the agent to exit. */
  close: () => Promise<number | null>;
}

export function startAcp(options: AcpClientOptions): AcpClient {
  const [node, ...argv] = yoiArgv();
  const child = spawn(node as string, [...argv, "acp", ...(options.args ?? [])], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const stdoutLines: string[] = [];
  const tap = new PassThrough();
  let partial = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    partial += chunk.toString("utf8");
    const lines = partial.split("\n");
    partial = lines.pop() ?? "";
    stdoutLines.push(...lines.filter((l) => l !== ""));
    tap.write(chunk);
  });
  child.stdout?.on("end", () => tap.end());
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));

  const updates: acp.SessionNotification[] = [];
  const permissionRequests: acp.RequestPermissionRequest[] = [];
  const fsCalls: string[] = [];
  const waiters: { match: (u: acp.SessionUpdate) => boolean; resolve: (u: acp.SessionUpdate) => void }[] = [];
  const permission: PermissionAnswer =
    options.permission ?? (async () => ({ outcome: { outcome: "selected", optionId: "reject_once" } }));

  let app = acp
    .client({ name: "yoi-test-client" })
    .onNotification("session/update", ({ params }) => {
      updates.push(params);
      for (const w of [...waiters]) {
        if (w.match(params.update)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(params.update);
        }
      }
    })
    .onRequest("session/request_permission", ({ params, signal }) => {
      permissionRequests.push(params);
      return permission(params, signal);
    });
  const buffers = options.buffers;
  if (buffers !== undefined) {
    app = app
      .onRequest("fs/read_text_file", ({ params }) => {
        fsCalls.push(`read ${params.path}`);
        const content = buffers.get(params.path);
        if (content === undefined) throw acp.RequestError.resourceNotFound(params.path);
        return { content };
      })
      .onRequest("fs/write_text_file", ({ params }) => {
        fsCalls.push(`write ${params.path}`);
        buffers.set(params.path, params.content);
        return {};
      });
  }
  const connection = app.connect(
    acp.ndJsonStream(
      Writable.toWeb(child.stdin as Writable) as WritableStream<Uint8Array>,
      Readable.toWeb(tap) as ReadableStream<Uint8Array>,
    ),
  );
  return {
    agent: connection.agent,
    child,
    updates,
    permissionRequests,
    fsCalls,
    stdoutLines,
    stderr: () => stderr,
    waitForUpdate: (match) => {
      const found = updates.find((n) => match(n.update));
      if (found !== undefined) return Promise.resolve(found.update);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    writeRaw: (line) => {
      child.stdin?.write(line);
    },
    close: async () => {
      connection.close();
      child.stdin?.end();
      return exited;
    },
  };
}

/** The client capabilities of an editor that serves its buffers. */
export const FS_CAPABILITIES: acp.ClientCapabilities = { fs: { readTextFile: true, writeTextFile: true } };

export function initialize(client: AcpClient, capabilities: acp.ClientCapabilities = {}) {
  return client.agent.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: capabilities,
    clientInfo: { name: "yoi-test-client", version: "0" },
  });
}
