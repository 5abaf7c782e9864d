export {
  BACKGROUND_KEEP_BYTES,
  BACKGROUND_MAX_WAIT_MS,
  type BackgroundRead,
  type BackgroundShellInfo,
  BackgroundShells,
  type BackgroundState,
  UnknownBackgroundShell,
} from "./background-shells.ts";
export { BASH_OUTPUT_TOOL_NAME, backgroundStatus, KILL_BASH_TOOL_NAME } from "./background-tools.ts";
export { BASH_MAX_TIMEOUT_MS, type BashToolOptions, bashTool, defaultBashEnv } from "./bash.ts";
export {
  type BuiltinToolsOptions,
  createBuiltinTools,
  MUTATING_TOOLS,
  READ_ONLY_TOOLS,
} from "./builtin-tools.ts";
export { EXIT_PLAN_MODE_TOOL_NAME, exitPlanModeTool, type PlanModeState } from "./exit-plan-mode.ts";
export type { GrepToolOptions } from "./grep.ts";
export {
  type SubagentEventInfo,
  type SubagentResult,
  TASK_TOOL_NAME,
  type TaskToolOptions,
  taskTool,
} from "./task.ts";
export {
  parseTodos,
  renderTodos,
  TODO_MESSAGE_HEADER,
  type TodoItem,
  TodoList,
  type TodoStatus,
} from "./todo-list.ts";
export { todoWriteTool } from "./todo-write.ts";
export { DEFAULT_SKIP_DIRS, type WalkEntry, type WalkOptions, walk } from "./walk.ts";
export { WEB_FETCH_TOOL_NAME, type WebFetchOptions, webFetchHost, webFetchTool } from "./web-fetch.ts";
export { WEB_SEARCH_TOOL_NAME, type WebSearchOfferOptions, webSearchOffer } from "./web-search.ts";
