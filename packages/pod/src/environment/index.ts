export type { GitAbsence, GitState } from "./git-state.ts";
export {
  branchLabel,
  ENVIRONMENT_HEADING,
  type EnvironmentOptions,
  type EnvironmentSnapshot,
  renderEnvironment,
  SessionEnvironment,
} from "./session-environment.ts";
