export {
  type AutoReadOptions,
  type AutoReadResult,
  type CompactingPolicy,
  insertAfterSummary,
  renderAutoRead,
  withAutoRead,
} from "./auto-read.ts";
