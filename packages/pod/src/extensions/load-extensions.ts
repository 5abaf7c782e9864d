/** Custom commands and skills of a project and its user, loaded together at session start. */
import { type CustomCommand, type ExtensionDirs, type ExtensionProblem, loadCommands } from "./commands.ts";
import { loadSkills, type Skill } from "./skills.ts";

export interface Extensions {
  commands: CustomCommand[];
  skills: Skill[];
  /** Files that could not be used, each with one message. */
  problems: ExtensionProblem[];
}

export async function loadExtensions(dirs: ExtensionDirs): Promise<Extensions> {
  const [commands, skills] = await Promise.all([loadCommands(dirs), loadSkills(dirs)]);
  return {
    commands: commands.commands,
    skills: skills.skills,
    problems: [...commands.problems, ...skills.problems],
  };
}
