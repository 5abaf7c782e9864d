export {
  type CanUseTool,
  type CanUseToolContext,
  QueryError,
  type QueryErrorCode,
  type QueryMessage,
  type QueryOptions,
  query,
  type ToolPermission,
} from "./query.ts";
