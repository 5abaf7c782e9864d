/**
 * The HTTP transport of the provider SDKs inside the `yoi` bundle: `fetch`,
 * `Headers`, `Response` and `FormData` as the SDKs (and llm-client's
 * adapters) use them, sent with `node:http` / `node:https`. bundle.ts binds
 * these names in those packages' modules (the `provider-fetch` plugin);
 * nothing else in the process sees them, and the libraries, run from their
 * sources, still use Node's own `fetch`.
 *
 * Why: Node's `fetch`, `Headers`, `Response` and `FormData` are all undici,
 * and the first use of any of them loads and runs undici whole. That was
 * some 40 ms of every `yoi -p` before its request left (spawn to the
 * server having the request: a bare `node` with `http.request` 41 ms, with
 * `fetch` 82 ms, `node -e 0` 37 ms). docs/cli-startup.md has the figures.
 *
 * What it does, as fetch does: follows redirects (dropping credentials when
 * one leaves the origin), asks for and decodes gzip, deflate and brotli,
 * honours the abort signal before and while the body is read, rejects a
 * network failure as `TypeError("fetch failed", { cause })` and a torn body
 * as `TypeError("terminated", { cause })`. The agent is Node's global one,
 * so `NODE_USE_ENV_PROXY`, `NODE_EXTRA_CA_CERTS` and keep-alive work as for
 * any Node program. A request this module does not handle (a `Request`
 * object, a stream or form body, a scheme other than http(s)) goes to
 * Node's own `fetch`.
 */
import type { IncomingMessage } from "node:http";
import type { Readable } from "node:stream";

type HeadersInit = Iterable<readonly [string, string]> | Record<string, string | readonly string[]>;

// RFC 9110 token characters for names; values may not hold NUL, CR or LF.
const NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE = /[\0\r\n]/;

/** WHATWG `Headers`: names compared without case, repeated values joined with ", ", iterated in name order. */
export class Headers implements Iterable<[string, string]> {
  readonly #values = new Map<string, string>();

  constructor(init?: HeadersInit | null) {
    if (init === undefined || init === null) return;
    if (typeof (init as Iterable<unknown>)[Symbol.iterator] === "function") {
      for (const pair of init as Iterable<readonly [string, string]>) {
        if (pair.length !== 2) throw new TypeError("Headers: each header must be a [name, value] pair");
        this.append(pair[0], pair[1]);
      }
      return;
    }
    for (const [name, value] of Object.entries(init)) {
      if (Array.isArray(value)) for (const v of value) this.append(name, v);
      else this.append(name, value as string);
    }
  }

  append(name: string, value: string): void {
    const key = checkedName(name);
    const text = checkedValue(value);
    const old = this.#values.get(key);
    this.#values.set(key, old === undefined ? text : `${old}, ${text}`);
  }
  set(name: string, value: string): void {
    this.#values.set(checkedName(name), checkedValue(value));
  }
  get(name: string): string | null {
    return this.#values.get(String(name).toLowerCase()) ?? null;
  }
  has(name: string): boolean {
    return this.#values.has(String(name).toLowerCase());
  }
  delete(name: string): void {
    this.#values.delete(String(name).toLowerCase());
  }
  getSetCookie(): string[] {
    const cookie = this.#values.get("set-cookie");
    return cookie === undefined ? [] : [cookie];
  }
  forEach(callback: (value: string, name: string, headers: Headers) => void, thisArg?: unknown): void {
    for (const [name, value] of this) callback.call(thisArg, value, name, this);
  }
  *entries(): IterableIterator<[string, string]> {
    yield* [...this.#values].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }
  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }
  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
  get [Symbol.toStringTag](): string {
    return "Headers";
  }
}

function checkedName(name: string): string {
  const text = String(name);
  if (!NAME.test(text)) throw new TypeError(`Headers: "${text}" is not a valid header name`);
  return text.toLowerCase();
}

function checkedValue(value: string): string {
  // Leading and trailing white space is not part of a value (fetch strips it too).
  const text = String(value).replace(/^[\t ]+|[\t ]+$/g, "");
  if (BAD_VALUE.test(text)) throw new TypeError("Headers: a header value may not contain NUL, CR or LF");
  return text;
}

/**
 * A response body: an async iterable of bytes (how the Stainless SDKs read
 * a stream) that also hands out a reader (how the Gemini SDK reads one).
 */
class Body implements AsyncIterable<Uint8Array> {
  locked = false;
  readonly #stream: Readable;

  constructor(stream: Readable) {
    this.#stream = stream;
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    this.locked = true;
    return this.#stream[Symbol.asyncIterator]();
  }

  getReader() {
    const chunks = this[Symbol.asyncIterator]();
    const stream = this.#stream;
    return {
      read: async (): Promise<{ done: boolean; value: Uint8Array | undefined }> => {
        const next = await chunks.next();
        return next.done ? { done: true, value: undefined } : { done: false, value: next.value };
      },
      releaseLock: () => {
        this.locked = false;
      },
      cancel: async (): Promise<void> => {
        stream.destroy();
      },
      closed: new Promise<void>((resolve) => stream.once("close", () => resolve())),
    };
  }

