/**
 * The HTTP server of `yoi serve`: hono routes (declared with their zod
 * schemas in routes.ts) on @hono/node-server. Every answer is JSON except a
 * run's event stream, which the session host writes to the node response.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener, type HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { OpenAPIHono } from "@hono/zod-openapi";
import { errorMessage } from "@yoi/manifest/errors";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import type { ZodError } from "zod";
import { checkLoopbackRequest } from "./auth.ts";
import { HttpError } from "./http-error.ts";
import { decodeSegment, MAX_BODY_BYTES } from "./http-io.ts";
import { openApiInfo, routes } from "./routes.ts";
import type { SessionHost } from "./session-host.ts";
import type { Principal, ServeUsers } from "./users.ts";

export interface ServeServerOptions {
  host: SessionHost;
  /**
   * Who may call: the administrator's token and the token file's users.
   * Without either the server listens on loopback only (checked by the
   * caller) and answers only requests addressed to a loopback name from no
   * other site's page.
   */
  users: ServeUsers;
  version: string;
  /**
   * How long a client may take to send a whole request (headers and body), ms;
   * the headers alone get at most 10 s of it. Default 30 000.
   */
  requestTimeoutMs?: number;
  /** Told about requests that failed with a 5xx (the line never holds secrets). */
  onError?: (line: string) => void;
}

export interface ServeServer {
  server: Server;
  /** `http://host:port`. */
  url: string;
  /**
   * Stops accepting connections and new runs, lets running runs finish for
   * up to `graceMs` (default 0; `stopWaiting` ends the wait early), cancels
   * the rest and closes.
   */
  close(options?: {
    graceMs?: number;
    stopWaiting?: AbortSignal;
    onWaiting?: (runs: number) => void;
  }): Promise<void>;
}

type Env = { Bindings: HttpBindings; Variables: { user: Principal } };

/** The first zod issue as an HttpError of the part of the request it is about. */
function invalid(target: string, error: ZodError, c: Context<Env>): HttpError {
  const first = error.issues[0];
  const key = first && first.path.length > 0 ? first.path.join(".") : undefined;
  if (target === "query") {
    const name = key ?? "query";
    const raw = new URL(c.req.url).searchParams.get(name);
    return new HttpError(
      400,
      "invalid_query",
      `${name}: ${first?.message ?? "invalid"}${raw !== null ? `; got ${JSON.stringify(raw.slice(0, 100))}` : ""}`,
      { issues: error.issues },
    );
  }
  if (target === "param")
    return new HttpError(400, "invalid_path", `${key ?? "path"}: ${first?.message ?? "invalid"}`);
  return new HttpError(400, "invalid_body", `${key ? `${key}: ` : ""}${first?.message ?? "invalid body"}`, {
    issues: error.issues,
  });
}

const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;

/**
 * A POST body is read as JSON whatever its declared type (`curl -d` sends a
 * form type; a body that is not JSON is refused anyway), and an empty one
 * as `{}`: the request as the validators should see it. It is made a
 * standard Request, which hono's body limit wraps (the node adapter's own
 * request class, left out of the globals, cannot be).
 */
function asJsonRequest(request: Request): Request {
  if (request.method !== "POST") return request;
  const type = request.headers.get("content-type");
  const empty = request.headers.get("content-length") === "0";
  const headers = new Headers(request.headers);
  if (empty || type === null || !JSON_TYPE.test(type)) {
    headers.set("content-type", "application/json");
    headers.delete("content-length");
  }
  return new Request(request.url, {
    method: "POST",
    headers,
    body: empty ? "{}" : request.body,
    signal: request.signal,
    duplex: "half",
  } as RequestInit);
}

/** The JSON answer of a failed request: `{ error: { code, message, ... } }`. */
function errorResponse(failure: HttpError, headers: Record<string, string> = {}): Response {
  return new Response(
    JSON.stringify({ error: { code: failure.code, message: failure.message, ...failure.extra } }),
    {
      status: failure.status,
      headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers },
    },
  );
}

