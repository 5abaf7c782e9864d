import { readdir, readFile } from "node:fs/promises";
import * as path from "node:path";
import { errorMessage } from "@yoi/manifest/errors";
import { type AgentDefinition, AgentDefinitionError, parseAgentFile } from "./agent-definition.ts";

export interface LoadedAgents {
  /** By name; a later directory's agent replaces an earlier one of the same name. */
  agents: Map<string, AgentDefinition>;
  /** Files that could not be used, one line each (for alerts). */
  problems: AgentDefinitionError[];
}

/**
 * Reads `*.md` agent files from `dirs` in order (user's first, then the
 * project's, so the project wins). A missing directory is not an error.
 */
export async function loadAgents(dirs: readonly string[]): Promise<LoadedAgents> {
  const agents = new Map<string, AgentDefinition>();
  const problems: AgentDefinitionError[] = [];
  let parseYaml: ((source: string) => unknown) | undefined;
  for (const dir of dirs) {
    let names: string[];
    try {
      names = (await readdir(dir)).filter((n) => n.endsWith(".md")).sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      problems.push(
        new AgentDefinitionError("io", dir, `cannot list ${dir}: ${errorMessage(error)}`, { cause: error }),
      );
      continue;
    }
    for (const file of names) {
      const full = path.join(dir, file);
      try {
        const text = await readFile(full, "utf8");
        // Loaded only when there is an agent file to read.
        parseYaml ??= (await import("yaml")).parse;
        const agent = parseAgentFile(text, { name: file.slice(0, -3), path: full }, parseYaml);
        agents.set(agent.name, agent);
      } catch (error) {
        problems.push(
          AgentDefinitionError.isInstance(error)
            ? error
            : new AgentDefinitionError("io", full, `cannot read ${full}: ${errorMessage(error)}`, {
                cause: error,
              }),
        );
      }
    }
  }
  return { agents, problems };
}

/** Where agent files live: `~/.yoi/agents` then `<project>/.yoi/agents`. */
export function agentDirs(projectRoot: string, home: string): string[] {
  const user = path.join(home, ".yoi", "agents");
  const project = path.join(projectRoot, ".yoi", "agents");
  return user === project ? [project] : [user, project];
}
