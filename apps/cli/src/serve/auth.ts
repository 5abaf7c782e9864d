import type { IncomingHttpHeaders } from "node:http";
import { HttpError } from "./http-error.ts";

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/** Whether `host` (a name or an IP address, IPv6 without brackets) only reaches this machine. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The host name of a `Host` header value or URL authority (`[::1]:8080` → `::1`); undefined when it is malformed. */
function hostName(authority: string): string | undefined {
  const match = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/i.exec(authority);
  if (!match) return undefined;
  return (match[1] ?? match[2] ?? "").toLowerCase();
}

/**
 * Without a token, the server trusts whoever can reach its loopback address,
 * so it must refuse what a web page can make a browser send there: a `Host`
 * that is not a loopback name (DNS rebinding: attacker.example resolving to
 * 127.0.0.1) and an `Origin` that is not this server (a cross-site POST,
 * which a `text/plain` body sends without asking). `port` is the port the
 * request arrived on.
 */
export function checkLoopbackRequest(headers: IncomingHttpHeaders, port: number | undefined): void {
  const host = headers.host;
  const name = host === undefined ? undefined : hostName(host);
  if (name === undefined || !isLoopback(name)) {
    throw new HttpError(
      403,
      "forbidden_host",
      `refused: the Host header ${host === undefined ? "is missing" : JSON.stringify(host.slice(0, 100))}; ` +
        "without YOI_SERVE_TOKEN this server answers only requests addressed to localhost, 127.0.0.1 or [::1] " +
        "(another name may be a DNS-rebinding web page); set YOI_SERVE_TOKEN to serve other names",
    );
  }
  const origin = headers.origin;
  if (origin === undefined) return;
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  const originName = url === undefined ? undefined : hostName(url.host);
  const originPort =
    url === undefined ? undefined : Number(url.port || (url.protocol === "https:" ? 443 : 80));
  if (
    url?.protocol !== "http:" ||
    originName === undefined ||
    !isLoopback(originName) ||
    originPort !== port
  ) {
    throw new HttpError(
      403,
      "forbidden_origin",
      `refused: the request comes from the web page ${JSON.stringify(origin.slice(0, 100))}, not from this server ` +
        `(http://localhost:${port ?? "<port>"}); without YOI_SERVE_TOKEN, requests that browsers send for other sites are refused ` +
        "(cross-site request forgery); clients that are not browsers send no Origin header",
    );
  }
}
