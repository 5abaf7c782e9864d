/**
 * The routes of `yoi serve`, declared once with their zod schemas: the
 * server registers its handlers from them and the OpenAPI document is
 * generated from them (`GET /v1/openapi.json`).
 */
import { createRoute } from "@hono/zod-openapi";
import * as z from "zod";
import {
  CancelAccepted,
  CreateSessionBody,
  ErrorBody,
  ListQuery,
  MemberBody,
  PermissionAccepted,
  PermissionAnswerBody,
  PermissionForwarded,
  RunBody,
  SessionCreated,
  SessionList,
  SessionMembers,
  SessionView,
} from "./api-schemas.ts";

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "The body is not valid JSON or does not match the schema (the zod issues are in `error.issues`), a query parameter is out of range, a path segment is not valid percent-encoded UTF-8, or a Last-Event-ID is not an id of the stream.",
  401: "Missing or wrong bearer token (read from the Authorization header only, never a cookie).",
  403: "Without a token: the Host header is not a loopback name or the Origin is another site. With users: only the session's owner or an administrator may add members.",
  404: "No such session (or one the caller may not see).",
  409: "The session is running on another host (`error.holder` names it), is running here and the run was not sent with `queue: true`, or is not running.",
  413: "The body is larger than 1 MiB.",
};

const json = <S extends z.ZodType>(schema: S, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

const errors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [status, json(ErrorBody, ERROR_DESCRIPTIONS[status] ?? "Error.")]),
  );

const sessionId = z.object({ id: z.string().openapi({ description: "The session's id." }) });

export const routes = {
  create: createRoute({
    method: "post",
    path: "/v1/sessions",
    summary: "Create a session",
    request: { body: { required: false, content: { "application/json": { schema: CreateSessionBody } } } },
    responses: { 201: json(SessionCreated, "Created."), ...errors(400, 401, 403, 413) },
  }),
  list: createRoute({
    method: "get",
    path: "/v1/sessions",
    summary: "List sessions, most recently updated first",
    request: { query: ListQuery },
    responses: { 200: json(SessionList, "The sessions."), ...errors(400, 401, 403) },
  }),
  view: createRoute({
    method: "get",
    path: "/v1/sessions/{id}",
    summary: "A session's history and metadata",
    request: { params: sessionId },
    responses: { 200: json(SessionView, "The session."), ...errors(400, 401, 403, 404) },
  }),
  run: createRoute({
    method: "post",
    path: "/v1/sessions/{id}/runs",
    summary: "Run a prompt; streams the run",
    request: {
      params: sessionId,
      body: { required: true, content: { "application/json": { schema: RunBody } } },
    },
    responses: {
      200: {
        description:
          "Server-sent events. Each `data:` line is a stream-json object (`session`, `text`, `tool_start`, `tool_end`, `permission_request`, `usage`, `turn_end`, `alert`, ..., then `result`). An event is sent only after every session record it implies is stored; its `id:` is the seq of the last stored record.",
        content: { "text/event-stream": { schema: z.string() } },
      },
      ...errors(400, 401, 403, 404, 409, 413),
    },
  }),
  events: createRoute({
    method: "get",
    path: "/v1/sessions/{id}/events",
    summary: "Attach to a session: every run's events, live, on whichever host runs it",
    request: {
      params: sessionId,
      headers: z.object({
        "last-event-id": z.string().optional().openapi({
          description:
            "The `id` of the last event received: the stream resumes with every stored record after it (events that are not stored, such as text deltas and presence, may be missed). Without it the stream starts with what happens next.",
        }),
      }),
    },
    responses: {
      200: {
        description:
          "Server-sent events until the client leaves; `: keep-alive` comment lines keep it open. Each `data:` line is an event of a run, with the shapes a run's own stream sends (`text`, `tool_start`, `permission_request`, `result`, ...), and `prompt` (a message and its author), `presence` (the users attached, on any host), `queued` and `unqueued`. A run on another host is read from the session log: its events come a record at a time, with `from_log: true` and the fields the log keeps. Each `id:` is `<seq>` or `<seq>.<n>`, growing: every stored record up to that seq was told before the event, so `Last-Event-ID` resumes without losing a stored record.",
        content: { "text/event-stream": { schema: z.string() } },
      },
      ...errors(400, 401, 403, 404),
    },
  }),
  cancel: createRoute({
    method: "post",
    path: "/v1/sessions/{id}/cancel",
    summary: "Cancel the session's run",
    request: { params: sessionId },
    responses: { 202: json(CancelAccepted, "Cancelling."), ...errors(400, 401, 403, 404, 409) },
  }),
  permission: createRoute({
    method: "post",
    path: "/v1/sessions/{id}/permissions/{requestId}",
    summary: "Answer a permission_request event",
    request: {
      params: sessionId.extend({ requestId: z.string().openapi({ description: "The event's requestId." }) }),
      body: { required: true, content: { "application/json": { schema: PermissionAnswerBody } } },
    },
    responses: {
      200: json(PermissionAccepted, "Answered."),
      202: json(PermissionForwarded, "Sent to the host that runs the session (PostgreSQL)."),
      ...errors(400, 401, 403, 404, 409),
    },
  }),
  members: createRoute({
    method: "post",
    path: "/v1/sessions/{id}/members",
    summary: "Grant the session to another user of the token file",
    request: {
      params: sessionId,
      body: { required: true, content: { "application/json": { schema: MemberBody } } },
    },
    responses: { 200: json(SessionMembers, "The owner and members now."), ...errors(400, 401, 403, 404) },
  }),
} as const;

/** The document's fixed parts; the paths and schemas come from {@link routes}. */
export function openApiInfo(version: string) {
  return {
    openapi: "3.1.0",
    info: {
      title: "yoi serve",
      version,
      description:
        "Sessions of the yoi agent over HTTP. Runs stream `text/event-stream`; each `data:` line is one `--output stream-json` object, the last one `result`.",
    },
    security: [{ bearer: [] }],
  };
}
