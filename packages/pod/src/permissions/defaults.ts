/**
 * What each built-in tool may do when no permission rule matches: the
 * tools that only read run, the ones that write or run commands ask, and
 * `"*"` covers every other tool (MCP servers' and custom ones). The tools
 * are the pod's, so their defaults are too; the config's
 * `permissions.default` only overrides them.
 */
import type { PermissionAction } from "@yoi/manifest";

export const PERMISSION_DEFAULTS: Readonly<Record<string, PermissionAction>> = Object.freeze({
  read_file: "allow",
  list_dir: "allow",
  glob: "allow",
  grep: "allow",
  inspect: "allow",
  tool_output_cache: "allow",
  tool_output_cache_grep: "allow",
  skill: "allow",
  todo_write: "allow",
  task: "allow",
  // They only read or stop what an approved bash call started.
  bash_output: "allow",
  kill_bash: "allow",
  write_file: "ask",
  edit_file: "ask",
  bash: "ask",
  web_fetch: "ask",
  // Runs at the model's provider: offered only where allowed (docs/design/web-search.md).
  web_search: "ask",
  "*": "ask",
});

/**
 * Tools that ask by default yet only read, so plan mode keeps them:
 * web_search changes nothing here (the provider searches the web).
 */
export const READ_ONLY_ASKING_TOOLS: readonly string[] = Object.freeze(["web_search"]);
