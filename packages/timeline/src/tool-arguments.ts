import { errorMessage } from "@yoi/manifest/errors";
/** Tool call arguments as a handler needs them: parsed, and the raw JSON kept. */
export interface ParsedToolArguments {
  /**
   * The arguments JSON as the model sent it; `"{}"` when it sent nothing (so
   * it can go straight into a `ToolCallItem`, whose contract is an object).
   */
  argumentsJson: string;
  /** The parsed object; `{}` when the JSON was empty, invalid or not an object (see `note`). */
  args: Record<string, unknown>;
  /** Why `args` is `{}` although the model sent something else (or nothing). */
  note?: string;
}

/**
 * Parses the concatenated `input_json` of a tool call. Never throws: empty
 * input becomes `{}`, and invalid or non-object JSON becomes `{}` with a note
 * that says what was wrong, so a tool can answer the model with it.
 */
export function parseToolArguments(raw: string): ParsedToolArguments {
  if (raw.trim() === "") {
    return { argumentsJson: "{}", args: {}, note: "the model sent no arguments; using {}" };
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    const why = errorMessage(error);
    return {
      argumentsJson: raw,
      args: {},
      note: `the arguments are not valid JSON (${why}); using {}`,
    };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const what = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
    return {
      argumentsJson: raw,
      args: {},
      note: `the arguments are ${what}, not a JSON object; using {}`,
    };
  }
  return { argumentsJson: raw, args: value as Record<string, unknown> };
}
