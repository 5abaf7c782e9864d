/**
 * The HTTP server of `yoi serve` on node:http: a handful of routes need no
 * framework. Every answer is JSON except a run's event stream.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { errorMessage } from "@yoi/manifest/errors";
import { CreateSessionBody, PermissionAnswerBody, RunBody } from "./api-schemas.ts";
import { checkBearer } from "./auth.ts";
import { HttpError } from "./http-error.ts";
import { readJson, sendError, sendJson } from "./http-io.ts";
import { openApiDocument } from "./openapi.ts";
import type { SessionHost } from "./session-host.ts";

export interface ServeServerOptions {
  host: SessionHost;
  /** Required bearer token; undefined lets every request in (loopback only, checked by the caller). */
  token: string | undefined;
  version: string;
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
    checkBearer(req, options.token);
    const params = (route.pattern.exec(url.pathname) ?? []).slice(1).map((p) => decodeURIComponent(p));
    const id = params[0] as string;
    const host = options.host;
    switch (route.name) {
      case "create":
        sendJson(res, 201, await host.create(await readJson(req, CreateSessionBody, { optional: true })));
        return;
      case "list": {
        const raw = url.searchParams.get("limit");
        const limit = raw === null ? undefined : Number(raw);
        if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
          throw new HttpError(
            400,
            "invalid_query",
            `limit must be a positive integer; got ${JSON.stringify(raw)}`,
          );
        }
        sendJson(res, 200, { sessions: (await host.list(limit)).map(({ path: _where, ...s }) => s) });
        return;
      }
      case "view":
        sendJson(res, 200, await host.view(id));
        return;
      case "run": {
        const body = await readJson(req, RunBody);
        await host.run(id, body.prompt, req, res);
        return;
      }
      case "cancel":
        await host.cancel(id);
        sendJson(res, 202, { status: "cancelling" });
        return;
      case "permission": {
        const body = await readJson(req, PermissionAnswerBody);
        await host.answer(id, params[1] as string, body.decision);
        sendJson(res, 200, { status: "answered" });
        return;
      }
    }
  };

  const server = createServer((req, res) => {
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
  });
  server.requestTimeout = 0; // runs stream for as long as they take
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
