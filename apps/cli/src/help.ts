/** `yoi --help` text. Plain text (no colour), so it pipes cleanly. */
export const HELP = `yoi — an agent for your code

Usage:
  yoi [prompt]                    interactive session in the current directory
  yoi -p "prompt"                 run one prompt to the end and print the answer
  yoi -- sessions                 a prompt that is a subcommand's name (with -p it is one anyway)
  yoi -p "/review [base]"         review the uncommitted changes (or base...HEAD and them) with a read-only subagent
  echo "prompt" | yoi             the same, prompt from stdin
  yoi -c | yoi --resume <id>      continue the last session here | a chosen one (any unique id prefix)
  yoi -r                          choose the session to continue from a list
  yoi -w, --worktree [name]       run in the git worktree .yoi/worktrees/<name> on branch yoi/<name>
                                  (created from HEAD, or reused; a name is generated when none follows)
  yoi worktree list | remove <name> [--force]
                                  yoi's worktrees and their uncommitted changes | remove one (refused
                                  while it has uncommitted changes unless --force; its branch stays)
  yoi --fork <id> [--turn N]      a new session copying another's conversation (before turn N)
  yoi sessions [--all]            sessions of this directory, forks under their parent
                                  (--all: every directory, and runs that failed before any answer)
  yoi rewind [--session <id>] [--turn N] [--files|--conversation] [--force] [--list]
                                  put files and conversation back to before a turn (default: the
                                  last session here, before its last turn); --force overwrites
                                  files changed outside yoi since; --list shows the turns
  yoi inspect <blob-id> [sel]     read a stored tool output (sel: lines:20-50, slice:0..10, key:name)
  yoi setup [--provider p]        save an API key (checked, ~/.yoi/credentials.json; env variables win)
  yoi logout [--provider p]       remove saved keys
  yoi config                      the effective configuration and where each value comes from
  yoi mcp list                    the configured MCP servers, their state and tools
  yoi permissions [remove <n>]    permission rules and this project's lasting approvals, with their
                                  sources; remove <n> takes an approval back
  yoi lsp status                  the language servers whose diagnostics follow each edit: found, starting, ready
  yoi debug replay --provider <anthropic|openai-chat|openai-responses|gemini> <file>
                                  replay a recorded stream, print normalized events as JSON lines
  yoi demo                        a scripted session on a local fake provider (no API key needed)
  yoi acp [-m <model>] [--permission-mode <mode>] ...
                                  an Agent Client Protocol agent on stdio, for editors (Zed, JetBrains,
                                  Neovim); see the README
  yoi serve [--port 8080] [--host 127.0.0.1] [--store postgres://user@host/db] [--root DIR]...
            [--trust-project DIR]... [--token-file FILE] [permission flags]
                                  HTTP API hosting sessions (YOI_STORE, YOI_SERVE_TOKEN; see the README)

Options:
  -m, --model <provider>/<model>  e.g. anthropic/claude-sonnet-4-5, openai/gpt-5, gemini/gemini-2.5-pro,
                                  openai-chat/llama3.1 (any OpenAI-compatible server); a catalog name alone
                                  (gpt-5, claude-sonnet-4-5) picks its provider
      --base-url <url>            API base URL for the model's provider (OpenAI-compatible: include /v1)
  -p, --print                     print mode: no UI, answer on stdout
  -o, --output <format>           print mode output: text (default), json, stream-json (one event a line)
  -c, --continue                  continue the last session of this directory
  -r, --resume [id]               continue a session by id or id prefix (see yoi sessions); no id: pick one
  -C, --cwd <dir>                 project directory (the scope root); default: the current directory
      --max-turns <n>             most model calls one prompt may take (default 50; config worker.maxTurns)
      --add-dir <dir>             another directory the session may read and write (repeatable)
      --append-system-prompt <text>
                                  add text to the end of the system prompt for this run (not kept by -c)
      --permission-mode <mode>    default (writes and bash ask), acceptEdits, plan (read-only), bypassPermissions
      --allow-tool <rule>         allow a tool or command, e.g. edit_file, mcp__*, "bash(git status *)"; repeatable
      --deny-tool <rule>          deny one, same syntax; a deny always wins over an allow
      --no-sandbox                run bash without the OS sandbox (bubblewrap / sandbox-exec)
      --dangerously-bypass-without-sandbox
                                  let bypassPermissions run where no sandbox is active
      --no-color                  no colours (also NO_COLOR=1, or when output is not a terminal)
  -h, --help                      this help
  -v, --version                   the version

Environment:
  ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL       Anthropic
  OPENAI_API_KEY, OPENAI_BASE_URL             OpenAI (also OpenAI-compatible servers)
  GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL      Gemini
  YOI_MODEL                                   default model; more YOI_* variables: see yoi config
  Config files: ~/.yoi/config.jsonc (user), .yoi/config.jsonc (project).

Interactive:
  / opens the command menu and @ a fuzzy file finder as you type (Tab completes too); Shift+Enter,
  Alt+Enter or a trailing \\ adds a line; Up/Down and Ctrl-R search this project's history
  (~/.yoi/history); !cmd runs your command (no question, in the sandbox) and shows the model its output;
  Shift+Tab cycles the permission mode; Esc or Ctrl-C cancels the running turn; Ctrl-O shows the last
  tool's output; Ctrl-C twice at the prompt exits.
  /help /compact [focus] /clear /cost /status /permissions /init /sessions /resume [id] /model [ref]
  /rewind [N] /undo /fork [N] /diff [session] /review [base] /mcp /bashes /vim /lsp /exit,
  your commands (.yoi/commands/*.md)
  AGENTS.md files (scope root down to the working directory, and ~/.yoi/AGENTS.md) go into the system prompt.
  @<server>:<uri> attaches an MCP resource

Exit codes:
  0    success
  1    model or runtime error (provider error, unreachable server, wrong key, failed run)
  2    bad usage (unknown flag, missing argument, bad configuration, unknown model)
  75   rate limited until a reset time later than yoi waits (printed; retry.maxRetryAfterMs in the config)
  130  cancelled (Ctrl-C)
`;

/**
 * `yoi <command> --help` (or `yoi help <command>`): the lines of the help
 * about that command, and the general options it takes; undefined when no
 * line of the help is about it.
 */
export function topicHelp(command: string, options: readonly string[]): string | undefined {
  const usage = entries(section("Usage:")).filter((e) =>
    new RegExp(`^ {2}yoi ${command}( |$)`).test(e[0] ?? ""),
  );
  if (usage.length === 0) return undefined;
  const flags = entries(section("Options:")).filter((e) =>
    options.some((name) => new RegExp(`--${name}( |,|$)`).test(e[0] ?? "")),
  );
  const parts = [`Usage:\n${usage.map((e) => e.join("\n")).join("\n")}`];
  if (flags.length > 0) parts.push(`Options:\n${flags.map((e) => e.join("\n")).join("\n")}`);
  parts.push("yoi --help lists every command.");
  return `${parts.join("\n\n")}\n`;
}

/** The lines of a section of the help, after its title, up to the blank line that ends it. */
function section(title: string): string[] {
  const lines = HELP.split("\n");
  const start = lines.indexOf(title);
  if (start === -1) return [];
  const end = lines.indexOf("", start);
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

/** A section's lines grouped into entries: a line starting near the margin, then its further lines, further in. */
function entries(lines: readonly string[]): string[][] {
  const out: string[][] = [];
  for (const line of lines) {
    if (/^ {2,8}\S/.test(line) || out.length === 0) out.push([line]);
    else out.at(-1)?.push(line);
  }
  return out;
}
