/**
 * Command-line parsing. Light on purpose: `--version` and `--help` go
 * through this module and nothing else, so it imports only `node:util`.
 */
import { parseArgs } from "node:util";
import { closest, errorMessage } from "@yoi/manifest/errors";
import { usageError } from "./cli-error.ts";

/** Output formats of print mode. */
export const OUTPUT_FORMATS = ["text", "json", "stream-json"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Provider kinds `yoi debug replay --provider` takes (kept here so parsing imports nothing heavy). */
export const REPLAY_PROVIDERS = ["anthropic", "openai-chat", "openai-responses", "gemini"] as const;
export type ReplayProvider = (typeof REPLAY_PROVIDERS)[number];

/** Flags that shape the session (model, base URL, scope). */
export interface SessionFlags {
  model?: string;
  baseURL?: string;
  /** Project directory (scope root). Default: the working directory. */
  cwd?: string;
  /** `--permission-mode`: default, acceptEdits, plan, bypassPermissions (checked where the config is loaded). */
  permissionMode?: string;
  /** `--allow-tool <rule>` (repeatable): rules like `bash(git status *)`, `edit_file`, `mcp__*`. */
  allowTools?: string[];
  /** `--deny-tool <rule>` (repeatable). */
  denyTools?: string[];
  /** `--no-sandbox`: bash runs unsandboxed, without asking for every command. */
  noSandbox?: boolean;
  /** `--dangerously-bypass-without-sandbox`: bypassPermissions is allowed even where no sandbox is active. */
  bypassWithoutSandbox?: boolean;
  /** `--max-turns <n>`: the most model calls one prompt's run makes (`worker.maxTurns`). */
  maxTurns?: number;
  /** `--append-system-prompt <text>`: added to the end of the system prompt for this run. */
  appendSystem?: string;
  /** `--add-dir <dir>` (repeatable): more directories the session may read and write, as typed. */
  addDirs?: string[];
}

export type Command =
  | { kind: "help"; topic?: string }
  | { kind: "version" }
  | {
      kind: "chat";
      flags: SessionFlags;
      /** Print mode (`-p`, or stdin is not a TTY). */
      print: boolean;
      /** Prompt from the command line (positionals joined with spaces). */
      prompt?: string;
      output: OutputFormat;
      continueLast: boolean;
      resume?: string;
      /** `-r` without an id: choose the session in a picker. */
      pickResume?: boolean;
      /** `--fork <id>`: a new session copying another's history (before `forkTurn`, else all of it). */
      fork?: string;
      forkTurn?: number;
      /** `--worktree [name]`: run in the git worktree `name` (created when missing; a generated name when absent). */
      worktree?: { name?: string };
    }
  | { kind: "config"; flags: SessionFlags }
  | { kind: "sessions"; flags: SessionFlags; all: boolean }
  | { kind: "inspect"; flags: SessionFlags; blobId: string; selector?: string }
  | { kind: "replay"; provider: ReplayProvider; file: string }
  | {
      kind: "rewind";
      flags: SessionFlags;
      /** Id or prefix; default the last session of this directory. */
      session?: string;
      /** Rewind to before this turn (1-based); default the last turn. */
      turn?: number;
      files: boolean;
      conversation: boolean;
      force: boolean;
      /** Only list the turns and rewinds (`--list`). */
      list: boolean;
    }
  | { kind: "demo"; keep: boolean }
  | {
      kind: "serve";
      /** Defaults for sessions that name no model (and the root their cwd must lie in). */
      flags: SessionFlags;
      /** 0 picks a free port. Default 8080. */
      port: number;
      /** Default 127.0.0.1. */
      host: string;
      /** `postgres://...` or a data directory; default `YOI_STORE`, else the local files. */
      store?: string;
      /** `--root DIR` (repeatable): sessions' directories must lie in one; default the `--cwd`. */
      roots: string[];
      /** `--trust-project DIR` (repeatable): project settings under DIR apply (for this server only). */
      trustProjects: string[];
      /** `--token-file FILE`: one user per line, `<name> <secret>`. */
      tokenFile?: string;
    }
  | { kind: "mcp"; flags: SessionFlags; action: "list" }
  /** `yoi setup [--provider p]`: save a checked API key; `yoi logout [--provider p]` removes saved keys. */
  | { kind: "setup"; flags: SessionFlags; provider?: string }
  | { kind: "logout"; flags: SessionFlags; provider?: string }
  /** `yoi permissions [remove <n>]`. */
  | { kind: "permissions"; flags: SessionFlags; remove?: string }
  /** `yoi acp`: an Agent Client Protocol agent on stdio (the editor gives each session's directory). */
  | { kind: "acp"; flags: SessionFlags }
  | { kind: "lsp"; flags: SessionFlags; action: "status" }
  | { kind: "worktree"; flags: SessionFlags; action: "list" }
  | { kind: "worktree"; flags: SessionFlags; action: "remove"; name: string; force: boolean };

export const SUBCOMMANDS = [
  "config",
  "sessions",
  "inspect",
  "rewind",
  "debug",
  "demo",
  "serve",
  "mcp",
  "permissions",
  "setup",
  "logout",
  "acp",
  "lsp",
  "worktree",
  "help",
] as const;

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
  print: { type: "boolean", short: "p" },
  continue: { type: "boolean", short: "c" },
  resume: { type: "string", short: "r" },
  model: { type: "string", short: "m" },
  "base-url": { type: "string" },
  output: { type: "string", short: "o" },
  cwd: { type: "string", short: "C" },
  "no-color": { type: "boolean" },
  provider: { type: "string" },
  all: { type: "boolean" },
  keep: { type: "boolean" },
  port: { type: "string" },
  host: { type: "string" },
  store: { type: "string" },
  root: { type: "string", multiple: true },
  "trust-project": { type: "string", multiple: true },
  "token-file": { type: "string" },
  "permission-mode": { type: "string" },
  "allow-tool": { type: "string", multiple: true },
  "deny-tool": { type: "string", multiple: true },
  "no-sandbox": { type: "boolean" },
  "dangerously-bypass-without-sandbox": { type: "boolean" },
  fork: { type: "string" },
  turn: { type: "string" },
  session: { type: "string" },
  files: { type: "boolean" },
  conversation: { type: "boolean" },
  force: { type: "boolean" },
  list: { type: "boolean" },
  worktree: { type: "string", short: "w" },
  "max-turns": { type: "string" },
  "append-system-prompt": { type: "string" },
  "add-dir": { type: "string", multiple: true },
} as const;

