export type { ModelTarget } from "./session-model.ts";
export { type ModelUsage, UsageLedger } from "./usage-ledger.ts";
