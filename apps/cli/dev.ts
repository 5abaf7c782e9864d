/**
 * `pnpm yoi ...`: the shipped `yoi` (dist/bin.js), rebuilt first when its
 * sources changed (see fresh-bundle.ts), run in this process with the
 * arguments given. There is no second way to run the CLI from source.
 */
import { pathToFileURL } from "node:url";
import { freshBundle } from "./fresh-bundle.ts";

const bin = freshBundle((line) => process.stderr.write(`pnpm yoi: ${line}\n`));
// bin.js reads its arguments from process.argv.slice(2), which are this script's.
await import(pathToFileURL(bin).href);
