/**
 * An example of an outside provider written only against the public
 * `@yoi/llm-client/adapter` subpath: a made-up NDJSON streaming API on
 * 127.0.0.1 (`{"t":"text","v":"..."}` lines, then `{"t":"done"}`), its
 * errors described as a table, plugged in with `createClientWithAdapter`
 * under its own provider name, `ndjson`. The client supplies retries,
 * timeouts and the stream contract; the adapter marks its reasoning with its
 * name and sends back only its own.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  type AdapterFactory,
  classifyNoResponse,
  classifyWithTable,
  createClientWithAdapter,
  dropForeignReasoning,
  type ErrorTable,
  endAborted,
  failStream,
  incompleteStream,
  type Normalizer,
  OpenBlocks,
  retryAfterFromHeaders,
} from "../src/adapter.ts";
// An outside package imports these as "@yoi/llm-client" and "@yoi/llm-client/adapter".
import {
  assistantMessage,
  type ClientWarning,
  createClient,
  type Event,
  type Item,
  LlmError,
  type ProviderName,
  userMessage,
} from "../src/index.ts";
import { fold } from "./stream-helpers.ts";

const NDJSON_ERRORS: ErrorTable = { provider: "ndjson", byType: { quota: "rate_limit" } };

/** Lines of the response body, parsed. */
async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  let buffer = "";
  for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let nl = buffer.indexOf("\n");
    while (nl >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim() !== "") yield JSON.parse(line);
      nl = buffer.indexOf("\n");
    }
  }
}

class NdjsonNormalizer implements Normalizer {
  private readonly open = new OpenBlocks();
  private started = false;
  private done = false;
  private readonly signal: AbortSignal;
  private readonly provider: ProviderName;
  constructor(signal: AbortSignal, provider: ProviderName) {
    this.signal = signal;
    this.provider = provider;
  }

  payload(payload: unknown, out: Event[]): boolean {
    const p = payload as { t: string; v?: string; sig?: string };
    if (!this.started) {
      this.started = true;
      out.push({ type: "status", status: "started" });
    }
    if (p.t === "think") {
      // One whole thinking block, replayable only to this provider (its name marks it).
      out.push({ type: "block_start", index: 1, block: "thinking" });
      out.push({ type: "block_delta", index: 1, delta: "thinking", text: p.v ?? "" });
      const replay = { provider: this.provider, ...(p.sig ? { signature: p.sig } : {}) };
      out.push({ type: "block_stop", index: 1, block: "thinking", replay });
      return false;
    }
    if (p.t === "text") {
      if (!this.open.has(0)) {
        this.open.start(0, "text");
        out.push({ type: "block_start", index: 0, block: "text" });
      }
      out.push({ type: "block_delta", index: 0, delta: "text", text: p.v ?? "" });
      return false;
    }
    if (p.t === "done") {
      this.done = true;
      if (this.open.has(0)) out.push({ type: "block_stop", index: 0, block: "text" });
      this.open.stop(0);
      out.push({ type: "status", status: "completed", stopReason: "end_turn" });
      return true;
    }
    return false;
  }

  end(out: Event[]): void {
    if (this.done) return;
    if (this.signal.aborted) out.push(...endAborted(this.signal, this.open));
    else out.push(...failStream(incompleteStream("ndjson", 'the {"t":"done"} line'), this.open));
  }

  fail(error: unknown, out: Event[]): void {
    if (this.signal.aborted) out.push(...endAborted(this.signal, this.open));
    else out.push(...failStream(classifyNoResponse("ndjson", error, true), this.open));
  }
}

const ndjsonAdapter =
  (baseURL: string): AdapterFactory =>
  (options) => ({
    async open(request, signal) {
      // Other providers' reasoning cannot be verified here: send only ours, say what was dropped.
      const { items, warning } = dropForeignReasoning(options.provider, request.items);
      if (warning) options.onWarning?.(warning);
      let response: Response;
      try {
        response = await fetch(`${baseURL}/stream`, {
          method: "POST",
          body: JSON.stringify(items),
          signal,
        });
      } catch (error) {
        throw classifyNoResponse("ndjson", error, false);
      }
      if (!response.ok) {
        const body = (await response.json().catch(() => ({}))) as { type?: string; message?: string };
        throw classifyWithTable(NDJSON_ERRORS, {
          status: response.status,
          types: [body.type],
          message: body.message ?? response.statusText,
          retryAfterMs: retryAfterFromHeaders(response.headers),
        });
      }
      return { payloads: lines(response.body!), normalizer: new NdjsonNormalizer(signal, options.provider) };
    },
  });

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** Bodies the server received, parsed. */
let received: unknown[] = [];