/** Flags that shape permissions, accepted wherever a session (or its config) is. */
const PERMISSION_OPTIONS = [
  "permission-mode",
  "allow-tool",
  "deny-tool",
  "no-sandbox",
  "dangerously-bypass-without-sandbox",
] as const;

/** Stands for `-r` given without an id (replaced before parsing; never a session id: ids have no spaces). */
const PICK = " pick";
/** Stands for `--worktree` given without a name (never a name: names have no spaces). */
const AUTO_WORKTREE = " auto";
/** What `--worktree` takes as its name when it follows; anything else (a prompt with spaces) is left alone. */
const WORKTREE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

type OptionName = keyof typeof OPTIONS;

/** Which options each command accepts (besides --help and --no-color). */
const ALLOWED: Record<string, readonly OptionName[]> = {
  chat: [
    "print",
    "continue",
    "resume",
    "model",
    "base-url",
    "output",
    "cwd",
    "fork",
    "turn",
    "worktree",
    "max-turns",
    "append-system-prompt",
    "add-dir",
    ...PERMISSION_OPTIONS,
  ],
  rewind: ["session", "turn", "files", "conversation", "force", "list", "cwd"],
  config: ["model", "base-url", "cwd", "max-turns", "add-dir", ...PERMISSION_OPTIONS],
  sessions: ["all", "cwd"],
  inspect: ["cwd"],
  "debug replay": ["provider"],
  demo: ["keep"],
  serve: [
    "port",
    "host",
    "store",
    "model",
    "base-url",
    "cwd",
    "root",
    "trust-project",
    "token-file",
    ...PERMISSION_OPTIONS,
  ],
  mcp: ["cwd"],
  permissions: ["cwd"],
  setup: ["provider", "cwd"],
  logout: ["provider"],
  acp: ["model", "base-url", "max-turns", "append-system-prompt", ...PERMISSION_OPTIONS],
  lsp: ["cwd"],
  worktree: ["cwd", "force"],
  help: [],
};

