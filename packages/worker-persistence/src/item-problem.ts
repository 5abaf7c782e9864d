/**
 * Checks that a logged history item has the shape every adapter relies on.
 * A record that passes only the shallow check (`type` is a string) could
 * still hold, say, a tool call whose `arguments` is an object; replayed,
 * it would make the first request of the resumed session throw inside a
 * provider adapter, far from the log that caused it. Checking here lets the
 * reader skip that one record with a warning naming its line.
 *
 * Hand-written rather than a zod schema: it runs once per record of a log
 * that may be 100 MB, and only checks what replay and the adapters read.
 */

const ROLES = new Set(["user", "assistant", "system"]);
const PROVIDER_KINDS = new Set(["anthropic", "openai-responses", "openai-chat", "gemini"]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function optional(value: unknown, check: (v: unknown) => boolean): boolean {
  return value === undefined || check(value);
}

const isString = (v: unknown): boolean => typeof v === "string";
const isBoolean = (v: unknown): boolean => typeof v === "boolean";
/** A citation or a server tool's source: an object with a string `url`. */
const isUrlEntry = (v: unknown): boolean => isObject(v) && isString(v.url);
const SERVER_TOOL_STATUSES = new Set(["running", "completed", "failed"]);

function partProblem(part: unknown, i: number): string | undefined {
  if (!isObject(part)) return `content[${i}] is not an object`;
  if (part.type === "text") {
    if (!isString(part.text)) return `content[${i}] text part without a string \`text\``;
    if (!optional(part.citations, (c) => Array.isArray(c) && c.every(isUrlEntry)))
      return `content[${i}] text part whose \`citations\` are not objects with a \`url\``;
    return undefined;
  }
  if (part.type === "image") {
    if (!isString(part.mediaType)) return `content[${i}] image part without a \`mediaType\``;
    if (
      !optional(part.data, isString) ||
      !optional(part.url, isString) ||
      (part.data === undefined && part.url === undefined)
    )
      return `content[${i}] image part without string \`data\` or \`url\``;
    return undefined;
  }
  return `content[${i}] has unknown part type ${JSON.stringify(part.type)}`;
}

/** Why `value` is not a usable history Item, or undefined when it is one. */
export function itemProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "the item is not an object";
  switch (value.type) {
    case "message": {
      if (typeof value.role !== "string" || !ROLES.has(value.role))
        return `message with role ${JSON.stringify(value.role)} (expected user, assistant or system)`;
      if (!Array.isArray(value.content)) return "message without a `content` array";
      for (let i = 0; i < value.content.length; i++) {
        const problem = partProblem(value.content[i], i);
        if (problem !== undefined) return `message ${problem}`;
      }
      return optional(value.providerData, isObject) ? undefined : "message with a non-object `providerData`";
    }
    case "tool_call":
      if (typeof value.callId !== "string" || value.callId === "") return "tool call without a `callId`";
      if (typeof value.name !== "string" || value.name === "") return "tool call without a `name`";
      if (!isString(value.arguments))
        return `tool call ${value.callId} whose \`arguments\` is not a JSON string`;
      if (value.kind !== undefined && value.kind !== "function" && value.kind !== "custom")
        return `tool call ${value.callId} with unknown kind ${JSON.stringify(value.kind)}`;
      return optional(value.providerData, isObject)
        ? undefined
        : "tool call with a non-object `providerData`";
    case "tool_result":
      if (typeof value.callId !== "string" || value.callId === "") return "tool result without a `callId`";
      if (!isString(value.output)) return `tool result ${value.callId} whose \`output\` is not a string`;
      if (!isBoolean(value.isError)) return `tool result ${value.callId} without a boolean \`isError\``;
      if (!optional(value.name, isString)) return `tool result ${value.callId} with a non-string \`name\``;
      if (value.outputRef !== undefined && !(isObject(value.outputRef) && isString(value.outputRef.id)))
        return `tool result ${value.callId} with an \`outputRef\` without an id`;
      return undefined;
    case "reasoning":
      if (!isString(value.text)) return "reasoning without a string `text`";
      if (typeof value.provider !== "string" || !PROVIDER_KINDS.has(value.provider))
        return `reasoning from unknown provider ${JSON.stringify(value.provider)}`;
      if (!optional(value.summary, (s) => Array.isArray(s) && s.every(isString)))
        return "reasoning whose `summary` is not an array of strings";
      if (!optional(value.signature, isString) || !optional(value.encryptedContent, isString))
        return "reasoning with a non-string `signature` or `encryptedContent`";
      if (!optional(value.redacted, isBoolean)) return "reasoning with a non-boolean `redacted`";
      return optional(value.providerData, isObject)
        ? undefined
        : "reasoning with a non-object `providerData`";
    case "server_tool":
      if (typeof value.callId !== "string" || value.callId === "") return "server tool without a `callId`";
      if (typeof value.name !== "string" || value.name === "") return "server tool without a `name`";
      if (!isString(value.arguments))
        return `server tool ${value.callId} whose \`arguments\` is not a JSON string`;
      if (typeof value.status !== "string" || !SERVER_TOOL_STATUSES.has(value.status))
        return `server tool ${value.callId} with status ${JSON.stringify(value.status)} (expected running, completed or failed)`;
      if (!Array.isArray(value.sources) || !value.sources.every(isUrlEntry))
        return `server tool ${value.callId} whose \`sources\` are not objects with a \`url\``;
      if (typeof value.provider !== "string" || value.provider === "")
        return `server tool ${value.callId} without a \`provider\``;
      return optional(value.providerData, isObject)
        ? undefined
        : "server tool with a non-object `providerData`";
    default:
      return `unknown item type ${JSON.stringify(value.type)}`;
  }
}
