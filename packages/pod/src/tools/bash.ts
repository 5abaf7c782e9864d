import { defineTool, storedText, ToolError, type ToolReturn } from "@yoi/llm-worker";
import { TOOL_OUTPUT_MAX_BYTES, WORKER_DEFAULTS } from "@yoi/manifest";
import * as z from "zod";
import type { ScopedFs } from "../fs/scoped-fs.ts";
import type { Sandbox, SandboxPolicy } from "../sandbox/sandbox.ts";
import { plural } from "./deps.ts";

/** Longest timeout a call may ask for. */
/** The shell of the bash tool unless `BashToolOptions.shell` names another. */
export const DEFAULT_SHELL = "/bin/bash";
export const BASH_MAX_TIMEOUT_MS = 600_000;
/** Output kept in memory: this much of the head and of the tail; the middle is dropped and counted. */
export const BASH_KEEP_BYTES = 4 * 1024 * 1024;
/** Grace between SIGTERM and SIGKILL of the process group. */
const KILL_GRACE_MS = 2000;
/** How long pipes may stay open after the shell exited (background jobs) before we stop reading. */
const DRAIN_AFTER_EXIT_MS = 500;

/** Environment variables never passed to commands (the pod's own provider keys). */
const SECRET_ENV =
  /^(ANTHROPIC_API_KEY|OPENAI_API_KEY|GEMINI_API_KEY|GOOGLE_API_KEY|GOOGLE_GENAI_API_KEY|YOI_.*(KEY|TOKEN|SECRET).*)$/;
/** Names that read like credentials (`*_API_KEY`, `*_SECRET*`, `*_PASSWORD`, `*_TOKEN`): never passed either. */
const CREDENTIAL_ENV = /(^|_)(API_?KEY|SECRET|PASSWORD|PASSWD|TOKEN|ACCESS_KEY)(_|$)/i;

export interface BashToolOptions {
  fs: ScopedFs;
  /** Environment of commands. Default: this process's, without provider API keys. */
  env?: NodeJS.ProcessEnv;
  /** Shell binary. Default `/bin/bash`. */
  shell?: string;
  /** Cap of inline output in bytes; larger output is Stored. Default `TOOL_OUTPUT_MAX_BYTES`. */
  maxOutputBytes?: number;
  /** Run every command inside this OS sandbox, confined by `policy`. Default: unsandboxed. */
  sandbox?: { sandbox: Sandbox; policy: SandboxPolicy };
}

/** The arguments `bash` takes . */
export const bashInput = z.object({
  command: z.string().min(1).describe("The shell command (bash -c). Runs in the project root."),
  timeout_ms: z
    .number()
    .int()
    .min(1)
    .max(BASH_MAX_TIMEOUT_MS)
    .optional()
    .describe(`Kill the command after this many milliseconds. Default ${WORKER_DEFAULTS.toolTimeoutMs}.`),
  description: z.string().optional().describe("A few words on what the command does, for the user."),
});

/**
 * The default environment: inherited, minus provider API keys (the known
 * ones and `extraSecrets`, e.g. every `providers.*.apiKeyEnv` of the config)
 * and anything named like a credential, with pagers and git prompts disabled.
 */
export function defaultBashEnv(
  base: Readonly<Record<string, string | undefined>> = process.env,
  extraSecrets: readonly string[] = [],
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const extra = new Set(extraSecrets);
  for (const [k, v] of Object.entries(base))
    if (!SECRET_ENV.test(k) && !CREDENTIAL_ENV.test(k) && !extra.has(k)) env[k] = v;
  env.PAGER = "cat";
  env.GIT_PAGER = "cat";
  env.GIT_TERMINAL_PROMPT = "0";
  return env;
}

class OutputBuffer {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  total = 0;
  private readonly keep: number;
  constructor(keep: number) {
    this.keep = keep;
  }
  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headBytes < this.keep) {
      const take = chunk.subarray(0, this.keep - this.headBytes);
      this.head.push(take);
      this.headBytes += take.length;
      chunk = chunk.subarray(take.length);
      if (chunk.length === 0) return;
    }
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    while (this.tailBytes - (this.tail[0]?.length ?? 0) >= this.keep)
      this.tailBytes -= this.tail.shift()!.length;
  }
  text(): string {
    const decode = (parts: Buffer[]) => new TextDecoder("utf-8").decode(Buffer.concat(parts));
    const omitted = this.total - this.headBytes - this.tailBytes;
    if (this.tail.length === 0) return decode(this.head);
    return omitted > 0
      ? `${decode(this.head)}\n[... ${omitted} bytes omitted ...]\n${decode(this.tail)}`
      : decode([...this.head, ...this.tail]);
  }
}

function headTail(text: string, headLines: number, tailLines: number, maxBytes: number): string {
  const lines = text.split("\n");
  const clip = (s: string) => (Buffer.byteLength(s) > maxBytes ? `${s.slice(0, maxBytes)}…` : s);
  if (lines.length <= headLines + tailLines) return clip(text);
  return `${clip(lines.slice(0, headLines).join("\n"))}\n── tail ──\n${clip(lines.slice(-tailLines).join("\n"))}`;
}

