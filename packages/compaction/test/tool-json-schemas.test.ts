/**
 * The cache tools send JSON Schemas generated ahead of time
 * (json-schemas.generated.ts); this fails when a zod schema changed and the
 * file was not regenerated.
 */
import { inputJsonSchema, toolSpec } from "@yoi/llm-worker";
import { describe, expect, it } from "vitest";
import { CACHE_TOOL_INPUT_SCHEMAS, createCacheTools } from "../src/cache-tools.ts";
import { CACHE_TOOL_JSON_SCHEMAS } from "../src/json-schemas.generated.ts";
import type { ToolOutputCache } from "../src/tool-output-cache.ts";

describe("generated cache-tool JSON Schemas", () => {
  it("match the tools' zod input schemas (else: pnpm gen:tool-schemas)", () => {
    expect(Object.keys(CACHE_TOOL_JSON_SCHEMAS).sort()).toEqual(Object.keys(CACHE_TOOL_INPUT_SCHEMAS).sort());
    for (const [name, schema] of Object.entries(CACHE_TOOL_INPUT_SCHEMAS)) {
      expect(CACHE_TOOL_JSON_SCHEMAS[name], `${name}: run pnpm gen:tool-schemas`).toEqual(
        inputJsonSchema(schema),
      );
    }
  });

  it("are what the tools send", () => {
    const tools = createCacheTools({ config: { maxMessageBytes: 1000 } } as unknown as ToolOutputCache);
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(CACHE_TOOL_INPUT_SCHEMAS).sort());
    for (const tool of tools) expect(toolSpec(tool).parameters).toEqual(inputJsonSchema(tool.inputSchema));
  });
});
