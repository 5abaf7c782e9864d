/**
 * `web_fetch`: one http(s) page, as Markdown. Outside the pod's filesystem
 * scope but never local: only http and https are fetched (`file:`,
 * `data:` and every other scheme are refused), redirects are followed on
 * the same host only (a new host needs its own call, and so its own
 * permission), and the time, the bytes read and the redirects are capped.
 * Link-local and cloud metadata addresses, where a machine's instance
 * credentials are served, are never fetched, whatever a rule allows.
 */
import type { BlockList } from "node:net";
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
 * Made on the first fetch: `node:net` and `node:dns` load only then.
 */
let metadataAddresses: BlockList | undefined;

/**
 * Refuses a URL whose host is, or resolves to, a metadata address. A name
 * is looked up before the fetch, which looks it up again: a server that
 * answers the two lookups differently (DNS rebinding) is not caught here.
 */
async function refuseMetadataHost(url: URL): Promise<void> {
  const { BlockList, isIP } = await import("node:net");
  if (metadataAddresses === undefined) {
    metadataAddresses = new BlockList();
    metadataAddresses.addSubnet("169.254.0.0", 16, "ipv4");
    metadataAddresses.addSubnet("fe80::", 10, "ipv6");
    metadataAddresses.addAddress("fd00:ec2::254", "ipv6");
    metadataAddresses.addAddress("100.100.100.200", "ipv4");
  }
  const blocked = metadataAddresses;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const addresses =
    isIP(host) !== 0
      ? [host]
      : await (await import("node:dns/promises")).lookup(host, { all: true }).then(
          (found) => found.map((a) => a.address),
          () => [], // not found: the fetch says so
        );
  const hit = addresses.find((a) => blocked.check(a, isIP(a) === 6 ? "ipv6" : "ipv4"));
  if (hit !== undefined)
    throw new ToolError(
      `web_fetch does not fetch ${url.hostname}${hit === host ? "" : ` (${hit})`}: link-local and cloud metadata addresses serve the machine's credentials, and are never fetched.`,
    );
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
  const code = (error as { cause?: { code?: string } })?.cause?.code;
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

/** Reads up to `max` bytes; says whether there was more. */
async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  max: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (body === null) return { bytes: new Uint8Array(), truncated: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.length > max) {
      chunks.push(value.subarray(0, max - size));
      size = max;
      truncated = true;
      await reader.cancel().catch(() => {});
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return { bytes, truncated };
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
      await refuseMetadataHost(checkUrl(url.trim()));
    },
    async execute({ url: raw, prompt }, ctx) {
      let url = checkUrl(raw.trim());
      const timeout = AbortSignal.timeout(o.timeoutMs);
      const signal = AbortSignal.any([ctx.signal, timeout]);
      let response: Response;
      for (let redirects = 0; ; redirects++) {
        await refuseMetadataHost(url);
        try {
          response = await fetch(url, {
            redirect: "manual",
            signal,
            headers: {
              "user-agent": o.userAgent,
              accept: "text/html, text/markdown;q=0.9, text/plain;q=0.8, application/json;q=0.7, */*;q=0.1",
            },
          });
        } catch (error) {
          if (ctx.signal.aborted) throw error;
          throw networkError(error, url, timeout.aborted);
        }
        const location = response.headers.get("location");
        if (response.status < 300 || response.status >= 400 || location === null) break;
        await response.body?.cancel().catch(() => {});
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
      const type = response.headers.get("content-type") ?? "";
      if (!response.ok) {
        await response.body?.cancel().catch(() => {});
        throw new ToolError(
          `${url.href} answered HTTP ${response.status} ${response.statusText}.`.replace(" .", "."),
        );
      }
      const mime = type.split(";")[0]?.trim() ?? "";
      if (mime !== "" && !TEXT_TYPES.test(mime) && !HTML_TYPES.test(mime)) {
        await response.body?.cancel().catch(() => {});
        throw new ToolError(
          `${url.href} is ${mime}, not a text page; web_fetch reads HTML, text and JSON only.`,
        );
      }
      let read: { bytes: Uint8Array; truncated: boolean };
      try {
        read = await readCapped(response.body, o.maxBytes);
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        throw networkError(error, url, timeout.aborted);
      }
      const declared = Number(response.headers.get("content-length") ?? Number.NaN);
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