/** `bash`: runs a command in the scope root; killed (the whole process group) on timeout or cancel. */
export function bashTool(options: BashToolOptions) {
  const cap = options.maxOutputBytes ?? TOOL_OUTPUT_MAX_BYTES;
  const env = options.env ?? defaultBashEnv();
  return defineTool({
    name: "bash",
    description:
      "Run a shell command with bash in the project root and return its combined stdout/stderr and exit code. " +
      `Default timeout ${WORKER_DEFAULTS.toolTimeoutMs / 1000} s (timeout_ms up to ${BASH_MAX_TIMEOUT_MS / 1000} s); the command and its children are killed on timeout or cancel. ` +
      `Output over ${cap} bytes is stored and summarized; read it with inspect. stdin is closed: do not run interactive commands.` +
      (options.sandbox === undefined
        ? ""
        : ` Commands run in a sandbox: only the project${options.sandbox.policy.network ? "" : " and a private /tmp are writable, and there is no network"}${options.sandbox.policy.network ? " and a private /tmp are writable" : ""}.`),
    inputSchema: bashInput,
    // Our own timer reports partial output; the worker's limit is only the backstop.
    timeoutMs: BASH_MAX_TIMEOUT_MS + 30_000,
    maxOutputBytes: cap + 1024,
    async execute({ command, timeout_ms }, ctx): Promise<ToolReturn> {
      const timeout = timeout_ms ?? WORKER_DEFAULTS.toolTimeoutMs;
      ctx.signal.throwIfAborted();
      const out = new OutputBuffer(BASH_KEEP_BYTES);
      const shell = options.shell ?? DEFAULT_SHELL;
      const run =
        options.sandbox === undefined
          ? { file: shell, args: ["-c", command] }
          : options.sandbox.sandbox.wrap(shell, command, options.fs.cwd, options.sandbox.policy);
      // Loaded at the first command, not imported: loading it cost every session's start some 0.7 ms.
      const { spawn } = process.getBuiltinModule("node:child_process");
      const child = spawn(run.file, run.args, {
        cwd: options.fs.cwd,
        env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let killedBy: "timeout" | "cancel" | undefined;
      let killTimer: NodeJS.Timeout | undefined;
      const killGroup = (why: "timeout" | "cancel") => {
        if (killedBy !== undefined || child.pid === undefined) return;
        killedBy = why;
        try {
          process.kill(-child.pid, "SIGTERM");
        } catch {}
        killTimer = setTimeout(() => {
          try {
            process.kill(-child.pid!, "SIGKILL");
          } catch {}
        }, KILL_GRACE_MS);
        killTimer.unref();
      };
      const timer = setTimeout(() => killGroup("timeout"), timeout);
      const onAbort = () => killGroup("cancel");
      ctx.signal.addEventListener("abort", onAbort, { once: true });
      child.stdout.on("data", (c: Buffer) => out.push(c));
      child.stderr.on("data", (c: Buffer) => out.push(c));
      let detachedOutput = false;
      let undone: string | undefined;
      const result = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
        (resolve, reject) => {
          let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
          child.on("error", reject);
          child.on("close", (code, signal) => resolve(exit ?? { code, signal }));
          child.on("exit", (code, signal) => {
            exit = { code, signal };
            // Background jobs may keep the pipes open; do not wait for them forever.
            setTimeout(() => {
              if (child.stdout.readableEnded && child.stderr.readableEnded) return;
              detachedOutput = true;
              child.stdout.destroy();
              child.stderr.destroy();
              resolve(exit!);
            }, DRAIN_AFTER_EXIT_MS).unref();
          });
        },
      )
        .catch((error: Error) => {
          throw new ToolError(`could not start ${run.file}: ${error.message}`);
        })
        .finally(() => {
          clearTimeout(timer);
          if (killTimer !== undefined && killedBy === undefined) clearTimeout(killTimer);
          ctx.signal.removeEventListener("abort", onAbort);
          // The sandbox's PID namespace ended with the shell: nothing of the command runs any more.
          undone = run.release?.();
        });
      let text = out.text();
      if (text !== "" && !text.endsWith("\n")) text += "\n";
      let status: string;
      if (killedBy === "timeout") status = `[killed: timed out after ${timeout} ms]`;
      else if (killedBy === "cancel") status = "[killed: cancelled]";
      else if (result.signal !== null) status = `[terminated by ${result.signal}]`;
      else status = `[exit code: ${result.code}]`;
      if (detachedOutput)
        status += "\n[background processes kept output open; output after exit not captured]";
      if (undone !== undefined) status += `\n[sandbox: ${undone}]`;
      const isError = killedBy !== undefined;
      const full = `${text}${status}`;
      if (Buffer.byteLength(full) <= cap) return isError ? { kind: "inline", text: full, isError } : full;
      const lines = text.split("\n").length - 1;
      const summary =
        `${status} Output: ${plural(out.total, "byte")}, ${plural(lines, "line")}; the full output is stored — ` +
        `use inspect with a selector like "lines:1-200" to read it.\n── head ──\n${headTail(text, 20, 40, 4096)}`;
      const stored = storedText(full, summary);
      return isError ? { ...stored, isError } : stored;
    },
  });
}
