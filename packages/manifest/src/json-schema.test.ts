import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { configJsonSchema } from "./json-schema.ts";

const checkedIn = new URL("../schema/config.schema.json", import.meta.url);

describe("config JSON Schema", () => {
  it("schema/config.schema.json is current (run `pnpm --filter @yoi/manifest gen:schema`)", () => {
    expect(JSON.parse(readFileSync(checkedIn, "utf8"))).toEqual(configJsonSchema());
  });

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
      "permissions",
      "sandbox",
      "scope",
      "session",
      "mcpServers",
      "hooks",
      "task",
    ]);
    expect(schema.properties.worker?.properties?.maxTurns?.default).toBe(50);
    expect(schema.properties.compaction?.properties?.thresholdRatio?.default).toBe(0.8);
  });
});
