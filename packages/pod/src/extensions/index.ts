export {
  type CustomCommand,
  type ExtensionDirs,
  type ExtensionProblem,
  type ExtensionSource,
  expandCommand,
  loadCommands,
  RESERVED_COMMANDS,
} from "./commands.ts";
export { ConfiguredHooks, type ConfiguredHooksOptions } from "./configured-hooks.ts";
export { FrontMatterError, parseFrontMatter } from "./front-matter.ts";
export { HOOK_TIMEOUT_MS, type HookRun, runHook } from "./hook-runner.ts";
export { type Extensions, loadExtensions } from "./load-extensions.ts";
export { createSkillTool, loadSkills, SKILL_TOOL_NAME, type Skill, skillsPrompt } from "./skills.ts";