  cancel(): Promise<void> {
    this.#stream.destroy();
    return Promise.resolve();
  }
}

interface ResponseInit {
  status?: number;
  statusText?: string;
  headers?: HeadersInit | Headers | null;
}

/** The part of WHATWG `Response` the SDKs use: status, headers, the body as a stream or read whole once. */
export class Response {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
  readonly ok: boolean;
  readonly type = "basic";
  url = "";
  redirected = false;
  readonly body: Body | null = null;
  #used = false;
  readonly #bytes: Uint8Array | undefined;

  constructor(body?: string | Uint8Array | ArrayBuffer | Readable | null, init: ResponseInit = {}) {
    this.status = init.status ?? 200;
    this.statusText = init.statusText ?? "";
    this.headers = init.headers instanceof Headers ? init.headers : new Headers(init.headers);
    this.ok = this.status >= 200 && this.status < 300;
    if (body === undefined || body === null) {
      // No body.
    } else if (typeof body === "string" || body instanceof Uint8Array || body instanceof ArrayBuffer) {
      this.#bytes = typeof body === "string" ? Buffer.from(body) : new Uint8Array(body);
      if (typeof body === "string" && !this.headers.has("content-type"))
        this.headers.set("content-type", "text/plain;charset=UTF-8");
    } else if (typeof (body as Readable).pipe === "function") {
      this.body = new Body(body);
    } else {
      // A web stream, a Blob, a form: Node's own Response (undici) takes it.
      // biome-ignore lint/correctness/noConstructorReturn: the response the caller asked for, made by the platform
      return new globalThis.Response(body as never, init as never) as unknown as Response;
    }
  }

  get bodyUsed(): boolean {
    return this.#used;
  }

  async bytes(): Promise<Uint8Array> {
    if (this.#used || this.body?.locked) throw new TypeError("Response: the body has already been read");
    this.#used = true;
    if (this.#bytes !== undefined) return this.#bytes;
    if (this.body === null) return new Uint8Array(0);
    const parts: Uint8Array[] = [];
    for await (const part of this.body) parts.push(part);
    return Buffer.concat(parts);
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }
  async text(): Promise<string> {
    const text = Buffer.from(await this.bytes()).toString("utf8");
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }
  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }
  async blob(): Promise<Blob> {
    return new Blob([await this.bytes()], { type: this.headers.get("content-type") ?? "" });
  }
}

/**
 * One of Node's lazily loaded classes, for `instanceof` tests and `new`.
 * Nothing can be an instance of it before Node has loaded the module that
 * defines it, so the test answers false without loading it; `new` (and
 * `from`) make Node's own.
 */
function platformClass(name: "FormData" | "ReadableStream", module: string) {
  const real = () => (globalThis as unknown as Record<string, new (...args: unknown[]) => object>)[name]!;
  const { moduleLoadList } = process as unknown as { moduleLoadList: readonly string[] };
  // A function, not an arrow: `new` must be able to call it.
  function stand(...args: unknown[]) {
    return new (real())(...args);
  }
  Object.defineProperty(stand, "name", { value: name });
  Object.defineProperty(stand, Symbol.hasInstance, {
    value: (value: unknown): boolean =>
      typeof value === "object" &&
      value !== null &&
      moduleLoadList.includes(module) &&
      value instanceof real(),
  });
  Object.defineProperty(stand, "from", {
    value: (...args: unknown[]) => (real() as unknown as { from(...a: unknown[]): object }).from(...args),
  });
  return stand;
}

/** Node's `FormData` is undici's: the SDKs test every request body against it. */
export const FormData = platformClass("FormData", "NativeModule internal/deps/undici/undici");
/** The Stainless SDKs test every request body against it (loading Node's web streams, some 3 ms). */
export const ReadableStream = platformClass(
  "ReadableStream",
  "NativeModule internal/webstreams/readablestream",
);

interface RequestInit {
  method?: string;
  headers?: HeadersInit | Headers | null;
  body?: unknown;
  signal?: AbortSignal | null;
  redirect?: "follow" | "manual" | "error";
  [option: string]: unknown;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;
// Dropped when a redirect leaves the origin: the credentials the providers use, and fetch's own list.
const CREDENTIALS = ["authorization", "proxy-authorization", "cookie", "x-api-key", "x-goog-api-key"];
const BODY_HEADERS = [
  "content-type",
  "content-length",
  "content-encoding",
  "content-language",
  "content-location",
];

/** `fetch` over `node:http(s)`; see the top of this file for what it covers. */
export async function fetch(
  input: string | URL | { url: string },
  init: RequestInit = {},
): Promise<Response> {
  const body = requestBody(init.body);
  const url =
    typeof input === "string" ? new URL(input) : input instanceof URL ? new URL(input.href) : undefined;
  if (url === undefined || body === undefined || (url.protocol !== "http:" && url.protocol !== "https:"))
    return globalThis.fetch(input as string, init as globalThis.RequestInit) as unknown as Response;
  const signal = init.signal ?? undefined;
  signal?.throwIfAborted();
  const headers = new Headers(init.headers ?? undefined);
  if (!headers.has("accept")) headers.set("accept", "*/*");
  if (!headers.has("accept-encoding")) headers.set("accept-encoding", "gzip, deflate, br");
  if (!headers.has("user-agent")) headers.set("user-agent", "node");
  if (typeof init.body === "string" && !headers.has("content-type"))
    headers.set("content-type", "text/plain;charset=UTF-8");
  let method = (init.method ?? "GET").toUpperCase();
  let payload = body;
  let target = url;
  for (let redirects = 0; ; redirects++) {
    const response = await send(target, method, headers, payload, signal);
    const location = response.headers.location;
    if (!REDIRECTS.has(response.statusCode ?? 0) || location === undefined || init.redirect === "manual")
      return toResponse(response, target, method, redirects > 0, signal);
    response.on("error", ignore).resume();
    if (init.redirect === "error")
      throw new TypeError("fetch failed", { cause: new Error("unexpected redirect") });
    if (redirects === MAX_REDIRECTS)
      throw new TypeError("fetch failed", { cause: new Error("redirect count exceeded") });
    const next = new URL(location, target);
    if (next.protocol !== "http:" && next.protocol !== "https:")
      throw new TypeError("fetch failed", { cause: new Error(`redirect to ${next.protocol} URL`) });
    if (next.origin !== target.origin) for (const name of CREDENTIALS) headers.delete(name);
    const status = response.statusCode;
    // As fetch does: a 303 (other than to HEAD), and a 301 or 302 of a POST, continue as a GET without body.
    if (
      (status === 303 && method !== "GET" && method !== "HEAD") ||
      ((status === 301 || status === 302) && method === "POST")
    ) {
      method = "GET";
      payload = null;
      for (const name of BODY_HEADERS) headers.delete(name);
    }
    target = next;
  }
}

/** The request body as bytes, null for none, or undefined when it is a kind left to Node's fetch. */
function requestBody(body: unknown): Uint8Array | null | undefined {
  if (body === undefined || body === null) return null;
  if (typeof body === "string") return Buffer.from(body);
  if (body instanceof Uint8Array) return body;
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return undefined;
}

async function send(
  url: URL,
  method: string,
  headers: Headers,
  body: Uint8Array | null,
  signal: AbortSignal | undefined,
): Promise<IncomingMessage> {
  // Taken as CommonJS: an ES module face of node:http reads its every export, and its `WebSocket` loads undici.
  const { request } =
    url.protocol === "https:"
      ? process.getBuiltinModule("node:https")
      : process.getBuiltinModule("node:http");
  const outgoing: Record<string, string> = Object.fromEntries(headers);
  if (body !== null) outgoing["content-length"] = String(body.byteLength);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: outgoing });
    const onAbort = () => req.destroy(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    req.once("response", (response) => {
      signal?.removeEventListener("abort", onAbort);
      resolve(response);
    });
    // `on`: an error after the answer came must not go unhandled (the promise is settled by then).
    req.on("error", (error) => {
      signal?.removeEventListener("abort", onAbort);
      reject(signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error }));
    });
    req.end(body ?? undefined);
  });
}

