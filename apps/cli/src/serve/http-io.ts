/** Small pieces of HTTP handling the routes share. */
import type { ServerResponse } from "node:http";
import { HttpError } from "./http-error.ts";

/** The headers of every event stream (runs, a session's events): never cached or buffered by a proxy. */
export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-store",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

/** Largest accepted request body. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Decodes a percent-encoded path segment; 400 for encodings that are not UTF-8 (`%ff`, `%C0%AE`). */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(
      400,
      "invalid_path",
      `the path segment ${JSON.stringify(segment.slice(0, 100))} has a percent-encoding that is not UTF-8; encode ids with encodeURIComponent`,
    );
  }
}

/**
 * A signal that aborts when the client goes away before the answer is
 * complete: its connection closed before or while the answer was sent.
 * Taken before any slow work, so that a client gone early is seen too.
 */
export function clientGone(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  const abort = () => {
    if (!res.writableFinished) controller.abort(new Error("the client disconnected"));
  };
  if (res.destroyed) abort();
  else res.once("close", abort);
  return controller.signal;
}
