/**
 * `bash_output` and `kill_bash`: what the model uses to follow and stop the
 * commands it started with `bash` and `run_in_background: true`.
 */
import { defineTool, ToolError } from "@yoi/llm-worker";
import * as z from "zod";
import {
  BACKGROUND_MAX_WAIT_MS,
  type BackgroundRead,
  type BackgroundShellInfo,
  type BackgroundShells,
  UnknownBackgroundShell,
} from "./background-shells.ts";
import { plural } from "./deps.ts";

export const BASH_OUTPUT_TOOL_NAME = "bash_output";
export const KILL_BASH_TOOL_NAME = "kill_bash";

const bashOutputInput = z.object({
  id: z.string().min(1).describe("The id bash returned for the background command (`bash_1`)."),
  wait_ms: z
    .number()
    .int()
    .min(0)
    .max(BACKGROUND_MAX_WAIT_MS)
    .optional()
    .describe(
      `When nothing new was printed yet, wait up to this many milliseconds for output or the end (0 to ${BACKGROUND_MAX_WAIT_MS}). Default 0.`,
    ),
});

const killBashInput = z.object({
  id: z.string().min(1).describe("The id of the background command to stop."),
});

/** One line on where a background command stands, for results and `/bashes`. */
export function backgroundStatus(info: BackgroundShellInfo, now = Date.now()): string {
  const seconds = Math.round(((info.endedAt ?? now) - info.startedAt) / 1000);
  switch (info.state) {
    case "running":
      return `running for ${seconds} s`;
    case "exited":
      return info.signal ? `ended: terminated by ${info.signal}` : `ended: exit code ${info.exitCode}`;
    case "killed":
      return `ended: killed (${info.reason ?? "killed"})`;
    case "failed":
      return `ended: ${info.reason ?? "could not start"}`;
  }
}

function readText(read: BackgroundRead): string {
  const parts: string[] = [];
  if (read.dropped > 0)
    parts.push(`[${plural(read.dropped, "byte")} of earlier output dropped: only the last part is kept]`);
  let text = read.text;
  if (text !== "" && !text.endsWith("\n")) text += "\n";
  parts.push(text === "" ? "(no new output)\n" : text);
  parts.push(`[${read.info.id}: ${backgroundStatus(read.info)}]`);
  return parts.join(read.dropped > 0 ? "\n" : "");
}

function known<T>(work: () => Promise<T>): Promise<T> {
  return work().catch((error: unknown) => {
    if (UnknownBackgroundShell.isInstance(error)) throw new ToolError(error.message);
    throw error;
  });
}

/** `bash_output`: what a background command printed since the last read, and whether it ended. */
export function bashOutputTool(shells: BackgroundShells) {
  return defineTool({
    name: BASH_OUTPUT_TOOL_NAME,
    description:
      "Read what a background command (bash with run_in_background: true) printed since the last read, and whether it is still running or ended (with its exit code). " +
      "Pass wait_ms to wait for new output when there is none yet.",
    inputSchema: bashOutputInput,
    timeoutMs: BACKGROUND_MAX_WAIT_MS + 30_000,
    execute: ({ id, wait_ms }, ctx) =>
      known(async () => readText(await shells.read(id, wait_ms ?? 0, ctx.signal))),
  });
}

/** `kill_bash`: stops a background command and everything it started. */
export function killBashTool(shells: BackgroundShells) {
  return defineTool({
    name: KILL_BASH_TOOL_NAME,
    description:
      "Stop a background command (bash with run_in_background: true) and every process it started.",
    inputSchema: killBashInput,
    execute: ({ id }) =>
      known(async () => {
        const before = shells.get(id);
        if (before !== undefined && before.state !== "running") {
          const status = backgroundStatus(before).replace(/^ended: /, "");
          if (before.leftRunning !== true) return `${id} had already ended (${status}); nothing to stop.`;
          await shells.kill(id);
          return `${id} had already ended (${status}); the processes it left running were stopped.`;
        }
        const info = await shells.kill(id);
        const unread = await shells.read(id);
        const tail = unread.text === "" ? "" : `\nIts unread output:\n${unread.text}`;
        return `${id} stopped (${info.command.split("\n")[0]}).${tail}`;
      }),
  });
}
