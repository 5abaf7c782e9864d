import { describe, expect, it } from "vitest";
import { configJsonSchema } from "./json-schema.ts";

describe("config JSON Schema", () => {
  it("is strict and describes every section for editors", () => {
    const schema = configJsonSchema() as {
      additionalProperties: boolean;
      properties: Record<string, { properties?: Record<string, { default?: unknown }> }>;
    };
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties)).toEqual([
      "$schema",
      "providers",
      "model",
      "models",
      "worker",
      "toolOutput",
      "toolOutputCache",
      "compaction",
      "retry",
      "permissions",
      "sandbox",
      "scope",
      "session",
      "mcpServers",
      "hooks",
      "task",
      "theme",
      "editorMode",
      "statusLine",
      "notifications",
      "paste",
      "lsp",
    ]);
    expect(schema.properties.worker?.properties?.maxTurns?.default).toBe(50);
    expect(schema.properties.compaction?.properties?.thresholdRatio?.default).toBe(0.8);
  });
});
