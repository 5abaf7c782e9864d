/**
 * Part of `pnpm build`: writes `dist/config.schema.json`, the JSON Schema
 * editors read (exported as `@yoi/manifest/config.schema.json`), from the
 * zod config schema. Nothing of it is checked in.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { configJsonSchema } from "../src/json-schema.ts";

const file = new URL("../dist/config.schema.json", import.meta.url);
mkdirSync(new URL(".", file), { recursive: true });
writeFileSync(file, `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
