import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { ProviderKind } from "../item.ts";
import { closeServer, frameLines, listen, type ReplayServer, readBody, sdkBaseURL } from "./replay-server.ts";
import { anthropicWire } from "./wire-anthropic.ts";
import type { ScriptedToolCall, ScriptedTurnOptions, WireFormat } from "./wire-format.ts";
import { geminiWire } from "./wire-gemini.ts";
import { openAIChatWire } from "./wire-openai-chat.ts";
import { openAIResponsesWire } from "./wire-openai-responses.ts";

/** The wire format of each provider. */
export const WIRE_FORMATS: Record<ProviderKind, WireFormat> = {
  anthropic: anthropicWire,
  "openai-chat": openAIChatWire,
  "openai-responses": openAIResponsesWire,
  gemini: geminiWire,
};

/** How a streamed step ends after its bytes are written. */
export type StreamEnd =
  /** End the response normally. */
  | "complete"
  /** Destroy the socket (a connection torn mid-stream). */
  | "close"
  /** Keep the connection open and send nothing more (a stalled server). */
  | "hang";

interface StreamStepOptions {
  /** HTTP status of the stream response. Default 200. */
  status?: number;
  headers?: Record<string, string>;
  /** Send only the first N bytes of the framed body. */
  truncateBytes?: number;
  /**
   * Byte offsets at which the body is split into separate writes (with a
   * pause between them), e.g. `[k]` to cut one event at byte k; `0` pauses
   * after the headers, before the first byte (a model slow to answer).
   */
  splitAt?: number[];
  /** Default `complete`. */
  end?: StreamEnd;
}

/** One scripted answer; each request takes the next step. */
export type ScriptStep =
  /** Recorded payloads (fixture format), framed like the provider. */
  | ({ type: "lines"; lines: string[] } & StreamStepOptions)
  /** A response built with the provider's {@link WireFormat}. */
  | ({
      type: "reply";
      text?: string;
      toolCalls?: ScriptedToolCall[];
      options?: ScriptedTurnOptions;
    } & StreamStepOptions)
  /** Bytes written as they are (already framed; for malformed streams). */
  | ({ type: "raw"; body: string } & StreamStepOptions)
  /**
   * Recorded-format payloads made as they are sent, framed like the
   * provider and written with backpressure: a stream of hundreds of
   * megabytes without holding it in memory. Stops when the client goes.
   */
  | { type: "generate"; lines: () => Iterable<string> | AsyncIterable<string> }
  /** An HTTP error; `body` defaults to the provider's error shape with `message`. */
  | { type: "error"; status: number; message?: string; headers?: Record<string, string>; body?: unknown }
  /** Response headers, then nothing at all. */
  | { type: "silence"; status?: number };

export interface ScriptedServerOptions {
  provider: ProviderKind;
  /** Steps in request order, or a function choosing the step of request `index` (from 0). */
  script: ScriptStep[] | ((index: number, body: unknown) => ScriptStep);
  /**
   * Check every request like the real API (tool results answer the calls of
   * the previous assistant turn, every call gets a result, valid roles) and
   * answer 400 in the provider's error shape when one is violated.
   */
  validate?: boolean;
  /**
   * Pause between split writes, in ms. Default 2: measured on 127.0.0.1, a
   * pause of 2 ms makes every split arrive as its own read (1 ms: 90%; an
   * event-loop turn: none).
   */
  splitPauseMs?: number;
}

export interface ScriptedServer extends ReplayServer {
  /** Validation failures sent as 400, in order. */
  rejections: string[];
  /** The headers of each request, in order (which key a client sent, its version headers). */
  headers: IncomingHttpHeaders[];
}

const PATHS: Record<ProviderKind, RegExp> = {
  anthropic: /^\/v1\/messages(\?|$)/,
  "openai-chat": /^\/v1\/chat\/completions(\?|$)/,
  "openai-responses": /^\/v1\/responses(\?|$)/,
  gemini: /:streamGenerateContent(\?|$)/,
};