async function serve(answers: ((res: import("node:http").ServerResponse) => void)[]): Promise<string> {
  let n = 0;
  received = [];
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => {
      received.push(JSON.parse(body));
      answers[Math.min(n++, answers.length - 1)]!(res);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const ok = (res: import("node:http").ServerResponse) => {
  res.writeHead(200, { "content-type": "application/x-ndjson" });
  res.end('{"t":"text","v":"Hel"}\n{"t":"text","v":"lo"}\n{"t":"done"}\n');
};

describe("an outside adapter through @yoi/llm-client/adapter", () => {
  it("streams through the client's contract", async () => {
    const baseURL = await serve([ok]);
    const client = createClientWithAdapter({ provider: "ndjson", model: "m" }, async () =>
      ndjsonAdapter(baseURL),
    );
    const events: Event[] = [];
    for await (const e of client.stream({ items: [userMessage("hi")] })) events.push(e);
    const r = fold(events);
    expect([r.status, r.text]).toEqual(["completed", "Hello"]);
    expect(client.provider).toBe("ndjson");
  });

  it("marks its reasoning with its own name and sends back only its own", async () => {
    const baseURL = await serve([
      (res) => {
        res.writeHead(200);
        res.end('{"t":"think","v":"hmm","sig":"nd-sig-1"}\n{"t":"text","v":"A"}\n{"t":"done"}\n');
      },
      ok,
    ]);
    const warnings: ClientWarning[] = [];
    const client = createClientWithAdapter(
      { provider: "ndjson", model: "m", onWarning: (w) => warnings.push(w) },
      async () => ndjsonAdapter(baseURL),
    );
    const first: Event[] = [];
    for await (const e of client.stream({ items: [userMessage("hi")] })) first.push(e);
    const r = fold(first);
    expect([r.thinking, r.replays]).toEqual(["hmm", [{ provider: "ndjson", signature: "nd-sig-1" }]]);

    // History from a session that began on Anthropic, then went on with this provider.
    const history: Item[] = [
      userMessage("start"),
      { type: "reasoning", text: "anthropic thoughts", signature: "anth-sig", provider: "anthropic" },
      assistantMessage("from anthropic"),
      userMessage("hi"),
      { type: "reasoning", text: "hmm", signature: "nd-sig-1", provider: r.replays[0]!.provider },
      assistantMessage("A"),
      userMessage("again"),
    ];
    const second: Event[] = [];
    for await (const e of client.stream({ items: history })) second.push(e);
    expect(fold(second).text).toBe("Hello");
    const sent = JSON.stringify(received[1]);
    expect(sent).not.toContain("anthropic thoughts");
    expect(sent).toContain("nd-sig-1");
    expect((received[1] as unknown[]).length).toBe(history.length - 1);
    expect(warnings).toEqual([expect.objectContaining({ code: "dropped_reasoning", detail: { count: 1 } })]);
    expect(warnings[0]?.message).toMatch(/^ndjson: 1 reasoning item\(s\) from anthropic/);
  });

  it("classifies its errors under its own name", async () => {
    const baseURL = await serve([
      (res) => {
        res.writeHead(401, { "content-type": "application/json" });
        res.end('{"type":"auth","message":"bad key"}');
      },
    ]);
    const client = createClientWithAdapter({ provider: "ndjson", model: "m" }, async () =>
      ndjsonAdapter(baseURL),
    );
    const events: Event[] = [];
    for await (const e of client.stream({ items: [userMessage("hi")] })) events.push(e);
    const r = fold(events);
    expect(r.status).toBe("failed");
    expect(r.errors[0]).toMatchObject({ code: "auth", retryable: false, status: 401 });
    expect(r.errors[0]?.message).toMatch(/^ndjson: bad key/);
    expect(received).toHaveLength(1);
  });

  it("createClient still takes only the built-in providers", () => {
    let thrown: unknown;
    try {
      createClient({ provider: "ndjson", model: "m" });
    } catch (error) {
      thrown = error;
    }
    expect(LlmError.isInstance(thrown) && thrown.code).toBe("config");
    expect(String((thrown as Error).message)).toMatch(/unknown provider "ndjson".*createClientWithAdapter/);
  });

  it("gets the client's retry policy: a 429 with retry-after is retried, then succeeds", async () => {
    const baseURL = await serve([
      (res) => {
        res.writeHead(429, { "content-type": "application/json", "retry-after-ms": "5" });
        res.end('{"type":"quota","message":"slow down"}');
      },
      ok,
    ]);
    const client = createClientWithAdapter(
      { provider: "ndjson", model: "m", retry: { maxAttempts: 2, initialDelayMs: 1 } },
      async () => ndjsonAdapter(baseURL),
    );
    const events: Event[] = [];
    for await (const e of client.stream({ items: [userMessage("hi")] })) events.push(e);
    expect(fold(events).text).toBe("Hello");
  });

  it("a body cut before its done line is an incomplete_stream failure", async () => {
    const baseURL = await serve([
      (res) => {
        res.writeHead(200);
        res.end('{"t":"text","v":"Hel"}\n');
      },
    ]);
    const client = createClientWithAdapter(
      { provider: "ndjson", model: "m", retry: { maxAttempts: 1 } },
      async () => ndjsonAdapter(baseURL),
    );
    const events: Event[] = [];
    for await (const e of client.stream({ items: [userMessage("hi")] })) events.push(e);
    const r = fold(events);
    expect([r.status, r.errors[0]?.code]).toEqual(["failed", "incomplete_stream"]);
  });
});
