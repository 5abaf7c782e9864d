export {
  AGENT_NAME_PATTERN,
  type AgentDefinition,
  AgentDefinitionError,
  type AgentDefinitionErrorCode,
  parseAgentFile,
} from "./agent-definition.ts";
export { agentDirs, type LoadedAgents, loadAgents } from "./load-agents.ts";
