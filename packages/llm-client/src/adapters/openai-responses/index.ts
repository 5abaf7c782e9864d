import { LlmError } from "../../errors.ts";
import type { AdapterFactory } from "../adapter.ts";

/** Placeholder until the openai-responses adapter lands (issue 4). */
export const createOpenAIResponsesAdapter: AdapterFactory = () => ({
  open: async () => {
    throw new LlmError("config", "the openai-responses adapter is not implemented yet");
  },
});
