export { bashPrefixRule, bashPrefixRules } from "./bash-prefix-rule.ts";
export { PERMISSION_DEFAULTS } from "./defaults.ts";
export { PermissionModeError, type PermissionSettingErrorCode } from "./mode-error.ts";
export {
  MODE_CYCLE,
  type PermissionDecider,
  type PermissionDecision,
  type PermissionDenial,
  type PermissionEdit,
  type PermissionEvaluation,
  type PermissionOutcome,
  PermissionPolicy,
  type PermissionPolicyOptions,
  type PermissionPrefixGrant,
  type PermissionPrompt,
  type PermissionRequest,
  type PermissionRuleInfo,
  type PlanApproval,
  primaryArgument,
  type SandboxStatus,
  type SessionGrant,
} from "./policy.ts";
export { formatRuleSpec, parseRuleSpec } from "./rule-syntax.ts";
export { analyzeShell, type ShellAnalysis, type ShellWrite } from "./shell-parse.ts";
