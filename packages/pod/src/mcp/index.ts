export { trackedChildren } from "./child-reaper.ts";
export { expandVars, MissingVariableError } from "./expand-vars.ts";
export {
  MCP_STARTUP_TIMEOUT_MS,
  type McpPromptInfo,
  type McpServerState,
  type McpToolInfo,
} from "./mcp-connection.ts";
export {
  McpManager,
  type McpManagerOptions,
  type McpPromptCommand,
  type McpResourceText,
  type McpServerStatus,
  promptArguments,
} from "./mcp-manager.ts";
export { parseResourceRef, resolveResourceRef } from "./resource-ref.ts";
export { MCP_PREFIX, mcpName } from "./tool-name.ts";
export { type McpCallResult, toToolReturn } from "./tool-result.ts";
