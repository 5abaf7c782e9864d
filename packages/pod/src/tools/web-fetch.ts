/**
 * `web_fetch`: one http(s) page, as Markdown. Outside the pod's filesystem
 * scope but never local: only http and https are fetched (`file:`,
 * `data:` and every other scheme are refused), redirects are followed on
 * the same host only (a new host needs its own call, and so its own
 * permission), and the time, the bytes read and the redirects are capped.
 * Link-local and cloud metadata addresses, where a machine's instance
 * credentials are served, are never fetched, whatever a rule allows: a
 * name is checked before anyone is asked, and the address a connection is
 * made to is checked again as it is made (node:http with a checking
 * `lookup`; Node's `fetch` takes no lookup), so a name that answers
 * differently the second time (DNS rebinding) reaches no such address.
 */
import type { IncomingMessage } from "node:http";
import type { BlockList, LookupFunction } from "node:net";
import { defineTool, inlineOutput, storedText, ToolError } from "@yoi/llm-worker";
import { TOOL_OUTPUT_MAX_BYTES } from "@yoi/manifest";
import { rootCauseMessage } from "@yoi/manifest/errors";
import * as z from "zod";
import { htmlTitle, htmlToMarkdown } from "./html-to-markdown.ts";

export const WEB_FETCH_TOOL_NAME = "web_fetch";

export interface WebFetchOptions {
  /** Limit of the whole fetch (connect, redirects, body). Default 30 s. */
  timeoutMs?: number;
  /** Most bytes of a body read; more is cut with a note. Default 5 MiB. */
  maxBytes?: number;
  /**
   * Most bytes of HTML converted to Markdown. Conversion runs on the main
   * thread (about 1 s per MiB on a busy machine), so a huge page is cut
   * here with a note. Default 1 MiB.
   */
  maxHtmlBytes?: number;
  /** Same-host redirects followed. Default 5. */
  maxRedirects?: number;
  /** Pages whose Markdown is larger than this go to the blob store (a summary in context). Default `TOOL_OUTPUT_MAX_BYTES`. */
  inlineMaxBytes?: number;
  /** `User-Agent` sent. */
  userAgent?: string;
  /** How a host name is resolved (every answer is checked before a connection is made). Default: `dns.lookup`. */
  lookup?: LookupFunction;
}

const DEFAULTS = {
  timeoutMs: 30_000,
  maxBytes: 5 * 1024 * 1024,
  maxHtmlBytes: 1024 * 1024,
  maxRedirects: 5,
  inlineMaxBytes: TOOL_OUTPUT_MAX_BYTES,
  userAgent: "yoi-web-fetch/1 (+https://github.com/yoi)",
};

/** The arguments `web_fetch` takes . */
export const webFetchInput = z.object({
  url: z.string().min(1, "url must not be empty").describe("An absolute http:// or https:// URL."),
  prompt: z
    .string()
    .optional()
    .describe(
      "What you want from the page; for a large page, lines that mention its words are quoted first.",
    ),
});

/** The host a web_fetch call would reach (what permission rules match), or undefined for a URL it would refuse. */
export function webFetchHost(url: unknown): string | undefined {
  if (typeof url !== "string") return undefined;
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.hostname : undefined;
  } catch {
    return undefined;
  }
}

function checkUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ToolError(`"${raw}" is not an absolute URL; give one like https://example.com/page.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ToolError(
      `web_fetch only fetches http:// and https:// URLs; ${url.protocol} is refused (use read_file for project files).`,
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new ToolError("URLs with a user name or password are refused; never put credentials in a URL.");
  }
  return url;
}

/**
 * Where cloud instances serve their credentials and identity to anything
 * on the machine that asks: the link-local ranges (AWS, GCP, Azure and
 * most others at 169.254.169.254), AWS's IPv6 endpoint and Alibaba's.
 * Made on the first fetch: `node:net` loads only then.
 */
let metadataAddresses: BlockList | undefined;

