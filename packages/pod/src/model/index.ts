export type { ModelTarget } from "./session-model.ts";
