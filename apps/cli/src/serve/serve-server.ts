/**
 * The HTTP server of `yoi serve` on node:http: a handful of routes need no
 * framework. Every answer is JSON except a run's event stream.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { errorMessage } from "@yoi/manifest/errors";
import { CreateSessionBody, ListQuery, PermissionAnswerBody, RunBody } from "./api-schemas.ts";
import { checkBearer, checkLoopbackRequest } from "./auth.ts";
import { HttpError } from "./http-error.ts";
import { decodeSegment, readJson, readQuery, sendError, sendJson } from "./http-io.ts";
import { openApiDocument } from "./openapi.ts";
import type { SessionHost } from "./session-host.ts";

export interface ServeServerOptions {
  host: SessionHost;
  /**
   * Required bearer token. Undefined: the server listens on loopback only
   * (checked by the caller) and answers only requests addressed to a
   * loopback name from no other site's page.
   */
  token: string | undefined;
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
  /** Stops accepting, cancels runs in progress, closes. */
  close(): Promise<void>;
}

const SEGMENT = "([^/]+)";
const ROUTES: { method: string; pattern: RegExp; name: string }[] = [
  { method: "GET", pattern: /^\/v1\/openapi\.json$/, name: "openapi" },
  { method: "POST", pattern: /^\/v1\/sessions$/, name: "create" },
  { method: "GET", pattern: /^\/v1\/sessions$/, name: "list" },
  { method: "GET", pattern: new RegExp(`^/v1/sessions/${SEGMENT}$`), name: "view" },
  { method: "POST", pattern: new RegExp(`^/v1/sessions/${SEGMENT}/runs$`), name: "run" },
  { method: "POST", pattern: new RegExp(`^/v1/sessions/${SEGMENT}/cancel$`), name: "cancel" },
  {
    method: "POST",
    pattern: new RegExp(`^/v1/sessions/${SEGMENT}/permissions/${SEGMENT}$`),
    name: "permission",
  },
];

export async function startServeServer(
  options: ServeServerOptions,
  listen: { port: number; hostname: string },
): Promise<ServeServer> {
  const openapi = JSON.stringify(openApiDocument(options.version));
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (options.token === undefined) checkLoopbackRequest(req.headers, req.socket.localPort);
    const url = new URL(req.url ?? "/", "http://localhost");
    const matches = ROUTES.filter((r) => r.pattern.test(url.pathname));
    if (matches.length === 0)
      throw new HttpError(404, "not_found", `no route ${url.pathname} (see /v1/openapi.json)`);
    const route = matches.find((r) => r.method === req.method);
    if (route === undefined) {
      res.setHeader("allow", matches.map((r) => r.method).join(", "));
      throw new HttpError(405, "method_not_allowed", `${req.method} is not allowed on ${url.pathname}`);
    }
    if (route.name === "openapi") {
      res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
      res.end(openapi);
      return;
    }
    if (options.token !== undefined) checkBearer(req.headers, options.token);
    const params = (route.pattern.exec(url.pathname) ?? []).slice(1).map(decodeSegment);
    const id = params[0] as string;
    const host = options.host;
    switch (route.name) {
      case "create":
        sendJson(res, 201, await host.create(await readJson(req, CreateSessionBody, { optional: true })));
        return;
      case "list": {
        const { limit } = readQuery(url, ListQuery);
        sendJson(res, 200, { sessions: (await host.list(limit)).map(({ path: _where, ...s }) => s) });
        return;
      }
      case "view":
        sendJson(res, 200, await host.view(id));
        return;
      case "run": {
        const body = await readJson(req, RunBody);
        await host.run(id, body.prompt, res);
        return;
      }
      case "cancel":
        await host.cancel(id);
        sendJson(res, 202, { status: "cancelling" });
        return;
      case "permission": {
        const body = await readJson(req, PermissionAnswerBody);
        await host.answer(id, params[1] as string, body);
        sendJson(res, 200, { status: "answered" });
        return;
      }
    }
  };

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
      handle(req, res).catch((error: unknown) => {
        const failure = HttpError.isInstance(error)
          ? error
          : new HttpError(500, "internal", errorMessage(error).split("\n")[0] as string);
        if (failure.status >= 500) options.onError?.(`${req.method} ${req.url}: ${failure.message}`);
        if (res.headersSent) {
          res.end();
          return;
        }
        // drain what the client still sends so it can read the answer
        req.resume();
        sendError(res, failure);
      });
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
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await options.host.shutdown();
      server.closeIdleConnections();
      await closed;
    },
  };
}
