import * as z from "zod";
import { ConfigLayerSchema } from "./config-schema.ts";

/**
 * JSON Schema (draft 2020-12) of a yoi config file, for editors: point a
 * file's `"$schema"` at `@yoi/manifest/config.schema.json` for completion and
 * checks. Generated from the zod schema (input side: every field optional,
 * defaults listed); the build writes it to `dist/config.schema.json`.
 */
export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ConfigLayerSchema, {
    io: "input",
    target: "draft-2020-12",
    unrepresentable: "any",
  });
  return {
    $schema: schema.$schema,
    title: "yoi configuration (~/.yoi/config.jsonc, .yoi/config.jsonc)",
    ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== "$schema")),
  };
}
