/**
 * `inspect` sends a JSON Schema generated ahead of time
 * (json-schemas.generated.ts); this fails when its zod schema changed and
 * the file was not regenerated.
 */
import { describe, expect, it } from "vitest";
import { INSPECT_TOOL_NAME, inspectInput } from "../src/inspect-tool.ts";
import { INSPECT_TOOL_JSON_SCHEMAS } from "../src/json-schemas.generated.ts";
import { inputJsonSchema } from "../src/tool.ts";

describe("generated inspect JSON Schema", () => {
  it("matches the tool's zod input schema (else: pnpm gen:tool-schemas)", () => {
    expect(Object.keys(INSPECT_TOOL_JSON_SCHEMAS)).toEqual([INSPECT_TOOL_NAME]);
    expect(INSPECT_TOOL_JSON_SCHEMAS[INSPECT_TOOL_NAME], "run pnpm gen:tool-schemas").toEqual(
      inputJsonSchema(inspectInput),
    );
  });
});