/** The hono app of the API, without a listening server (for `startServeServer` and tests). */
export function createServeApp(options: ServeServerOptions): OpenAPIHono<Env> {
  const host = options.host;
  const app = new OpenAPIHono<Env>({
    defaultHook: (result, c) => {
      if (!result.success) throw invalid(result.target, result.error, c as Context<Env>);
    },
  });

  app.use("*", async (c, next) => {
    const pathname = new URL(c.req.url).pathname;
    if (pathname !== "/v1/openapi.json") c.set("user", options.users.authenticate(c.env.incoming.headers));
    // hono leaves a segment it cannot decode as it is; the API refuses it instead
    for (const segment of pathname.split("/")) decodeSegment(segment);
    await next();
  });
  // Only POST routes read a body; others are never given one to wrap.
  app.on(
    "POST",
    "*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new HttpError(413, "body_too_large", `the body is larger than ${MAX_BODY_BYTES} bytes`);
      },
    }),
  );

  app.openapi(routes.create, async (c) => {
    return c.json(await host.create(c.get("user"), c.req.valid("json") ?? {}), 201);
  });
  app.openapi(routes.list, async (c) => {
    const { limit } = c.req.valid("query");
    return c.json(
      { sessions: (await host.list(c.get("user"), limit)).map(({ path: _where, ...s }) => s) },
      200,
    );
  });
  app.openapi(routes.view, async (c) => c.json(await host.view(c.get("user"), c.req.valid("param").id), 200));
  // The stream is written by the session host straight to the node response.
  app.openapi(routes.run, (async (c: Context<Env>) => {
    const { id } = c.req.param() as { id: string };
    const body = (c.req as unknown as { valid(target: "json"): { prompt: string; queue?: boolean } }).valid(
      "json",
    );
    await host.run(c.get("user"), id, body.prompt, c.env.outgoing, body.queue === true);
    return RESPONSE_ALREADY_SENT;
  }) as never);
  // The stream stays open after the handler returns; the session host writes it.
  app.openapi(routes.events, (async (c: Context<Env>) => {
    const { id } = c.req.param() as { id: string };
    await host.events(c.get("user"), id, c.req.header("last-event-id"), c.env.outgoing);
    return RESPONSE_ALREADY_SENT;
  }) as never);
  app.openapi(routes.cancel, async (c) => {
    await host.cancel(c.get("user"), c.req.valid("param").id);
    return c.json({ status: "cancelling" as const }, 202);
  });
  app.openapi(routes.permission, async (c) => {
    const { id, requestId } = c.req.valid("param");
    const how = await host.answer(c.get("user"), id, requestId, c.req.valid("json"));
    return how === "forwarded" ? c.json({ status: how }, 202) : c.json({ status: how }, 200);
  });
  app.openapi(routes.members, async (c) => {
    const member = c.req.valid("json").user;
    if (!options.users.has(member)) {
      throw new HttpError(
        400,
        "invalid_body",
        `user: no user ${JSON.stringify(member.slice(0, 70))} in the server's token file`,
      );
    }
    return c.json(await host.grant(c.get("user"), c.req.valid("param").id, member), 200);
  });
  app.doc31("/v1/openapi.json", {
    ...openApiInfo(options.version),
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "The server's YOI_SERVE_TOKEN, or a user's token from --token-file.",
  });

  const paths = Object.values(routes).map((r) => ({
    method: r.method.toUpperCase(),
    pattern: new RegExp(`^${r.path.replace(/\{[^}]+\}/g, "[^/]+")}$`),
  }));
  paths.push({ method: "GET", pattern: /^\/v1\/openapi\.json$/ });
  app.notFound((c) => {
    const pathname = new URL(c.req.url).pathname;
    const allowed = paths.filter((p) => p.pattern.test(pathname)).map((p) => p.method);
    if (allowed.length > 0) {
      return errorResponse(
        new HttpError(405, "method_not_allowed", `${c.req.method} is not allowed on ${pathname}`),
        { allow: [...new Set(allowed)].join(", ") },
      );
    }
    return errorResponse(new HttpError(404, "not_found", `no route ${pathname} (see /v1/openapi.json)`));
  });
  app.onError((error, c) => {
    const failure = HttpError.isInstance(error)
      ? error
      : error instanceof HTTPException && error.status === 400
        ? new HttpError(400, "invalid_body", "the body is not JSON; send a JSON object (`{}` for none)")
        : new HttpError(500, "internal", errorMessage(error).split("\n")[0] as string);
    if (failure.status >= 500) {
      const detail = failure.cause === undefined ? "" : ` (${errorMessage(failure.cause)})`;
      options.onError?.(`${c.req.method} ${new URL(c.req.url).pathname}: ${failure.message}${detail}`);
    }
    const res = c.env.outgoing;
    if (res.headersSent) {
      res.end();
      return RESPONSE_ALREADY_SENT;
    }
    return errorResponse(failure);
  });
  return app;
}

export async function startServeServer(
  options: ServeServerOptions,
  listen: { port: number; hostname: string },
): Promise<ServeServer> {
  const app = createServeApp(options);
  // hono's own Request class stays out of the globals the model SDKs use
  const listener = getRequestListener((request, env) => app.fetch(asJsonRequest(request), env), {
    overrideGlobalObjects: false,
  });
  const requestTimeout = options.requestTimeoutMs ?? 30_000;
  const server = createServer(
    {
      // A slow client cannot hold a connection: node answers 408 and closes it
      // when the request (not the answer: runs stream as long as they take)
      // has not fully arrived in time.
      requestTimeout,
      headersTimeout: Math.min(10_000, requestTimeout),
      connectionsCheckingInterval: Math.min(1000, requestTimeout),
    },
    (req, res) => {
      // Checked on the raw request, before anything parses the Host header.
      if (!options.users.required) {
        try {
          checkLoopbackRequest(req.headers, req.socket.localPort);
        } catch (error) {
          req.resume();
          const failure = error as HttpError;
          const text = JSON.stringify({ error: { code: failure.code, message: failure.message } });
          res.writeHead(failure.status, {
            "content-type": "application/json; charset=utf-8",
            "cache-control": "no-store",
          });
          res.end(text);
          return;
        }
      }
      void listener(req, res);
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.hostname, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${shownHost}:${address.port}`,
    async close(how = {}) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const running = options.host.running;
      if (running > 0 && (how.graceMs ?? 0) > 0) how.onWaiting?.(running);
      await options.host.drain(how.graceMs ?? 0, how.stopWaiting);
      await options.host.shutdown();
      server.closeIdleConnections();
      await closed;
    },
  };
}
