/**
 * The Tool API (docs/design/tool-execution.md): a zod input schema sent as
 * JSON Schema, and `execute(input, ctx)` with the ToolExecutionContext.
 */
import type { ToolSpec } from "@yoi/llm-client";
import { YoiError, type YoiErrorOptions } from "@yoi/manifest/errors";
import * as z from "zod";
import type { ToolOutput } from "./tool-output.ts";

/**
 * What a tool call knows about where it runs. The worker runs the approved
 * calls of one response in parallel and holds no scheduling policy; a tool
 * that must not overlap with another waits itself, using these fields.
 */
export interface ToolExecutionContext {
  /** The provider's call id. */
  readonly callId: string;
  /** Identifies the assistant response (tool batch) this call belongs to; a UUID v7, stable for the batch. */
  readonly batchId: string;
  /** Position of this call in the response, in the model's order (0-based). */
  readonly callIndex: number;
  /** Number of tool calls in the response. */
  readonly batchSize: number;
  /** Index of the model call within the current run (0-based). */
  readonly turnIndex: number;
  /** Aborted when the run is cancelled or the tool exceeds its time limit. */
  readonly signal: AbortSignal;
  /**
   * Reports output while the call runs (a command's output as it arrives):
   * the worker emits it as `tool_output_delta` for UIs. What the model gets
   * is still only the returned result. Calls after the call ended are
   * ignored. Absent where no worker runs the tool (`yoi inspect`).
   */
  readonly progress?: (text: string) => void;
}

/** What `Tool.check` gets besides the arguments. */
export interface ToolCheckContext {
  /** The provider's call id. */
  readonly callId: string;
  /** Aborted when the run is cancelled. */
  readonly signal: AbortSignal;
}

/** What `execute` may return: a string (promoted to Stored over the inline threshold) or a ToolOutput. */
export type ToolReturn = string | ToolOutput;

/**
 * A tool. `inputSchema` validates the model's arguments (errors go back to
 * the model as a readable error result) and is sent as JSON Schema.
 */
// biome-ignore lint/suspicious/noExplicitAny: the default lets Tool[] hold tools of any schema.
export interface Tool<Schema extends z.ZodType = z.ZodType<any>> {
  /** Name the model calls it by (`^[a-zA-Z0-9_-]{1,64}$`). */
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Schema;
  /**
   * The JSON Schema sent to the model instead of the one computed from
   * `inputSchema`: for tools whose schema arrives as JSON Schema (MCP
   * servers). Must describe an object. `inputSchema` still validates the
   * arguments (a permissive `z.record` leaves validation to the tool).
   */
  readonly jsonSchema?: Readonly<Record<string, unknown>>;
  execute(input: z.output<Schema>, ctx: ToolExecutionContext): ToolReturn | Promise<ToolReturn>;
  /**
   * A cheap look at a call before anyone is asked about it (a permission
   * hook calls it through `ToolCallInfo.precheck` before it asks the user):
   * throws a ToolError with the refusal the model should get when `execute`
   * would surely refuse the call (a file not read yet, a path outside the
   * scope), so nothing is approved and then refused. `execute` still checks
   * for itself: the state may change in between. Other errors are ignored.
   */
  check?(input: z.output<Schema>, ctx: ToolCheckContext): void | Promise<void>;
  /** Wall-clock limit of one call. Default: the worker's `toolTimeoutMs` (manifest `WORKER_DEFAULTS.toolTimeoutMs`). */
  readonly timeoutMs?: number;
  /** Cap of the inline output in bytes when the worker has a BlobStore. Default: the worker's `toolOutput.maxBytes` (manifest `TOOL_OUTPUT_MAX_BYTES`). */
  readonly maxOutputBytes?: number;
  /**
   * Whether the worker may promote a large string result to Stored. Default
   * true; `inspect` itself sets false so reading a blob never makes a blob.
   */
  readonly storeLargeOutput?: boolean;
}

/** Identity helper that infers the input type of `execute` from the schema. */
export function defineTool<Schema extends z.ZodType>(tool: Tool<Schema>): Tool<Schema> {
  return tool;
}

/**
 * An error a tool throws to give the model a clean message (no "failed:"
 * prefix, no stack). Any other thrown error is reported as
 * `Tool <name> failed: <message>`.
 */
export class ToolError extends YoiError<"tool_failed"> {
  override readonly name = "ToolError";
  static override readonly marker: symbol = Symbol.for("yoi.error.ToolError");

  constructor(message: string, options: YoiErrorOptions = {}) {
    super("tool_failed", message, options);
  }
}

const TOOL_NAME_RE = /^[a-zA-Z0-9_-]{1,64}$/;

/** Each input schema's JSON Schema, computed when a worker first lists it: tools are built per session, their schemas once. */
const jsonSchemas = new WeakMap<z.ZodType, Readonly<Record<string, unknown>>>();

/**
 * The JSON Schema of a tool's zod input schema, as it is sent to the model
 * (input side, no `$schema`), computed with `z.toJSONSchema` once per schema
 * object. The result is shared: copy it before changing it.
 */
export function inputJsonSchema(schema: z.ZodType): Readonly<Record<string, unknown>> {
  let json = jsonSchemas.get(schema);
  if (json === undefined) {
    const computed = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<
      string,
      unknown
    >;
    delete computed.$schema;
    json = computed;
    jsonSchemas.set(schema, json);
  }
  return json;
}

/** The ToolSpec sent to the model: `jsonSchema`, or the JSON Schema of the zod input schema (input side). */
export function toolSpec(tool: Tool): ToolSpec {
  if (!TOOL_NAME_RE.test(tool.name)) {
    throw new TypeError(
      `Tool name ${JSON.stringify(tool.name)} is invalid: use 1-64 letters, digits, "_" or "-" (providers reject other names).`,
    );
  }
  const schema = { ...(tool.jsonSchema ?? inputJsonSchema(tool.inputSchema)) };
  delete schema.$schema;
  if (schema.type !== "object") {
    throw new TypeError(
      `Tool ${tool.name}: inputSchema must be a zod object (providers require an object of arguments), got ${String(schema.type ?? "a non-object schema")}.`,
    );
  }
  return { name: tool.name, description: tool.description, parameters: schema };
}
