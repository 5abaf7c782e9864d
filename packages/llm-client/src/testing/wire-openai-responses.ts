import type { WireFormat } from "./wire-format.ts";

/** Placeholder until the openai-responses wire format lands (issue 4). */
export const openAIResponsesWire: WireFormat = {
  provider: "openai-responses",
  response: () => {
    throw new Error("the openai-responses wire format is not implemented yet");
  },
  validate: () => undefined,
  errorBody: (status, message) => ({ error: { code: status, message } }),
};
