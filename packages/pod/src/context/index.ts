export {
  type AutoReadOptions,
  type AutoReadResult,
  insertAfterSummary,
  reattachFiles,
  renderAutoRead,
} from "./auto-read.ts";
