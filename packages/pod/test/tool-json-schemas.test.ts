/**
 * What the built-in tools send as their input schemas: the JSON Schema
 * computed from each tool's zod schema (`z.toJSONSchema`, input side), an
 * object whose every argument carries the description the model reads.
 */
import { inputJsonSchema, toolSpec } from "@yoi/llm-worker";
import { describe, expect, it } from "vitest";
import { createSkillTool } from "../src/extensions/skills.ts";
import { createBuiltinTools } from "../src/tools/builtin-tools.ts";
import { TodoList } from "../src/tools/todo-list.ts";
import { todoWriteTool } from "../src/tools/todo-write.ts";
import { webFetchTool } from "../src/tools/web-fetch.ts";

describe("built-in tool JSON Schemas", () => {
  const tools = [
    ...createBuiltinTools({ view: { fs: {} } as never }),
    webFetchTool({}),
    todoWriteTool(new TodoList()),
    createSkillTool([]),
  ];

  it("are computed from each tool's zod schema: objects, every argument described", () => {
    expect(tools.length).toBeGreaterThan(8);
    for (const tool of tools) {
      const { parameters } = toolSpec(tool);
      expect(parameters, tool.name).toEqual(inputJsonSchema(tool.inputSchema));
      expect(parameters.type, tool.name).toBe("object");
      expect(parameters.$schema, tool.name).toBeUndefined();
      const properties = parameters.properties as Record<string, { description?: string }>;
      expect(Object.keys(properties).length, tool.name).toBeGreaterThan(0);
      for (const [name, property] of Object.entries(properties))
        expect(property.description, `${tool.name}.${name} has no description`).toBeTruthy();
    }
  });

  it("describe the input side: an argument with a default is optional to the model", () => {
    const read = tools.find((t) => t.name === "read_file")!;
    expect(toolSpec(read).parameters.required).toEqual(["path"]);
  });
});
