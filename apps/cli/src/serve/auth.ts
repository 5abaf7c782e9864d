import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { HttpError } from "./http-error.ts";

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/** Whether `host` only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * Checks `Authorization: Bearer <token>` against the server's token in
 * constant time; a server without a token (bound to loopback) lets every
 * request through.
 */
export function checkBearer(req: IncomingMessage, token: string | undefined): void {
  if (token === undefined) return;
  const header = req.headers.authorization ?? "";
  const match = /^Bearer\s+(.+)$/i.exec(header);
  if (!match || !timingSafeEqual(digest(match[1] as string), digest(token))) {
    throw new HttpError(
      401,
      "unauthorized",
      match ? "wrong bearer token" : "send Authorization: Bearer <YOI_SERVE_TOKEN>",
    );
  }
}
