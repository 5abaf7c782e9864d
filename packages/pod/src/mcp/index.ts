export { expandVars, MissingVariableError } from "./expand-vars.ts";
export type { InProcessMcpServer, McpServerState } from "./mcp-connection.ts";
export {
  McpManager,
  type McpManagerOptions,
  type McpPromptCommand,
  type McpServerStatus,
} from "./mcp-manager.ts";
export { MCP_PREFIX, mcpName } from "./tool-name.ts";
