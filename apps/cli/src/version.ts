import { readFileSync } from "node:fs";

/** Set by the bundler (bundle.ts) to the package's version; absent when running from source or tsc output. */
declare const __YOI_CLI_VERSION__: string | undefined;

/** The CLI's version, from its package.json (the same path from `src/` and tsc's `dist/`). */
export function cliVersion(): string {
  if (typeof __YOI_CLI_VERSION__ === "string") return __YOI_CLI_VERSION__;
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version?: string;
  };
  return pkg.version ?? "0.0.0";
}
