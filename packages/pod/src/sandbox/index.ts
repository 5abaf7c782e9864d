export { bwrapArgs } from "./bwrap.ts";
export { detectSandbox, expectSandbox, isSandbox } from "./detect.ts";
export { PLAN_MODE_NOTE, type PodSandbox, SANDBOX_NOTICE_TAIL, SessionSandbox } from "./pod-sandbox.ts";
export {
  PROTECTED_DIRS,
  PROTECTED_FILES,
  protectedPathReason,
  type RootProtection,
  rootProtection,
} from "./protected-paths.ts";
export type { Sandbox, SandboxedCommand, SandboxPolicy, SandboxUnavailable } from "./sandbox.ts";
export { seatbeltProfile } from "./seatbelt.ts";
