import type { WireFormat } from "./wire-format.ts";

/** Placeholder until the gemini wire format lands (issue 4). */
export const geminiWire: WireFormat = {
  provider: "gemini",
  response: () => {
    throw new Error("the gemini wire format is not implemented yet");
  },
  validate: () => undefined,
  errorBody: (status, message) => ({ error: { code: status, message } }),
};
