/** Reading JSON bodies and writing JSON answers on node:http. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type * as z from "zod";
import { HttpError } from "./http-error.ts";

/** Largest accepted request body. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Reads and validates a JSON body. An empty body counts as `{}` when
 * `optional`. 400 for bad JSON or a schema mismatch (with the zod issues),
 * 413 past 1 MiB. The content type is not checked: `curl -d` sends a form
 * type, and the body is JSON or it is refused anyway.
 */
export async function readJson<S extends z.ZodType>(
  req: IncomingMessage,
  schema: S,
  options: { optional?: boolean } = {},
): Promise<z.infer<S>> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES)
        throw new HttpError(413, "body_too_large", `the body is larger than ${MAX_BODY_BYTES} bytes`);
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    if (HttpError.isInstance(error)) throw error;
    // the client left (or the server's request timeout closed the connection)
    throw new HttpError(400, "body_incomplete", "the connection closed before the whole body arrived");
  }
  const text = Buffer.concat(chunks).toString("utf8");
  let value: unknown;
  if (text.trim() === "") {
    if (!options.optional) throw new HttpError(400, "invalid_body", "the body is empty; send a JSON object");
    value = {};
  } else {
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new HttpError(400, "invalid_body", `the body is not JSON: ${(error as Error).message}`);
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first && first.path.length > 0 ? `${first.path.join(".")}: ` : "";
    throw new HttpError(400, "invalid_body", `${where}${first?.message ?? "invalid body"}`, {
      issues: parsed.error.issues,
    });
  }
  return parsed.data;
}

/** Validates the query string with `schema` (each parameter's last value); 400 naming the parameter. */
export function readQuery<S extends z.ZodType>(url: URL, schema: S): z.infer<S> {
  const parsed = schema.safeParse(Object.fromEntries(url.searchParams));
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const name = first && first.path.length > 0 ? String(first.path[0]) : "query";
    const raw = url.searchParams.get(name);
    throw new HttpError(
      400,
      "invalid_query",
      `${name}: ${first?.message ?? "invalid"}${raw !== null ? `; got ${JSON.stringify(raw.slice(0, 100))}` : ""}`,
      { issues: parsed.error.issues },
    );
  }
  return parsed.data;
}

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

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: HttpError): void {
  sendJson(res, error.status, { error: { code: error.code, message: error.message, ...error.extra } });
}