/**
 * A fake provider on 127.0.0.1 for multi-turn and fault tests: request N
 * gets script step N. It records every parsed request body.
 */
export async function startScriptedServer(options: ScriptedServerOptions): Promise<ScriptedServer> {
  const wire = WIRE_FORMATS[options.provider];
  const requests: unknown[] = [];
  const rejections: string[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const pause = options.splitPauseMs ?? 2;
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const index = requests.length;
    requests.push(body);
    headers.push({ ...req.headers });
    const json = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(payload));
    };
    if (req.method !== "POST" || !PATHS[options.provider].test(req.url ?? "")) {
      json(
        404,
        wire.errorBody(404, `scripted ${options.provider} server: no route for ${req.method} ${req.url}`),
      );
      return;
    }
    if (options.validate) {
      const problem = wire.validate(body);
      if (problem !== undefined) {
        rejections.push(problem);
        json(400, wire.errorBody(400, problem));
        return;
      }
    }
    const script = options.script;
    const step = typeof script === "function" ? script(index, body) : script[index];
    if (step === undefined) {
      json(
        500,
        wire.errorBody(500, `scripted server: no step for request ${index + 1} (the script has ${index})`),
      );
      return;
    }
    switch (step.type) {
      case "error":
        json(
          step.status,
          step.body ?? wire.errorBody(step.status, step.message ?? `scripted ${step.status}`),
          step.headers,
        );
        return;
      case "silence":
        res.writeHead(step.status ?? 200, { "content-type": "text/event-stream" });
        res.flushHeaders();
        return;
      case "generate":
        await writeGenerated(res, options.provider, step.lines());
        return;
      default: {
        const framed =
          step.type === "raw"
            ? step.body
            : frameLines(
                options.provider,
                step.type === "lines"
                  ? step.lines
                  : wire.response(step.text ?? "", step.toolCalls, step.options),
              );
        await writeStream(res, Buffer.from(framed, "utf8"), step, pause);
      }
    }
  });
  const origin = await listen(server);
  return {
    baseURL: sdkBaseURL(options.provider, origin),
    requests,
    rejections,
    headers,
    close: () => closeServer(server),
  };
}

/** Waits for `res` to drain or close; the listener of the other is removed (a long stream waits thousands of times). */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done).once("close", done);
  });
}

async function writeGenerated(
  res: ServerResponse,
  provider: ProviderKind,
  lines: Iterable<string> | AsyncIterable<string>,
): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.flushHeaders();
  let gone = false;
  res.on("close", () => {
    gone = true;
  });
  let batch = "";
  for await (const line of lines) {
    if (gone) return;
    batch += frameLines(provider, [line]).replace(/data: \[DONE\]\n\n$/, "");
    if (batch.length < 64 * 1024) continue;
    const more = res.write(batch);
    batch = "";
    if (!more) await drainedOrClosed(res);
  }
  if (gone) return;
  if (provider === "openai-chat") batch += "data: [DONE]\n\n";
  res.end(batch);
}

async function writeStream(
  res: ServerResponse,
  bytes: Buffer,
  step: StreamStepOptions,
  pause: number,
): Promise<void> {
  const body = step.truncateBytes === undefined ? bytes : bytes.subarray(0, step.truncateBytes);
  res.writeHead(step.status ?? 200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    ...step.headers,
  });
  res.flushHeaders();
  const cuts = [...(step.splitAt ?? [])].filter((n) => n >= 0 && n < body.length).sort((a, b) => a - b);
  let from = 0;
  for (const cut of cuts) {
    res.write(body.subarray(from, cut));
    from = cut;
    // Let the first part reach the client as its own read.
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
  if (from < body.length) res.write(body.subarray(from));
  switch (step.end ?? "complete") {
    case "complete":
      res.end();
      return;
    case "close":
      // Give the written bytes a moment to leave before the socket is torn.
      await new Promise((resolve) => setTimeout(resolve, pause));
      res.socket?.destroy();
      return;
    case "hang":
      return;
  }
}
