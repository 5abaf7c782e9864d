export { clientFromConfig } from "./client-from-config.ts";
export type { ModelTarget } from "./session-model.ts";
