export type { Collector } from "./collector.ts";
export {
  onTextDelta,
  onThinkingDelta,
  onToolCallAbort,
  onToolCallComplete,
  onToolCallDelta,
  onToolCallStart,
} from "./collectors/callbacks.ts";
export { createStatusCollector, type StatusResult } from "./collectors/status.ts";
export { createTextCollector, type TextBlock, type TextResult } from "./collectors/text.ts";
export {
  type TextBlockCallbacks,
  type TextBlockScope,
  type TextualKind,
  textBlockHandler,
} from "./collectors/text-blocks.ts";
export {
  type AbortedThinking,
  createThinkingCollector,
  type ThinkingBlock,
  type ThinkingResult,
} from "./collectors/thinking.ts";
export {
  type AbortedToolCall,
  completeToolCall,
  createToolCallCollector,
  type ToolCall,
  type ToolCallCallbacks,
  type ToolCallScope,
  type ToolCallStart,
  type ToolCallsResult,
  toolCallHandler,
  toolCallStart,
} from "./collectors/tool-calls.ts";
export {
  createTurnCollector,
  type TurnAbortedBlock,
  type TurnBlock,
  type TurnResult,
  type TurnServerToolBlock,
  type TurnTextBlock,
  type TurnThinkingBlock,
  type TurnToolCallBlock,
} from "./collectors/turn.ts";
export { createUsageCollector, mergeUsage, type UsageCollectorOptions } from "./collectors/usage.ts";
export type { BlockHandler, Handler, HandlerError, MetaHandler, Unsubscribe } from "./handler.ts";
export {
  BLOCK_KINDS,
  type BlockAbortPhase,
  type BlockKind,
  type BlockPhase,
  type BlockStartOf,
  type BlockStartPhase,
  type BlockStopPhase,
  type DeepReadonly,
  isBlockKind,
  isMetaKind,
  type Kind,
  type KindEvent,
  type KindEventMap,
  META_KINDS,
  type MetaKind,
  type TextBlockEvent,
  type ThinkingBlockEvent,
  type ToolUseBlockEvent,
} from "./kinds.ts";
export { DEFAULT_END_REASON, Timeline, type TimelineOptions } from "./timeline.ts";
export { type ParsedToolArguments, parseToolArguments } from "./tool-arguments.ts";