async function toResponse(
  response: IncomingMessage,
  url: URL,
  method: string,
  redirected: boolean,
  signal: AbortSignal | undefined,
): Promise<Response> {
  const headers = new Headers();
  const raw = response.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  const status = response.statusCode ?? 0;
  const empty = method === "HEAD" || status === 204 || status === 304;
  const coding = (headers.get("content-encoding") ?? "").trim().toLowerCase();
  const stream = empty || coding === "" || coding === "identity" ? response : decoded(response, coding);
  // A torn connection ends the body with an error, as fetch's does; so does an abort, with the signal's reason.
  // The reader sees it through its iterator; a body nobody reads must not raise it on the process.
  stream.on("error", ignore);
  if (stream !== response)
    response.on("error", (error) => stream.destroy(new TypeError("terminated", { cause: error })));
  if (signal) {
    const onAbort = () => {
      stream.destroy(signal.reason);
      if (stream !== response) response.destroy();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    stream.once("close", () => signal.removeEventListener("abort", onAbort));
  }
  const result = new Response(empty ? null : stream, {
    status,
    statusText: response.statusMessage ?? "",
    headers,
  });
  if (empty) response.resume();
  result.url = url.href;
  result.redirected = redirected;
  return result;
}

function ignore(): void {}

/** The body decoded by its content-encoding (one coding; an unknown one is passed through, as fetch does). */
function decoded(response: IncomingMessage, coding: string): Readable {
  const zlib = process.getBuiltinModule("node:zlib");
  const decoder =
    coding === "gzip" || coding === "x-gzip"
      ? zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH })
      : coding === "deflate"
        ? zlib.createUnzip({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH })
        : coding === "br"
          ? zlib.createBrotliDecompress()
          : undefined;
  if (decoder === undefined) return response;
  return response.pipe(decoder);
}