/** The first of `addresses` that is a metadata address, if any. */
async function metadataAddress(addresses: readonly string[]): Promise<string | undefined> {
  const { BlockList, isIP } = await import("node:net");
  if (metadataAddresses === undefined) {
    metadataAddresses = new BlockList();
    metadataAddresses.addSubnet("169.254.0.0", 16, "ipv4");
    metadataAddresses.addSubnet("fe80::", 10, "ipv6");
    metadataAddresses.addAddress("fd00:ec2::254", "ipv6");
    metadataAddresses.addAddress("100.100.100.200", "ipv4");
  }
  const blocked = metadataAddresses;
  return addresses.find((a) => isIP(a) !== 0 && blocked.check(a, isIP(a) === 6 ? "ipv6" : "ipv4"));
}

function metadataRefusal(host: string, address: string): ToolError {
  return new ToolError(
    `web_fetch does not fetch ${host}${address === host ? "" : ` (${address})`}: link-local and cloud metadata addresses serve the machine's credentials, and are never fetched.`,
  );
}

/** A host name's addresses (none when it is not found: the fetch then says so). */
function resolveAll(lookup: LookupFunction, host: string): Promise<string[]> {
  return new Promise((resolve) =>
    lookup(host, { all: true }, (error, found) =>
      resolve(error ? [] : Array.isArray(found) ? found.map((a) => a.address) : [found]),
    ),
  );
}

/** Refuses, before anyone is asked, a URL whose host is or resolves to a metadata address. */
async function refuseMetadataHost(url: URL, lookup: LookupFunction): Promise<void> {
  const { isIP } = await import("node:net");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const hit = await metadataAddress(isIP(host) !== 0 ? [host] : await resolveAll(lookup, host));
  if (hit !== undefined) throw metadataRefusal(url.hostname, hit);
}

/**
 * `lookup` for the connection itself: the addresses it would connect to,
 * each checked, so what was checked is what is reached.
 */
function checkedLookup(lookup: LookupFunction): LookupFunction {
  return (host, options, callback) => {
    lookup(host, { ...options, all: true }, (error, answer, answerFamily) => {
      if (error) return callback(error, []);
      // A resolver that answers one address though all were asked for is checked all the same.
      const found = Array.isArray(answer) ? answer : [{ address: answer, family: answerFamily ?? 4 }];
      metadataAddress(found.map((a) => a.address)).then(
        (hit) => {
          if (hit !== undefined) return callback(metadataRefusal(host, hit), []);
          if (options.all) return callback(null, found);
          const first = found[0];
          if (first === undefined)
            return callback(Object.assign(new Error(`${host} has no address`), { code: "ENOTFOUND" }), []);
          callback(null, first.address, first.family);
        },
        (cause: unknown) => callback(cause as NodeJS.ErrnoException, []),
      );
    });
  };
}

/** `dns.lookup`, loaded on the first fetch. */
async function dnsLookup(): Promise<LookupFunction> {
  return (await import("node:dns")).lookup as LookupFunction;
}

/** One GET of `url` over node:http(s), connecting only where `lookup` allows; the response (body unread). */
async function get(
  url: URL,
  headers: Record<string, string>,
  signal: AbortSignal,
  lookup: LookupFunction,
): Promise<IncomingMessage> {
  // Taken as Node's own module: `import("node:http")` builds an ES module face that reads every export,
  // `WebSocket` among them, which loads undici (some 40 ms) for a request that does not use it.
  const { request } = process.getBuiltinModule(url.protocol === "https:" ? "node:https" : "node:http");
  return new Promise((resolve, reject) => {
    // Node's global agent: its idle connections hold no process open, and with NODE_USE_ENV_PROXY=1 it
    // goes through HTTP(S)_PROXY as Node's fetch would (the proxy then resolves the name: only the check
    // made before the request applies).
    const req = request(url, { headers, signal, lookup }, resolve);
    req.once("error", reject);
    req.end();
  });
}

const TEXT_TYPES =
  /^(text\/|application\/(json|xml|javascript|ecmascript|x-javascript|[\w.+-]+\+(json|xml)))/i;
