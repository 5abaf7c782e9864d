/**
 * The built-in tools send JSON Schemas generated ahead of time
 * (json-schemas.generated.ts) instead of converting their zod schemas at
 * start-up; this fails when a zod schema changed and the file was not
 * regenerated.
 */
import { inputJsonSchema, toolSpec } from "@yoi/llm-worker";
import { describe, expect, it } from "vitest";
import { createBuiltinTools } from "../src/tools/builtin-tools.ts";
import { TOOL_INPUT_SCHEMAS } from "../src/tools/input-schemas.ts";
import { TOOL_JSON_SCHEMAS } from "../src/tools/json-schemas.generated.ts";
import { TodoList } from "../src/tools/todo-list.ts";
import { todoWriteTool } from "../src/tools/todo-write.ts";
import { webFetchTool } from "../src/tools/web-fetch.ts";

describe("generated tool JSON Schemas", () => {
  it("match every built-in tool's zod input schema (else: pnpm gen:tool-schemas)", () => {
    expect(Object.keys(TOOL_JSON_SCHEMAS).sort()).toEqual(Object.keys(TOOL_INPUT_SCHEMAS).sort());
    for (const [name, schema] of Object.entries(TOOL_INPUT_SCHEMAS)) {
      expect(TOOL_JSON_SCHEMAS[name], `${name}: run pnpm gen:tool-schemas`).toEqual(inputJsonSchema(schema));
    }
  });

  it("are what the tools send, and each tool is listed", () => {
    const tools = [
      ...createBuiltinTools({ view: { fs: {} } as never }),
      webFetchTool({}),
      todoWriteTool(new TodoList()),
    ];
    for (const tool of tools) {
      expect(TOOL_INPUT_SCHEMAS[tool.name], `${tool.name} is missing from input-schemas.ts`).toBe(
        tool.inputSchema,
      );
      expect(toolSpec(tool).parameters).toEqual(inputJsonSchema(tool.inputSchema));
    }
  });
});
