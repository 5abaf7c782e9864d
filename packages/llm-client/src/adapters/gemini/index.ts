import { LlmError } from "../../errors.ts";
import type { AdapterFactory } from "../adapter.ts";

/** Placeholder until the gemini adapter lands (issue 4). */
export const createGeminiAdapter: AdapterFactory = () => ({
  open: async () => {
    throw new LlmError("config", "the gemini adapter is not implemented yet");
  },
});
