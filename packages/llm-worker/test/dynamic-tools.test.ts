import { describe, expect, it } from "vitest";
import * as z from "zod";
import { createScriptedClient } from "../src/testing/scripted-client.ts";
import { defineTool, toolSpec } from "../src/tool.ts";
import { Worker } from "../src/worker.ts";
import { echoTool } from "./helpers.ts";

const rawSchema = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  properties: { q: { type: "string", minLength: 1 } },
  required: ["q"],
};

const rawTool = defineTool({
  name: "mcp__docs__search",
  description: "Search the docs.",
  inputSchema: z.record(z.string(), z.unknown()),
  jsonSchema: rawSchema,
  execute: (input) => `searched ${String(input.q)}`,
});

describe("tools given as JSON Schema, and tools that change", () => {
  it("sends a tool's own JSON Schema as is (minus $schema)", () => {
    expect(toolSpec(rawTool)).toEqual({
      name: "mcp__docs__search",
      description: "Search the docs.",
      parameters: { type: "object", properties: { q: { type: "string", minLength: 1 } }, required: ["q"] },
    });
    // The tool's schema object itself is left untouched.
    expect(rawSchema.$schema).toBeDefined();
  });

  it("rejects a JSON Schema that is not an object schema", () => {
    expect(() => toolSpec({ ...rawTool, jsonSchema: { type: "string" } })).toThrow(/must be a zod object/);
  });

  it("setTools changes what the next request offers and what can be called", async () => {
    const client = createScriptedClient([
      { text: "first" },
      { toolCalls: [{ id: "c1", name: "mcp__docs__search", args: { q: "zod" } }] },
      { text: "done" },
    ]);
    const worker = new Worker({ client, tools: [echoTool] });
    await worker.run("one");
    expect(client.requests[0]!.tools?.map((t) => t.name)).toEqual(["echo"]);
    worker.setTools([echoTool, rawTool]);
    await worker.run("two");
    expect(client.requests[1]!.tools?.map((t) => t.name)).toEqual(["echo", "mcp__docs__search"]);
    expect(worker.history.find((i) => i.type === "tool_result")).toMatchObject({
      output: "searched zod",
      isError: false,
    });
  });

  it("setTools refuses duplicates and keeps the old list", () => {
    const worker = new Worker({ client: createScriptedClient([]), tools: [echoTool] });
    expect(() => worker.setTools([echoTool, echoTool])).toThrow(/two tools are named "echo"/);
    expect(worker.tools.map((t) => t.name)).toEqual(["echo"]);
  });
});
