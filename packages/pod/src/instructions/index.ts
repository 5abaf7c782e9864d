export {
  INSTRUCTIONS_HEADING,
  type InstructionFile,
  type InstructionsOptions,
  ProjectInstructions,
} from "./project-instructions.ts";
