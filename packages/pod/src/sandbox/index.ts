export { bwrapArgs, bwrapSandbox } from "./bwrap.ts";
export { detectSandbox, isSandbox } from "./detect.ts";
export { PLAN_MODE_NOTE, type PodSandbox, podSandbox } from "./pod-sandbox.ts";
export type { Sandbox, SandboxedCommand, SandboxPolicy, SandboxUnavailable } from "./sandbox.ts";
export { seatbeltProfile, seatbeltSandbox } from "./seatbelt.ts";