const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)/i;

function decoder(contentType: string) {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8");
  } catch {
    return new TextDecoder("utf-8");
  }
}

function networkError(error: unknown, url: URL, timedOut: boolean): ToolError {
  if (timedOut) return new ToolError(`Fetching ${url.href} timed out; the server did not answer in time.`);
  if (error instanceof ToolError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const why =
    code === "ECONNREFUSED"
      ? "the connection was refused"
      : code === "ENOTFOUND" || code === "EAI_AGAIN"
        ? `the host ${url.hostname} was not found`
        : code === "ECONNRESET"
          ? "the connection was reset"
          : rootCauseMessage(error);
  return new ToolError(`Could not fetch ${url.href}: ${why}.`);
}

/** Reads up to `max` bytes of the body, decompressed; says whether there was more. */
async function readCapped(
  response: IncomingMessage,
  max: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const encoding = String(response.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  let body: AsyncIterable<Buffer> = response;
  if (encoding === "gzip" || encoding === "x-gzip" || encoding === "deflate" || encoding === "br") {
    const zlib = await import("node:zlib");
    const { pipeline } = await import("node:stream");
    const decoded =
      encoding === "br"
        ? zlib.createBrotliDecompress()
        : encoding === "deflate"
          ? zlib.createInflate()
          : zlib.createGunzip();
    pipeline(response, decoded, () => {});
    body = decoded;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of body) {
    if (size + chunk.length > max) {
      chunks.push(chunk.subarray(0, max - size));
      size = max;
      truncated = true;
      break;
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  // Not read to its end (cut, or given up on): the connection goes with it.
  if (truncated) response.destroy();
  return { bytes: Buffer.concat(chunks, size), truncated };
}

/** A response whose body is not wanted: dropped with its connection. */
function discard(response: IncomingMessage): void {
  response.destroy();
}

function formatMiB(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${Math.round(bytes / 1024)} KiB`;
}

/** Lines of `text` that mention the prompt's words (4+ letters), at most `max`. */
function matchingLines(text: string, prompt: string, max = 20): string[] {
  const words = [...new Set(prompt.toLowerCase().match(/[\p{L}\p{N}_-]{4,}/gu) ?? [])];
  if (words.length === 0) return [];
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const lower = line.toLowerCase();
    if (line.trim() !== "" && words.some((w) => lower.includes(w))) {
      out.push(line.length > 300 ? `${line.slice(0, 300)}…` : line);
      if (out.length >= max) break;
    }
  }
  return out;
}

/** The `web_fetch` tool. */
export function webFetchTool(options: WebFetchOptions = {}) {
  const o = { ...DEFAULTS, ...options };
  const resolver: LookupFunction =
    o.lookup ?? ((host, opts, callback) => void dnsLookup().then((lookup) => lookup(host, opts, callback)));
  const connectLookup = checkedLookup(resolver);
  return defineTool({
    name: WEB_FETCH_TOOL_NAME,
    description:
      "Fetch one web page (http/https) and return it as Markdown (HTML converted; text and JSON as is). " +
      "Redirects to another host are not followed: you get the new URL to fetch. Large pages come back " +
      "as a summary with a blob id; read the rest with inspect. Needs the user's permission per host.",
    inputSchema: webFetchInput,
    timeoutMs: o.timeoutMs + 5_000,
    storeLargeOutput: false,
    // A URL it would refuse (a scheme, credentials, a metadata address) is refused before anyone is asked.
    async check({ url }) {
      await refuseMetadataHost(checkUrl(url.trim()), resolver);
    },
    async execute({ url: raw, prompt }, ctx) {
      let url = checkUrl(raw.trim());
      const timeout = AbortSignal.timeout(o.timeoutMs);
      const signal = AbortSignal.any([ctx.signal, timeout]);
      const headers = {
        "user-agent": o.userAgent,
        accept: "text/html, text/markdown;q=0.9, text/plain;q=0.8, application/json;q=0.7, */*;q=0.1",
        "accept-encoding": "gzip, deflate, br",
      };
      let response: IncomingMessage;
      for (let redirects = 0; ; redirects++) {
        await refuseMetadataHost(url, resolver);
        try {
          response = await get(url, headers, signal, connectLookup);
        } catch (error) {
          if (ctx.signal.aborted) throw error;
          throw networkError(error, url, timeout.aborted);
        }
        const status = response.statusCode ?? 0;
        const location = response.headers.location;
        if (status < 300 || status >= 400 || location === undefined) break;
        discard(response);
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw new ToolError(`${url.href} redirected to an invalid URL (${location}).`);
        }
        if (next.protocol !== "http:" && next.protocol !== "https:") {
          throw new ToolError(
            `${url.href} redirected to ${next.protocol} URL ${next.href}, which web_fetch refuses.`,
          );
        }
        if (next.hostname !== url.hostname) {
          return (
            `${url.href} redirects to another host: ${next.href}\n` +
            "It was not followed. Call web_fetch with that URL to fetch it (its host needs its own permission)."
          );
        }
        if (redirects >= o.maxRedirects) {
          throw new ToolError(
            `${raw} redirected more than ${o.maxRedirects} times (a redirect loop?); last location: ${next.href}.`,
          );
        }
        url = next;
      }
      const type = response.headers["content-type"] ?? "";
      const status = response.statusCode ?? 0;
      if (status < 200 || status >= 300) {
        discard(response);
        throw new ToolError(
          `${url.href} answered HTTP ${status} ${response.statusMessage ?? ""}.`.replace(" .", "."),
        );
      }
      const mime = type.split(";")[0]?.trim() ?? "";
      if (mime !== "" && !TEXT_TYPES.test(mime) && !HTML_TYPES.test(mime)) {
        discard(response);
        throw new ToolError(
          `${url.href} is ${mime}, not a text page; web_fetch reads HTML, text and JSON only.`,
        );
      }
      let read: { bytes: Uint8Array; truncated: boolean };
      try {
        read = await readCapped(response, o.maxBytes);
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        throw networkError(error, url, timeout.aborted);
      }
      const declared = Number(response.headers["content-length"] ?? Number.NaN);
      const text = decoder(type).decode(read.bytes);
      const isHtml = HTML_TYPES.test(mime) || (mime === "" && /^\s*<(!doctype html|html)/i.test(text));
      const htmlCut = isHtml && read.bytes.length > o.maxHtmlBytes;
      const body = isHtml
        ? await htmlToMarkdown(htmlCut ? decoder(type).decode(read.bytes.subarray(0, o.maxHtmlBytes)) : text)
        : text;
      const title = isHtml ? htmlTitle(text) : undefined;
      const total = Number.isFinite(declared)
        ? formatMiB(declared)
        : read.truncated
          ? "a larger page"
          : formatMiB(read.bytes.length);
      const cut =
        read.truncated || htmlCut
          ? `\n\n[truncated: only the first ${formatMiB(htmlCut ? o.maxHtmlBytes : o.maxBytes)} of ${total} ${htmlCut ? "were converted" : "were read"}]`
          : "";
      const header = `URL: ${url.href}\n${title ? `Title: ${title}\n` : ""}Content-Type: ${mime || "unknown"}\n\n`;
      const full = `${header}${body}${cut}`;
      if (Buffer.byteLength(full) <= o.inlineMaxBytes) return inlineOutput(full);
      const head = body.slice(0, 2000);
      const quoted = prompt ? matchingLines(body, prompt) : [];
      const summary =
        `${header}[${formatMiB(Buffer.byteLength(body))} of Markdown; the whole page is in the blob: read it with inspect]${cut}\n\n` +
        (quoted.length > 0 ? `Lines mentioning your prompt:\n${quoted.join("\n")}\n\n` : "") +
        `Start of the page:\n${head}${body.length > head.length ? "\n…" : ""}`;
      return storedText(full, summary);
    },
  });
}
