/**
 * The `permissions` and `sandbox` sections of the config. Rules from every
 * source add up (see ACCUMULATING_ARRAYS in merge-layers.ts); a deny rule
 * anywhere wins over an allow rule anywhere.
 */
import * as z from "zod";
import { bool, expecting, nonEmpty } from "./schema-helpers.ts";

/**
 * How much a session may do without asking:
 * - `default`: read-only tools run; file writes and bash ask.
 * - `acceptEdits`: file edits inside the scope run too; bash still asks.
 * - `plan`: read-only tools only; the model is told it is planning.
 * - `bypassPermissions`: everything runs except what a deny rule blocks; only
 *   with an active sandbox, or an explicit command-line opt-in without one.
 */
export const PERMISSION_MODES = ["default", "acceptEdits", "plan", "bypassPermissions"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

const MODE_LIST = PERMISSION_MODES.map((m) => `"${m}"`).join(", ");
export const PermissionModeSchema = z.enum(PERMISSION_MODES, expecting(`one of ${MODE_LIST}`));

const PermissionActionSchema = z.enum(["allow", "deny", "ask"], expecting('one of "allow", "deny", "ask"'));
/** A permission decision for a tool call. `ask` goes to the UI; with no UI it denies (fail closed). */
export type PermissionAction = z.output<typeof PermissionActionSchema>;

const PermissionRuleSchema = z.strictObject(
  {
    tool: nonEmpty('a tool name or glob, like "bash" or "*"').meta({
      description: 'Tool name or glob ("*").',
    }),
    match: nonEmpty("a glob on the tool's primary argument (a path or a command)").optional().meta({
      description:
        'Glob on the primary argument: a path for file tools, each simple command of the line for bash ("git status *").',
    }),
    action: PermissionActionSchema,
  },
  expecting("an object"),
);

export const PermissionsSchema = z.strictObject(
  {
    mode: PermissionModeSchema.default("default").meta({
      description: `Permission mode a session starts in: ${MODE_LIST}.`,
    }),
    rules: z
      .array(PermissionRuleSchema, expecting("an array of rules"))
      .default(() => [])
      .meta({
        description:
          "Rules of every source add up (a later file never drops an earlier file's). A deny anywhere wins, then ask, then allow.",
      }),
    default: z
      .record(
        z.string(expecting("a tool name")),
        PermissionActionSchema,
        expecting("an object of tool names to actions"),
      )
      .default(() => ({}))
      .meta({
        description:
          'Per-tool decision when no rule matches, over the built-in tools\' own (reads allow; writes, bash and unknown tools ask); "*" covers every other tool.',
      }),
  },
  expecting("an object"),
);

const SandboxObjectSchema = z.strictObject(
  {
    enabled: bool()
      .default(true)
      .meta({ description: "Run bash in the OS sandbox (bubblewrap on Linux, sandbox-exec on macOS)." }),
    network: bool().default(false).meta({ description: "Let sandboxed commands use the network." }),
  },
  expecting("an object"),
);

/** `sandbox`: `true` (the default), `false` (bash runs unsandboxed), or `{ enabled, network }`. */
export const SandboxSchema = z
  .union([bool(), SandboxObjectSchema], expecting("true, false, or an object { enabled, network }"))
  .default(true)
  .meta({
    description:
      "Where bash runs: true (default) in the OS sandbox, with the filesystem read-only except the scope and a private /tmp, no other processes visible and no network; false runs it unsandboxed; { network: true } lets it reach the network.",
  });

/** The sandbox section with every default filled in. */
export interface SandboxSettings {
  /** Run bash in the OS sandbox. Default true. */
  enabled: boolean;
  /** Sandboxed commands may use the network. Default false. */
  network: boolean;
}

/** Normalizes `sandbox` (`true`, `false` or an object) to {@link SandboxSettings}. */
export function sandboxSettings(value: z.output<typeof SandboxSchema> | undefined): SandboxSettings {
  if (value === undefined || value === true) return { enabled: true, network: false };
  if (value === false) return { enabled: false, network: false };
  return { enabled: value.enabled, network: value.network };
}
