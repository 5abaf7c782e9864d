export { directoryChain, INSTRUCTION_FILE_NAMES } from "./instruction-files.ts";
export {
  INSTRUCTIONS_HEADING,
  type InstructionFile,
  type InstructionProblem,
  type InstructionsOptions,
  type InstructionsSnapshot,
  ProjectInstructions,
  render as renderInstructions,
} from "./project-instructions.ts";
