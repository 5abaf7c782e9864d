/**
 * The pod's built-in tools, all through ScopedFs: read_file, list_dir,
 * glob, grep, write_file, edit_file and bash (with bash_output and
 * kill_bash when background commands are on).
 */
import type { Tool } from "@yoi/llm-worker";
import type { PodFsView } from "../fs/fs-view.ts";
import { KeyedMutex } from "../fs/keyed-mutex.ts";
import { ReadTracker } from "../fs/read-tracker.ts";
import { bashOutputTool, killBashTool } from "./background-tools.ts";
import { type BashToolOptions, bashTool } from "./bash.ts";
import type { BuiltinToolDeps } from "./deps.ts";
import { editFileTool } from "./edit-file.ts";
import { globTool } from "./glob.ts";
import { type GrepToolOptions, grepTool } from "./grep.ts";
import { listDirTool } from "./list-dir.ts";
import { readFileTool } from "./read-file.ts";
import { writeFileTool } from "./write-file.ts";

/** Names of the tools that only read (allowed by default permissions). */
export const READ_ONLY_TOOLS: readonly string[] = ["read_file", "list_dir", "glob", "grep"];
/** Names of the tools that change files or run commands (ask by default). */
export const MUTATING_TOOLS: readonly string[] = ["write_file", "edit_file", "bash"];

export interface BuiltinToolsOptions {
  view: PodFsView;
  /** The session's read tracker (shared with the pod for auto-read). Default: a new one. */
  reads?: ReadTracker;
  /** Options of `bash`, or `false` to leave it out. */
  bash?: false | Omit<BashToolOptions, "fs">;
  /** Options of `grep` (the regex time limit). */
  grep?: GrepToolOptions;
  /** Leave out write_file and edit_file (a read-only session). Default false. */
  readOnly?: boolean;
  /** Why read_file cannot return images to the current model (see `BuiltinToolDeps.imageRefusal`). */
  imageRefusal?: () => string | undefined;
  /** What write_file and edit_file append to their results (see `BuiltinToolDeps.diagnostics`). */
  diagnostics?: BuiltinToolDeps["diagnostics"];
}

export function createBuiltinTools(options: BuiltinToolsOptions): Tool[] {
  const deps: BuiltinToolDeps = {
    view: options.view,
    reads: options.reads ?? new ReadTracker(),
    writeLocks: new KeyedMutex(),
    ...(options.imageRefusal ? { imageRefusal: options.imageRefusal } : {}),
    ...(options.diagnostics ? { diagnostics: options.diagnostics } : {}),
  };
  const tools: Tool[] = [readFileTool(deps), listDirTool(deps), globTool(deps), grepTool(deps, options.grep)];
  if (!options.readOnly) tools.push(writeFileTool(deps), editFileTool(deps));
  if (options.bash !== false) {
    tools.push(bashTool({ ...(options.bash ?? {}), fs: options.view.fs }));
    // Background commands: followed and stopped with these two.
    const background = options.bash?.background;
    if (background !== undefined) tools.push(bashOutputTool(background), killBashTool(background));
  }
  return tools;
}