/** The options a subcommand takes (`debug` is `debug replay`), for its help; undefined for no such command. */
export function commandOptions(command: string): readonly string[] | undefined {
  const key = command === "debug" ? "debug replay" : command;
  return Object.hasOwn(ALLOWED, key) ? ALLOWED[key] : undefined;
}

/**
 * Parses `argv` (without node and the script). Throws a usage CliError with
 * one line naming what was wrong and what to do.
 */
export function parseCommand(argv: readonly string[]): Command {
  let parsed: ReturnType<
    typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; strict: true; tokens: true }>
  >;
  try {
    parsed = parseArgs({
      args: markBareResume(argv),
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (error) {
    throw usageError(describeParseError(error, argv));
  }
  const { values, positionals, tokens } = parsed;
  if (values.version) return { kind: "version" };
  const first = positionals[0];
  // A subcommand's name is a prompt in print mode (`yoi -p sessions`) or after `--` (`yoi -- sessions`).
  const isSub =
    first !== undefined &&
    (SUBCOMMANDS as readonly string[]).includes(first) &&
    values.print !== true &&
    !promptAfterTerminator(tokens);
  if (values.help) return { kind: "help", ...(isSub && first !== "help" ? { topic: first } : {}) };

  const flags: SessionFlags = {};
  if (values.model !== undefined) flags.model = nonEmpty("--model", values.model);
  if (values["base-url"] !== undefined) flags.baseURL = checkURL(values["base-url"]);
  if (values.cwd !== undefined) flags.cwd = nonEmpty("--cwd", values.cwd);
  if (values["permission-mode"] !== undefined)
    flags.permissionMode = nonEmpty("--permission-mode", values["permission-mode"]);
  if (values["allow-tool"] !== undefined)
    flags.allowTools = values["allow-tool"].map((r) => nonEmpty("--allow-tool", r));
  if (values["deny-tool"] !== undefined)
    flags.denyTools = values["deny-tool"].map((r) => nonEmpty("--deny-tool", r));
  if (values["no-sandbox"]) flags.noSandbox = true;
  if (values["dangerously-bypass-without-sandbox"]) flags.bypassWithoutSandbox = true;
  if (values["max-turns"] !== undefined) flags.maxTurns = maxTurns(values["max-turns"]);
  if (values["add-dir"] !== undefined) flags.addDirs = values["add-dir"].map((d) => nonEmpty("--add-dir", d));
  if (values["append-system-prompt"] !== undefined) {
    if (values["append-system-prompt"].trim() === "")
      throw usageError(
        '--append-system-prompt needs the text to add, e.g. --append-system-prompt "Answer in French."',
      );
    flags.appendSystem = values["append-system-prompt"];
  }

  const check = (command: string) => {
    const allowed = ALLOWED[command] ?? [];
    for (const name of Object.keys(values) as OptionName[]) {
      if (name === "help" || name === "no-color" || values[name] === undefined) continue;
      if (!allowed.includes(name)) {
        const where = command === "chat" ? "a chat session" : `yoi ${command}`;
        // `yoi -m x sessions` (options first) may have meant the one-word prompt; `yoi sessions -m x` did not.
        const prompt =
          command !== "chat" &&
          argv[0] !== command &&
          positionals.length === 1 &&
          (ALLOWED.chat ?? []).includes(name)
            ? `; for the prompt "${command}", put -- before it`
            : "";
        throw usageError(`--${name} does not apply to ${where}${prompt} (see yoi --help)`);
      }
    }
  };

  if (!isSub) {
    check("chat");
    const output = values.output ?? "text";
    if (!(OUTPUT_FORMATS as readonly string[]).includes(output)) {
      throw usageError(`--output must be one of ${OUTPUT_FORMATS.join(", ")}; got "${output}"`);
    }
    if (values.output !== undefined && !values.print) {
      throw usageError('--output applies to print mode; add -p (e.g. yoi -p --output json "...")');
    }
    if (values.continue && values.resume !== undefined) {
      throw usageError("use either -c (continue the last session) or --resume <id>, not both");
    }
    if (values.fork !== undefined && (values.continue || values.resume !== undefined)) {
      throw usageError("--fork starts a new session from another; it does not combine with -c or --resume");
    }
    if (values.turn !== undefined && values.fork === undefined) {
      throw usageError("--turn applies to --fork <id> (fork before that turn) and to yoi rewind");
    }
    const pick = values.resume === PICK;
    const prompt = positionals.join(" ");
    return {
      kind: "chat",
      flags,
      print: values.print === true,
      ...(prompt.trim() !== "" ? { prompt } : {}),
      output: output as OutputFormat,
      continueLast: values.continue === true,
      ...(values.resume !== undefined && !pick ? { resume: nonEmpty("--resume", values.resume) } : {}),
      ...(pick ? { pickResume: true } : {}),
      ...(values.fork !== undefined ? { fork: nonEmpty("--fork", values.fork) } : {}),
      ...(values.turn !== undefined ? { forkTurn: turnNumber(values.turn) } : {}),
      ...(values.worktree !== undefined
        ? { worktree: values.worktree === AUTO_WORKTREE ? {} : { name: values.worktree } }
        : {}),
    };
  }

  const rest = positionals.slice(1);
  switch (first) {
    case "help":
      check("help");
      return { kind: "help", ...(rest[0] !== undefined ? { topic: rest[0] } : {}) };
    case "config":
      check("config");
      noExtra("yoi config", rest, 0);
      return { kind: "config", flags };
    case "sessions":
      check("sessions");
      noExtra("yoi sessions", rest, 0);
      return { kind: "sessions", flags, all: values.all === true };
    case "inspect": {
      check("inspect");
      const [blobId, selector] = rest;
      if (blobId === undefined) {
        throw usageError("yoi inspect needs a blob id, e.g. yoi inspect 0193a1b2-... lines:1-40");
      }
      noExtra("yoi inspect", rest, 2);
      return { kind: "inspect", flags, blobId, ...(selector !== undefined ? { selector } : {}) };
    }
    case "rewind": {
      check("rewind");
      noExtra("yoi rewind", rest, 0);
      if (values.files && values.conversation) {
        throw usageError("--files and --conversation each restore only one; leave both out to restore both");
      }
      return {
        kind: "rewind",
        flags,
        ...(values.session !== undefined ? { session: nonEmpty("--session", values.session) } : {}),
        ...(values.turn !== undefined ? { turn: turnNumber(values.turn) } : {}),
        files: values.conversation !== true,
        conversation: values.files !== true,
        force: values.force === true,
        list: values.list === true,
      };
    }
    case "demo":
      check("demo");
      noExtra("yoi demo", rest, 0);
      return { kind: "demo", keep: values.keep === true };
    case "serve": {
      check("serve");
      noExtra("yoi serve", rest, 0);
      const port = Number(values.port ?? "8080");
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw usageError(`--port must be a port number (0-65535, 0 picks a free one); got "${values.port}"`);
      }
      return {
        kind: "serve",
        flags,
        port,
        host: values.host === undefined ? "127.0.0.1" : nonEmpty("--host", values.host),
        ...(values.store !== undefined ? { store: nonEmpty("--store", values.store) } : {}),
        roots: (values.root ?? []).map((r) => nonEmpty("--root", r)),
        trustProjects: (values["trust-project"] ?? []).map((r) => nonEmpty("--trust-project", r)),
        ...(values["token-file"] !== undefined
          ? { tokenFile: nonEmpty("--token-file", values["token-file"]) }
          : {}),
      };
    }
    case "mcp":
      check("mcp");
      if (rest[0] !== "list") {
        throw usageError(
          `yoi mcp takes one subcommand: list (got ${rest[0] === undefined ? "none" : `"${rest[0]}"`})`,
        );
      }
      noExtra("yoi mcp list", rest.slice(1), 0);
      return { kind: "mcp", flags, action: "list" };
    case "setup":
    case "logout": {
      check(first);
      noExtra(`yoi ${first}`, rest, 0);
      const provider =
        values.provider === undefined ? {} : { provider: nonEmpty("--provider", values.provider) };
      return { kind: first, flags, ...provider };
    }
    case "permissions": {
      check("permissions");
      if (rest.length === 0) return { kind: "permissions", flags };
      if (rest[0] !== "remove" || rest[1] === undefined) {
        throw usageError(
          `yoi permissions lists the rules; yoi permissions remove <n> removes approval n (got "${rest.join(" ")}")`,
        );
      }
      noExtra("yoi permissions remove", rest.slice(1), 1);
      return { kind: "permissions", flags, remove: rest[1] };
    }
    case "acp":
      check("acp");
      noExtra("yoi acp", rest, 0);
      return { kind: "acp", flags };
    case "lsp":
      check("lsp");
      if (rest[0] !== "status") {
        throw usageError(
          `yoi lsp takes one subcommand: status (got ${rest[0] === undefined ? "none" : `"${rest[0]}"`})`,
        );
      }
      noExtra("yoi lsp status", rest.slice(1), 0);
      return { kind: "lsp", flags, action: "status" };
    case "worktree":
      check("worktree");
      if (rest[0] === "list") {
        noExtra("yoi worktree list", rest.slice(1), 0);
        if (values.force) throw usageError("--force applies to yoi worktree remove <name>");
        return { kind: "worktree", flags, action: "list" };
      }
      if (rest[0] === "remove") {
        if (rest[1] === undefined)
          throw usageError("yoi worktree remove needs the worktree's name (yoi worktree list shows them)");
        noExtra("yoi worktree remove <name>", rest.slice(2), 0);
        return { kind: "worktree", flags, action: "remove", name: rest[1], force: values.force === true };
      }
      throw usageError(
        `yoi worktree takes one subcommand: list or remove <name> (got ${rest[0] === undefined ? "none" : `"${rest[0]}"`})`,
      );
    case "debug": {
      if (rest[0] !== "replay") {
        throw usageError(
          `yoi debug takes one subcommand: replay (got ${rest[0] === undefined ? "none" : `"${rest[0]}"`})`,
        );
      }
      check("debug replay");
      const provider = values.provider;
      if (provider === undefined) {
        throw usageError(`yoi debug replay needs --provider <${REPLAY_PROVIDERS.join("|")}>`);
      }
      if (!(REPLAY_PROVIDERS as readonly string[]).includes(provider)) {
        throw usageError(`--provider must be one of ${REPLAY_PROVIDERS.join(", ")}; got "${provider}"`);
      }
      const file = rest[1];
      if (file === undefined) {
        throw usageError("yoi debug replay needs a recorded stream file (one JSON payload per line)");
      }
      noExtra("yoi debug replay", rest.slice(1), 1);
      return { kind: "replay", provider: provider as ReplayProvider, file };
    }
    default:
      throw usageError(`unknown command "${first}"`);
  }
}

/** `-r`/`--resume` with no id after it (last, or followed by another option) becomes `--resume= pick`. */
/** True when `--` comes before the first word that is not an option or an option's value. */
function promptAfterTerminator(tokens: readonly { kind: string }[]): boolean {
  const positional = tokens.findIndex((t) => t.kind === "positional");
  const terminator = tokens.findIndex((t) => t.kind === "option-terminator");
  return terminator >= 0 && (positional < 0 || terminator < positional);
}

function markBareResume(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      out.push(...argv.slice(i));
      break;
    }
    const next = argv[i + 1];
    if ((arg === "-r" || arg === "--resume") && (next === undefined || next.startsWith("-"))) {
      out.push(`--resume=${PICK}`);
    } else if ((arg === "-w" || arg === "--worktree") && (next === undefined || !WORKTREE_NAME.test(next))) {
      out.push(`--worktree=${AUTO_WORKTREE}`);
    } else {
      out.push(arg);
    }
  }
  return out;
}

function turnNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw usageError(
      `--turn must be a turn number from 1 (see /rewind or yoi rewind's list); got "${value}"`,
    );
  }
  return n;
}

function noExtra(command: string, rest: readonly string[], max: number): void {
  if (rest.length > max) throw usageError(`${command}: unexpected argument "${rest[max]}"`);
}

function nonEmpty(flag: string, value: string): string {
  if (value.trim() === "") throw usageError(`${flag} needs a value`);
  return value;
}

function checkURL(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usageError(`--base-url must be an http(s) URL like http://127.0.0.1:11434/v1; got "${value}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw usageError(`--base-url must be an http(s) URL like http://127.0.0.1:11434/v1; got "${value}"`);
  }
  return value;
}

/** `--max-turns`: a whole number of model calls, at least 1. */
function maxTurns(value: string): number {
  const n = /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw usageError(
      `--max-turns must be a whole number of model calls, 1 or more (e.g. --max-turns 10); got "${value}"`,
    );
  }
  return n;
}

/** Turns node:util's parse errors into one line that names the flag. */
function describeParseError(error: unknown, argv: readonly string[]): string {
  const code = (error as { code?: string }).code;
  const message = errorMessage(error);
  // node names options as '-m, --model <value>' or '--foo'; show the long form.
  const quoted = /'([^']+)'/.exec(message)?.[1] ?? "";
  const flag = /--[\w-]+/.exec(quoted)?.[0] ?? /-\w/.exec(quoted)?.[0];
  switch (code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION": {
      const unknown = flag ?? guessFlag(argv);
      const instead = insteadOf(unknown);
      return `unknown option ${unknown}${instead ? `; did you mean ${instead}?` : ""} (see yoi --help)`;
    }
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE": {
      const name = flag ?? "an option";
      if (/argument missing/.test(message)) return `${name} needs a value (see yoi --help)`;
      // `--fork -p x`: what follows the option is another option, so its value is missing.
      if (/argument is ambiguous/.test(message)) {
        const at = argv.findIndex((a) => a === flag || a === quoted);
        const next = at < 0 ? undefined : argv[at + 1];
        return `${name} needs a value${next === undefined ? "" : `; ${next} after it is an option`} (see yoi --help)`;
      }
      return `${name} does not take a value (see yoi --help)`;
    }
    default:
      return `${message.split("\n")[0]} (see yoi --help)`;
  }
}

/**
 * What other agent CLIs call an option yoi has under another name (Claude
 * Code's, Gemini CLI's), for people who bring their habits.
 */
const OTHER_CLIS: Record<string, string> = {
  "--output-format": "--output",
  "--allowedTools": "--allow-tool",
  "--allowed-tools": "--allow-tool",
  "--disallowedTools": "--deny-tool",
  "--disallowed-tools": "--deny-tool",
  "--dangerously-skip-permissions": "--permission-mode bypassPermissions",
  "--yolo": "--permission-mode bypassPermissions",
};

/** The option an unknown one was most likely meant as: another CLI's name for it, or the nearest of ours. */
function insteadOf(unknown: string): string | undefined {
  const name = unknown.split("=", 1)[0] ?? unknown;
  if (Object.hasOwn(OTHER_CLIS, name)) return OTHER_CLIS[name];
  if (!name.startsWith("--")) return undefined;
  const near = closest(name.slice(2), Object.keys(OPTIONS));
  return near === undefined ? undefined : `--${near}`;
}

function guessFlag(argv: readonly string[]): string {
  return argv.find((a) => a.startsWith("-")) ?? "";
}
