import { readFileSync } from "node:fs";

/** The CLI's version, from its package.json (the same path from `src/` and `dist/`). */
export function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version?: string;
  };
  return pkg.version ?? "0.0.0";
}
