export {
  type CustomCommand,
  type ExtensionProblem,
  type ExtensionSource,
  expandCommand,
  loadCommands,
  RESERVED_COMMANDS,
} from "./commands.ts";
export { ConfiguredHooks } from "./configured-hooks.ts";
export { FrontMatterError } from "./front-matter.ts";
export { HOOK_TIMEOUT_MS } from "./hook-runner.ts";
export { type Extensions, loadExtensions } from "./load-extensions.ts";
export { loadSkills, SKILL_TOOL_NAME, type Skill } from "./skills.ts";
