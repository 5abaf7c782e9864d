import { defineTool, storedText, ToolError, type ToolReturn } from "@yoi/llm-worker";
import { TOOL_OUTPUT_MAX_BYTES, WORKER_DEFAULTS } from "@yoi/manifest";
import * as z from "zod";
import type { ScopedFs } from "../fs/scoped-fs.ts";
import {
  type Confinement,
  expectedConfinement,
  type SessionSandbox,
  settledConfinement,
} from "../sandbox/pod-sandbox.ts";
import type { BackgroundShells } from "./background-shells.ts";
import { killProcessGroup, spawnCommand } from "./command-process.ts";
import { plural } from "./deps.ts";

/** The shell of the bash tool unless `BashToolOptions.shell` names another. */
export const DEFAULT_SHELL = "/bin/bash";
/** Longest timeout a call may ask for. */
export const BASH_MAX_TIMEOUT_MS = 600_000;
/** Output kept in memory: this much of the head and of the tail; the middle is dropped and counted. */
export const BASH_KEEP_BYTES = 4 * 1024 * 1024;
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
  /**
   * Run every command inside this OS sandbox, confined by `policy`, or in a
   * session's sandbox once it is settled. Default: unsandboxed.
   */
  sandbox?: Confinement | SessionSandbox;
  /**
   * Where `run_in_background: true` commands live (the session's, read by
   * `bash_output` and `kill_bash`). Without it, a background run is refused.
   */
  background?: BackgroundShells;
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
  run_in_background: z
    .boolean()
    .optional()
    .describe(
      "Start the command and return at once with its id (for dev servers, watchers, long builds). " +
        "Read its output with bash_output, stop it with kill_bash; it is stopped when the session ends.",
    ),
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
  const shell = options.shell ?? DEFAULT_SHELL;
  const head =
    "Run a shell command with bash in the project root and return its combined stdout/stderr and exit code. " +
    `Default timeout ${WORKER_DEFAULTS.toolTimeoutMs / 1000} s (timeout_ms up to ${BASH_MAX_TIMEOUT_MS / 1000} s); the command and its children are killed on timeout or cancel. ` +
    `Output over ${cap} bytes is stored and summarized; read it with inspect. stdin is closed: do not run interactive commands.` +
    (options.background === undefined
      ? ""
      : " For a server or watcher that keeps running, pass run_in_background: true (no timeout unless timeout_ms is given) and read it with bash_output.");
  return defineTool({
    name: "bash",
    // Read each time the tools are listed: a session's sandbox that the probe did not confirm is said no more.
    get description() {
      const confined = expectedConfinement(options.sandbox);
      return (
        head +
        (confined === undefined
          ? ""
          : ` Commands run in a sandbox: only the project${confined.policy.network ? "" : " and a private /tmp are writable, and there is no network"}${confined.policy.network ? " and a private /tmp are writable" : ""}.`)
      );
    },
    inputSchema: bashInput,
    // Our own timer reports partial output; the worker's limit is only the backstop.
    timeoutMs: BASH_MAX_TIMEOUT_MS + 30_000,
    maxOutputBytes: cap + 1024,
    async execute({ command, timeout_ms, description, run_in_background }, ctx): Promise<ToolReturn> {
      ctx.signal.throwIfAborted();
      const spawnOptions = { ...options, sandbox: await settledConfinement(options.sandbox), shell, env };
      ctx.signal.throwIfAborted();
      if (run_in_background === true) {
        if (options.background === undefined)
          throw new ToolError(
            "bash: background commands are not available here; run the command without run_in_background.",
          );
        const started = options.background.start({
          command,
          ...(description !== undefined ? { description } : {}),
          ...(timeout_ms !== undefined ? { timeoutMs: timeout_ms } : {}),
          callId: ctx.callId,
          spawn: () => spawnCommand(spawnOptions, command),
        });
        return (
          `Started in the background with id: ${started.id}\n` +
          `Read what it prints with bash_output { "id": "${started.id}" } (add wait_ms to wait for more); stop it with kill_bash { "id": "${started.id}" }. ` +
          "It is stopped when the session ends."
        );
      }
      const timeout = timeout_ms ?? WORKER_DEFAULTS.toolTimeoutMs;
      const out = new OutputBuffer(BASH_KEEP_BYTES);
      const { child, run } = spawnCommand(spawnOptions, command);
      let killedBy: "timeout" | "cancel" | undefined;
      let killTimer: NodeJS.Timeout | undefined;
      const killGroup = (why: "timeout" | "cancel") => {
        if (killedBy !== undefined || child.pid === undefined) return;
        killedBy = why;
        killTimer = killProcessGroup(child.pid);
      };
      const timer = setTimeout(() => killGroup("timeout"), timeout);
      const onAbort = () => killGroup("cancel");
      ctx.signal.addEventListener("abort", onAbort, { once: true });
      // Live output for the UI: one decoder a stream, so a character split over two chunks stays whole.
      const live = (decoder: InstanceType<typeof TextDecoder>) => (c: Buffer) => {
        out.push(c);
        if (ctx.progress !== undefined) ctx.progress(decoder.decode(c, { stream: true }));
      };
      child.stdout.on("data", live(new TextDecoder("utf-8")));
      child.stderr.on("data", live(new TextDecoder("utf-8")));
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
