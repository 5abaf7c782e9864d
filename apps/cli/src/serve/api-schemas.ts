/**
 * The `yoi serve` API's bodies and answers as zod schemas: requests are
 * validated with them (a 400 carries the zod issues) and the OpenAPI
 * document is generated from them (each named schema is a component).
 */
import * as z from "zod";

export const CreateSessionBody = z
  .strictObject({
    cwd: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Project directory, inside the server's root (relative paths resolve against it). Default: the root.",
      ),
    model: z
      .string()
      .regex(/^[^/\s]+\/\S+$/, "a model ref is <provider>/<model>, e.g. anthropic/claude-sonnet-4-5")
      .optional()
      .describe("Model ref `<provider>/<model>`. Default: the server's --model / configured model."),
    baseUrl: z
      .url({ protocol: /^https?$/, error: "baseUrl must be an http(s) URL" })
      .optional()
      .describe(
        "Base URL of the model's API. The server's API keys are never sent to a base URL given here.",
      ),
  })
  .describe("A new session.")
  .openapi("CreateSessionBody");

export const RunBody = z
  .strictObject({
    prompt: z
      .string()
      .trim()
      .min(1, "prompt must not be empty")
      .describe("The user's message; `@path` attaches a file."),
    queue: z
      .boolean()
      .optional()
      .describe(
        "While another run of the session is in progress on this host: `true` waits for it (the stream starts with a `queued` event, runs go in order; the queue is kept in the host's memory), `false` (default) answers 409 `session_busy`.",
      ),
  })
  .openapi("RunBody");

export const PermissionAnswerBody = z
  .strictObject({
    decision: z
      .enum(["allow", "allow_always", "deny"])
      .describe(
        "`allow_always` also allows the same tool and subject for the rest of the run's session on this host.",
      ),
    mode: z
      .enum(["acceptEdits", "default"])
      .optional()
      .describe(
        "For `exit_plan_mode` with `allow`: the mode the approved plan is carried out in. Default `default`.",
      ),
    reason: z
      .string()
      .trim()
      .min(1)
      .max(4000)
      .optional()
      .describe("With `deny`: what the model is told (for `exit_plan_mode`, what to change in the plan)."),
  })
  .openapi("PermissionAnswerBody");

/** Largest `limit` of `GET /v1/sessions`. */
export const MAX_LIST_LIMIT = 1000;

export const ListQuery = z.object({
  limit: z
    .string()
    .regex(/^\d+$/, `must be a whole number from 1 to ${MAX_LIST_LIMIT}`)
    .transform(Number)
    .pipe(
      z
        .number()
        .min(1, `must be a whole number from 1 to ${MAX_LIST_LIMIT}`)
        .max(MAX_LIST_LIMIT, `must be a whole number from 1 to ${MAX_LIST_LIMIT}`),
    )
    .optional()
    .describe("At most this many sessions, the most recently updated first. Default: all."),
});

export const SessionCreated = z.object({ id: z.string() }).openapi("SessionCreated");

export const ErrorBody = z
  .object({
    error: z.object({
      code: z
        .string()
        .describe("`unauthorized`, `invalid_body`, `not_found`, `session_busy`, `not_running`, ..."),
      message: z.string(),
      holder: z.string().optional().describe("For `session_busy`: the host that runs the session."),
      issues: z.array(z.unknown()).optional().describe("For `invalid_body`: the zod issues."),
    }),
  })
  .openapi("ErrorBody");

const Usage = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadTokens: z.number(),
  cacheWriteTokens: z.number(),
  reasoningTokens: z.number(),
});

export const SessionSummaryView = z
  .object({
    id: z.string(),
    title: z.string().optional(),
    createdAt: z.string().optional(),
    updatedAt: z.string(),
    model: z.string().optional(),
    cwd: z.string().optional(),
    sizeBytes: z.number(),
  })
  .openapi("SessionSummaryView");

export const SessionList = z.object({ sessions: z.array(SessionSummaryView) }).openapi("SessionList");

export const SessionView = z
  .object({
    id: z.string(),
    items: z.array(z.unknown()).describe("The history a resumed run continues from (neutral Items)."),
    title: z.string().optional(),
    model: z.string().optional(),
    provider: z.string().optional(),
    cwd: z.string().optional(),
    createdAt: z.string().optional(),
    updatedAt: z.string().optional(),
    turns: z.number(),
    records: z.number(),
    usage: Usage,
    runningOn: z.string().optional().describe("The host whose lease covers the session, while one does."),
    owner: z.string().optional().describe("The user who created it, on a server with users."),
    members: z.array(z.string()).optional().describe("The users it was granted to, on a server with users."),
    warnings: z.array(z.string()),
  })
  .openapi("SessionView");

export const MemberBody = z
  .strictObject({
    user: z
      .string()
      .min(1)
      .describe(
        "A user's name from the server's token file: they may then see, run, cancel and answer this session.",
      ),
  })
  .openapi("MemberBody");

export const SessionMembers = z
  .object({
    owner: z
      .string()
      .optional()
      .describe("The user who created the session (none when made with the administrator's token)."),
    members: z.array(z.string()).describe("The users it was granted to."),
  })
  .openapi("SessionMembers");

export const CancelAccepted = z.object({ status: z.literal("cancelling") }).openapi("CancelAccepted");
export const PermissionAccepted = z.object({ status: z.literal("answered") }).openapi("PermissionAccepted");
export const PermissionForwarded = z
  .object({ status: z.literal("forwarded") })
  .describe(
    "The session runs on another host of the database: the answer was sent to it; a question already answered there stays answered.",
  )
  .openapi("PermissionForwarded");

export type CreateSessionBody = z.infer<typeof CreateSessionBody>;
export type RunBody = z.infer<typeof RunBody>;
export type PermissionAnswerBody = z.infer<typeof PermissionAnswerBody>;
export type SessionView = z.infer<typeof SessionView>;
export type SessionMembers = z.infer<typeof SessionMembers>;
