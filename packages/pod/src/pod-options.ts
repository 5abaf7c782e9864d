/** What a Pod is opened with (`Pod.create`, `Pod.restore`). */

import type { LlmClient } from "@yoi/llm-client";
import type { BlobStore, Hook, Interceptor, Tool } from "@yoi/llm-worker";
import type { Config, Credentials, PermissionMode } from "@yoi/manifest";
import type { CreateSessionOptions, FsyncPolicy, SessionStore } from "@yoi/worker-persistence";
import type { ScanLimits } from "./checkpoints/scope-scan.ts";
import type { AutoReadOptions } from "./context/auto-read.ts";
import type { EnvironmentOptions } from "./environment/session-environment.ts";
import type { FileAccess } from "./fs/file-access.ts";
import type { InstructionsOptions } from "./instructions/project-instructions.ts";
import type { InProcessMcpServer } from "./mcp/mcp-connection.ts";
import type { PermissionPrompt } from "./permissions/policy.ts";
import type { Sandbox } from "./sandbox/sandbox.ts";
import type { BashToolOptions } from "./tools/bash.ts";
import type { GrepToolOptions } from "./tools/grep.ts";
import type { WebFetchOptions } from "./tools/web-fetch.ts";

export interface PodOptions {
  /** The effective config (`loadConfig().config`). Default: every default (`ConfigSchema.parse({})`). */
  config?: Config;
  /** Working directory; `scope.root` resolves against it. Default `process.cwd()`. */
  cwd?: string;
  /** Where sessions (`<dataDir>/sessions`) and blobs (`<dataDir>/blobs`) live. Default `session.dir`, else `~/.yoi`. */
  dataDir?: string;
  /** The model client. Default: `createClient` for `config.model` (key from `providers.<p>.apiKeyEnv`). */
  client?: LlmClient;
  /** Environment for API keys. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Saved keys by variable name (`readCredentials` of @yoi/manifest), used
   * when the variable is not set in `env`. They reach the model clients
   * only: never bash, hooks or MCP servers.
   */
  credentials?: Credentials;
  /** The UI's permission callback. Without one, every `ask` denies (fail closed). */
  ask?: PermissionPrompt;
  /** System prompt. Default: a short one naming the project root and the tools. */
  system?: string;
  /**
   * Text added to the end of the system prompt (the default one or `system`),
   * before the project instructions: a caller's standing orders for this
   * session ("answer in French", "never run the tests").
   */
  appendSystem?: string;
  /** More tools, after the built-ins. */
  tools?: readonly Tool[];
  /** Public read-only hooks, run after the permission hook. */
  hooks?: readonly Hook[];
  /** Full-power interceptors, run after the pod's own. */
  interceptors?: readonly Interceptor[];
  /** Session log fsync policy. Default `"turn"`. */
  fsync?: FsyncPolicy;
  /** Files re-attached after a compaction, or `false` for none. */
  autoRead?: AutoReadOptions | false;
  /**
   * Project instructions (AGENTS.md / CLAUDE.md from the scope root down to
   * `cwd`, plus `~/.yoi/AGENTS.md`), appended to the system prompt and
   * re-read before each run; `false` reads none. Default: on.
   */
  instructions?: InstructionsOptions | false;
  /**
   * The environment section of the system prompt (today's date, the OS and
   * shell, the scope root, and in a git repository the branch, a short
   * status and the last commits), read again before each run; `false`
   * leaves it out. Default: on.
   */
  environment?: EnvironmentOptions | false;
  /**
   * Language-server diagnostics after write_file and edit_file (config
   * `lsp`). `false` turns them off for this session whatever the config
   * says. Default: on as the config says.
   */
  lsp?: false;
  /** Context window for compaction instead of the catalog's (models the catalog lacks, tests). */
  contextWindow?: number;
  /** Blob store. Default: an FsBlobStore in `<dataDir>`. */
  blobStore?: BlobStore;
  /**
   * Where the session log lives. Default: the JSONL files in `<dataDir>`
   * (with `fsync`); `yoi serve` passes a PostgreSQL store.
   */
  sessionStore?: SessionStore;
  /**
   * Where read_file, edit_file and write_file read and write file text
   * instead of the disk (an editor's buffers: `yoi acp`), after the scope
   * check and the read-before-write guard. Default: the disk.
   */
  fileAccess?: FileAccess;
  /** Options of the bash tool, or `false` to leave it out. */
  bash?: false | Omit<BashToolOptions, "fs">;
  /** Options of the grep tool (the regex time limit, default 10 s per file). */
  grep?: GrepToolOptions;
  /** Permission mode to start in. Default `config.permissions.mode`. */
  permissionMode?: PermissionMode;
  /** Source of each `config.permissions.rules` entry (a file, `flag:--deny-tool`), for messages. */
  permissionSources?: readonly (string | undefined)[];
  /** The explicit opt-in that allows bypassPermissions without a sandbox. Default false. */
  allowUnsandboxedBypass?: boolean;
  /**
   * The OS sandbox bash runs in, or `false` for none (an explicit opt-out:
   * bash runs unconfined without asking for every command). Default: the
   * machine's (bubblewrap, sandbox-exec) unless the config says `sandbox: false`.
   */
  sandbox?: Sandbox | false;
  /** Options of `web_fetch`, or `false` to leave it out. */
  webFetch?: false | WebFetchOptions;
  /**
   * `false`: never offer the `web_search` tool. Otherwise it is offered
   * where the model's provider searches on its side (the catalog's
   * `webSearch`) and the permissions allow it (docs/design/web-search.md).
   */
  webSearch?: false;
  /** Directories of named agents (`*.md`). Default: `~/.yoi/agents`, then `<root>/.yoi/agents`. */
  agentDirs?: readonly string[];
  /**
   * Session id of a new session. Default: a new UUID v7. The log file is
   * created on the first input (`run`), so a pod that is opened and closed
   * without input leaves nothing on disk.
   */
  sessionId?: string;
  /** Checkpoints of what tools change (for rewinds), or `false` for none. Default on, bash scanned. */
  checkpoints?: false | { scanBash?: boolean; scanLimits?: ScanLimits };
  /** More facts for a new session's session_start record, so a resume can use them. */
  sessionStart?: Pick<CreateSessionOptions, "baseURL" | "permissionMode">;
  /**
   * MCP servers in this process, by name (an `McpServer` of
   * `@modelcontextprotocol/sdk` with its tools registered): connected over an
   * in-memory transport beside `config.mcpServers` (replacing an entry of the
   * same name), their tools offered as `mcp__<name>__<tool>` and asked about
   * like any MCP tool's.
   */
  mcpServers?: Readonly<Record<string, InProcessMcpServer>>;
  /**
   * How long the first input waits for MCP servers still starting (they
   * start in parallel when the pod opens; one that takes longer joins the
   * run at its next model request). Default 10000 ms.
   */
  mcpStartWaitMs?: number;
  /**
   * Custom commands (`.yoi/commands/`) and skills (`.yoi/skills/`) of the
   * project root and of `homeDir`. Default: none loaded (an embedding
   * application opts in; the CLI does). Hooks come from `config.hooks`.
   */
  extensions?: { homeDir: string } | false;
}
