/**
 * Config sections of the extensions a user adds: MCP servers (`mcpServers`)
 * and configured hooks (`hooks`).
 *
 * `mcpServers` entries are checked one by one when the session starts them
 * (`checkMcpServer`), not when the config loads: a malformed entry disables
 * that server with a message naming it, and the session goes on, as the
 * peers (Claude Code, gemini-cli) behave. The config layer only requires
 * each entry to be an object.
 */
import * as z from "zod";
import { expecting, nonEmpty, positiveInt } from "./schema-helpers.ts";
import { knownKeysAt } from "./schema-walk.ts";

/** Server names: they become part of tool names (`mcp__<server>__<tool>`), so providers' name rules apply. */
export const MCP_SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;
/** What a valid server name is, for messages. */
export const MCP_SERVER_NAME_EXPECTED = "a server name of 1-32 letters, digits, '_' or '-'";

const stringMap = (what: string) =>
  z.record(z.string(), z.string(expecting(`a string ${what} value`)), expecting(`an object of ${what}s`));

const common = () => ({
  disabled: z.boolean(expecting("true or false")).optional().meta({ description: "Leave the server off." }),
  startupTimeoutMs: positiveInt()
    .optional()
    .meta({ description: "How long the server may take to start and list its tools. Default 30000." }),
  toolTimeoutMs: positiveInt()
    .optional()
    .meta({ description: "Wall-clock limit of one tool call. Default: worker.toolTimeoutMs." }),
});

/** A server yoi starts and talks to over stdin/stdout. */
export const McpStdioServerSchema = z.strictObject(
  {
    type: z.literal("stdio", expecting('"stdio"')).optional(),
    command: nonEmpty('the program to run, like "node" or "uvx"'),
    args: z.array(z.string(expecting("a string")), expecting("an array of strings")).optional(),
    env: stringMap("environment variable")
      .optional()
      // biome-ignore lint/suspicious/noTemplateCurlyInString: documents the ${VAR} syntax of the config.
      .meta({ description: "Added to a minimal environment; ${VAR} expands from yoi's environment." }),
    cwd: z
      .string(expecting("a directory path"))
      .optional()
      .meta({ description: "Default: the project root." }),
    ...common(),
  },
  expecting("an object"),
);

/** A server reached over Streamable HTTP (falling back to SSE for old servers). */
export const McpHttpServerSchema = z.strictObject(
  {
    type: z.enum(["http", "sse"], expecting('"http" or "sse"')).optional(),
    url: z.url({ ...expecting('an http(s) URL, like "http://127.0.0.1:8931/mcp"'), protocol: /^https?$/ }),
    headers: stringMap("header")
      .optional()
      // biome-ignore lint/suspicious/noTemplateCurlyInString: documents the ${VAR} syntax of the config.
      .meta({ description: "Sent with every request; ${VAR} expands from yoi's environment." }),
    ...common(),
  },
  expecting("an object"),
);

/** One `mcpServers` entry, checked. */
export type McpServerConfig = z.output<typeof McpStdioServerSchema> | z.output<typeof McpHttpServerSchema>;

/** The `mcpServers` config section as the layer schema checks it: names, and an object each. */
export const McpServersSchema = z
  .record(
    z.string().regex(MCP_SERVER_NAME_PATTERN, expecting(MCP_SERVER_NAME_EXPECTED)),
    z.looseObject(
      {},
      expecting('an object with "command" (a program yoi starts) or "url" (a Streamable HTTP server)'),
    ),
    expecting("an object of server names to servers"),
  )
  .default(() => ({}))
  .meta({
    description:
      'MCP servers: { "<name>": { "command": "...", "args": [...], "env": {...} } or { "url": "...", "headers": {...} } }. Their tools are mcp__<name>__<tool>.',
  });

/**
 * Checks one `mcpServers` entry. Returns the server, or one message that
 * says what is wrong (field path and expectation) and what to do.
 */
export function checkMcpServer(
  name: string,
  raw: unknown,
): { ok: true; server: McpServerConfig } | { ok: false; message: string } {
  if (!MCP_SERVER_NAME_PATTERN.test(name))
    return { ok: false, message: `the name: expected ${MCP_SERVER_NAME_EXPECTED}` };
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    return { ok: false, message: 'expected an object with "command" or "url"' };
  const entry = raw as Record<string, unknown>;
  const hasCommand = "command" in entry;
  const hasUrl = "url" in entry;
  if (hasCommand && hasUrl)
    return { ok: false, message: 'set either "command" (a program yoi starts) or "url", not both' };
  if (!hasCommand && !hasUrl)
    return {
      ok: false,
      message: `expected "command" (a program yoi starts) or "url" (a Streamable HTTP server); neither is set${
        Object.keys(entry).length > 0
          ? ` (found ${Object.keys(entry)
              .map((k) => `"${k}"`)
              .join(", ")})`
          : ""
      }`,
    };
  const schema = hasCommand ? McpStdioServerSchema : McpHttpServerSchema;
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, server: parsed.data };
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ` : "";
  if (issue.code === "unrecognized_keys") {
    const known = knownKeysAt(schema, []).join(", ");
    return {
      ok: false,
      message: `${where}unknown key ${issue.keys.map((k) => `"${k}"`).join(", ")} (known: ${known})`,
    };
  }
  const found = valueAt(raw, issue.path);
  return {
    ok: false,
    message: `${where}${issue.message}${found === undefined ? "" : `, found ${JSON.stringify(found)}`}`,
  };
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  if (path.length === 0) return undefined;
  let at: unknown = value;
  for (const key of path)
    at = at && typeof at === "object" ? (at as Record<PropertyKey, unknown>)[key] : undefined;
  return at;
}

/** The events a configured hook can run on. */
export const HOOK_EVENTS = ["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart"] as const;
export type HookEventName = (typeof HOOK_EVENTS)[number];

const HookCommandSchema = z.strictObject(
  {
    command: nonEmpty("a shell command").meta({
      description: "Run with sh -c in the project root; the event arrives as JSON on stdin.",
    }),
    matcher: z.string(expecting('a glob on the tool name, like "bash" or "mcp__*"')).optional().meta({
      description:
        'PreToolUse/PostToolUse: glob on the tool name ("bash", "mcp__fs__*"). Default: every tool.',
    }),
    timeoutMs: positiveInt().optional().meta({ description: "Killed after this long. Default 60000." }),
  },
  expecting("an object"),
);

/** The `hooks` config section: event name to a list of commands. */
export const HooksSchema = z
  .strictObject(
    Object.fromEntries(
      HOOK_EVENTS.map((event) => [
        event,
        z.array(HookCommandSchema, expecting('an array of hooks ({ "command": ... })')).optional(),
      ]),
    ) as Record<HookEventName, z.ZodOptional<z.ZodArray<typeof HookCommandSchema>>>,
    expecting(`an object of events (${HOOK_EVENTS.join(", ")}) to lists of hooks`),
  )
  .prefault({})
  .meta({
    description:
      "Shell commands run on events, JSON on stdin. Exit 0: go on (stdout JSON may decide); exit 2: block (stderr says why); other: a reported failure.",
  });

/** One configured hook. */
export type HookCommandConfig = z.output<typeof HookCommandSchema>;
/** The `hooks` section, as loaded. */
export type HooksConfig = z.output<typeof HooksSchema>;
