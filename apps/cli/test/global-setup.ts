/**
 * Before any test file: the CLI's black-box tests run the shipped
 * dist/bin.js (see helpers.ts), so it is rebuilt here when its sources
 * changed since it was written (on a clean clone, always).
 */
import { freshBundle } from "../fresh-bundle.ts";

export default function setup(): void {
  freshBundle((line) => process.stderr.write(`cli tests: ${line}\n`));
}
