/**
 * `!cmd` at the prompt: the user runs a shell command themselves. It is the
 * user's own, so nobody is asked; it still runs through the pod's own bash
 * tool (the same sandbox, the environment without keys, the same scope for
 * its writes), and its output is kept as context that goes to the model
 * with the next prompt.
 */
import { randomUUID } from "node:crypto";
import { isToolOutput } from "@yoi/llm-worker";
import { errorMessage } from "@yoi/manifest/errors";
import type { Pod } from "@yoi/pod";

/** Output kept for the model, per command (the rest is cut, with a note). */
const CONTEXT_MAX_CHARS = 30_000;

export interface ShellEscapeResult {
  /** False when it could not run (bash is turned off, the line is not a command the tool takes). */
  ran: boolean;
  /** What the command printed, with the bash tool's exit line; or why it did not run. */
  output: string;
  isError: boolean;
}

/** Runs `command` through the pod's bash tool, without a permission question. */
export async function runShellEscape(
  pod: Pod,
  command: string,
  signal: AbortSignal,
  /** Called as the command starts. */
  onStart?: () => void,
): Promise<ShellEscapeResult> {
  const tool = pod.worker.tools.find((t) => t.name === "bash");
  if (tool === undefined) {
    return {
      ran: false,
      output: "the bash tool is turned off in this session (config: bash)",
      isError: true,
    };
  }
  const callId = `user_shell_${randomUUID()}`;
  const parsed = tool.inputSchema.safeParse({ command });
  if (!parsed.success) return { ran: false, output: parsed.error.message, isError: true };
  onStart?.();
  try {
    const returned = await tool.execute(parsed.data, {
      callId,
      batchId: callId,
      callIndex: 0,
      batchSize: 1,
      turnIndex: 0,
      signal,
    });
    if (!isToolOutput(returned)) return { ran: true, output: returned, isError: false };
    if (returned.kind === "inline")
      return { ran: true, output: returned.text, isError: returned.isError ?? false };
    const content = returned.content;
    const text = content.kind === "text" ? content.text : JSON.stringify(content.value, null, 2);
    return { ran: true, output: text, isError: returned.isError ?? false };
  } catch (error) {
    return { ran: true, output: errorMessage(error), isError: true };
  }
}

/** The context block the model gets for a command the user ran. */
export function shellContext(command: string, output: string): string {
  const cut =
    output.length > CONTEXT_MAX_CHARS
      ? `${output.slice(0, CONTEXT_MAX_CHARS)}\n[… ${output.length - CONTEXT_MAX_CHARS} more characters not shown]`
      : output;
  return `[The user ran a shell command in the project: $ ${command}]\n${cut.replace(/\n+$/, "")}\n[end of command output]`;
}
