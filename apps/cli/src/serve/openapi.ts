/** The OpenAPI 3.1 document of `yoi serve`, built from the zod schemas of api-schemas.ts. */
import * as z from "zod";
import {
  CancelAccepted,
  CreateSessionBody,
  ErrorBody,
  MAX_LIST_LIMIT,
  PermissionAccepted,
  PermissionAnswerBody,
  RunBody,
  SessionCreated,
  SessionList,
  SessionView,
} from "./api-schemas.ts";

const schemas = {
  CreateSessionBody,
  RunBody,
  PermissionAnswerBody,
  SessionCreated,
  SessionList,
  SessionView,
  CancelAccepted,
  PermissionAccepted,
  ErrorBody,
} as const;

type SchemaName = keyof typeof schemas;

const ref = (name: SchemaName) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: SchemaName, description: string) => ({
  description,
  content: { "application/json": { schema: ref(name) } },
});
const errors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [
      String(status),
      json(
        "ErrorBody",
        {
          400: "The body is not valid JSON or does not match the schema (the zod issues are in `error.issues`), a query parameter is out of range, or a path segment is not valid percent-encoded UTF-8.",
          401: "Missing or wrong bearer token (read from the Authorization header only, never a cookie).",
          403: "Without a token: the Host header is not a loopback name or the Origin is another site.",
          404: "No such session.",
          409: "The session is running on another host (`error.holder` names it) or is not running.",
          413: "The body is larger than 1 MiB.",
        }[status] ?? "Error.",
      ),
    ]),
  );
const sessionId = { name: "id", in: "path", required: true, schema: { type: "string" } };

/** Builds the document (cheap; built once per server). */
export function openApiDocument(version: string): Record<string, unknown> {
  const components: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(schemas)) {
    const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
      io: "input",
      unrepresentable: "any",
    }) as Record<string, unknown>;
    components[name] = rest;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "yoi serve",
      version,
      description:
        "Sessions of the yoi agent over HTTP. Runs stream `text/event-stream`; each `data:` line is one `--output stream-json` object, the last one `result`.",
    },
    components: {
      schemas: components,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "The server's YOI_SERVE_TOKEN." },
      },
    },
    security: [{ bearer: [] }],
    paths: {
      "/v1/sessions": {
        post: {
          summary: "Create a session",
          requestBody: {
            required: false,
            content: { "application/json": { schema: ref("CreateSessionBody") } },
          },
          responses: { "201": json("SessionCreated", "Created."), ...errors(400, 401, 403, 413) },
        },
        get: {
          summary: "List sessions, most recently updated first",
          parameters: [
            {
              name: "limit",
              in: "query",
              required: false,
              schema: { type: "integer", minimum: 1, maximum: MAX_LIST_LIMIT },
            },
          ],
          responses: { "200": json("SessionList", "The sessions."), ...errors(400, 401, 403) },
        },
      },
      "/v1/sessions/{id}": {
        get: {
          summary: "A session's history and metadata",
          parameters: [sessionId],
          responses: { "200": json("SessionView", "The session."), ...errors(400, 401, 403, 404) },
        },
      },
      "/v1/sessions/{id}/runs": {
        post: {
          summary: "Run a prompt; streams the run",
          parameters: [sessionId],
          requestBody: { required: true, content: { "application/json": { schema: ref("RunBody") } } },
          responses: {
            "200": {
              description:
                "Server-sent events. Each `data:` line is a stream-json object (`session`, `text`, `tool_start`, `tool_end`, `permission_request`, `usage`, `turn_end`, `alert`, ..., then `result`). An event is sent only after every session record it implies is stored; its `id:` is the seq of the last stored record.",
              content: { "text/event-stream": { schema: { type: "string" } } },
            },
            ...errors(400, 401, 403, 404, 409, 413),
          },
        },
      },
      "/v1/sessions/{id}/cancel": {
        post: {
          summary: "Cancel the session's run",
          parameters: [sessionId],
          responses: { "202": json("CancelAccepted", "Cancelling."), ...errors(400, 401, 403, 404, 409) },
        },
      },
      "/v1/sessions/{id}/permissions/{requestId}": {
        post: {
          summary: "Answer a permission_request event",
          parameters: [
            sessionId,
            { name: "requestId", in: "path", required: true, schema: { type: "string" } },
          ],
          requestBody: {
            required: true,
            content: { "application/json": { schema: ref("PermissionAnswerBody") } },
          },
          responses: { "200": json("PermissionAccepted", "Answered."), ...errors(400, 401, 403, 404, 409) },
        },
      },
      "/v1/openapi.json": {
        get: { summary: "This document", security: [], responses: { "200": { description: "OpenAPI 3.1" } } },
      },
    },
  };
}
