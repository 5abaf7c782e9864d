/**
 * Regenerate schema/config.schema.json from the zod schema:
 * `pnpm --filter @yoi/manifest gen:schema`. A test fails when the checked-in
 * file is out of date.
 */
import { writeFileSync } from "node:fs";
import { configJsonSchema } from "../src/json-schema.ts";

const target = new URL("../schema/config.schema.json", import.meta.url);
writeFileSync(target, `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
console.log(`wrote ${target.pathname}`);
