import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ProviderKind } from "../item.ts";

export interface ReplayServerOptions {
  provider: ProviderKind;
  /** Recorded payloads, one JSON document per entry (the fixture format). */
  lines: string[];
}

export interface ReplayServer {
  /** Base URL to hand the SDK (includes `/v1` for OpenAI). */
  baseURL: string;
  /** Parsed JSON bodies of the requests received, in order. */
  requests: unknown[];
  close(): Promise<void>;
}

/** Frames recorded payloads the way the provider's server does on the wire. */
export function frameLines(provider: ProviderKind, lines: string[]): string {
  let out = "";
  for (const line of lines) {
    if (line.trim() === "") continue;
    if (provider === "anthropic" || provider === "openai-responses") {
      out += `event: ${eventType(line)}\ndata: ${line}\n\n`;
    } else {
      out += `data: ${line}\n\n`;
    }
  }
  if (provider === "openai-chat") out += "data: [DONE]\n\n";
  return out;
}

function eventType(line: string): string {
  try {
    const parsed = JSON.parse(line) as { type?: unknown };
    return typeof parsed.type === "string" ? parsed.type : "message";
  } catch {
    return "message";
  }
}

export async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

/** The base URL an SDK of `provider` needs for a server at `origin`. */
export function sdkBaseURL(provider: ProviderKind, origin: string): string {
  return provider === "openai-chat" || provider === "openai-responses" ? `${origin}/v1` : origin;
}

/**
 * Serves one recorded stream, with the provider's SSE framing, to every
 * request on 127.0.0.1.
 */
export async function startReplayServer(options: ReplayServerOptions): Promise<ReplayServer> {
  const body = frameLines(options.provider, options.lines);
  const requests: unknown[] = [];
  const server = createServer(async (req, res) => {
    requests.push(await readBody(req));
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.end(body);
  });
  const origin = await listen(server);
  return {
    baseURL: sdkBaseURL(options.provider, origin),
    requests,
    close: () => closeServer(server),
  };
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
