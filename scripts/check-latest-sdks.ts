/**
 * Runs the llm-client adapter tests against the newest versions of the
 * provider SDKs that the registry serves (not the locked ones), so a
 * release that would break the adapters is seen before users see it.
 *
 *   node scripts/check-latest-sdks.ts          (pnpm --filter @yoi/llm-client test:latest-sdks)
 *
 * It installs `openai@latest`, `@anthropic-ai/sdk@latest` and
 * `@google/genai@latest` with npm into a scratch directory and runs vitest
 * with `YOI_SDK_DIR` pointing there (packages/llm-client/vitest.config.ts
 * aliases the SDK imports to it). Exit status: vitest's, or 2 when the
 * install fails.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const SDKS = ["openai", "@anthropic-ai/sdk", "@google/genai"];
const root = join(import.meta.dirname, "..");
const pkgDir = join(root, "packages", "llm-client");
const scratch = mkdtempSync(join(tmpdir(), "yoi-latest-sdks-"));

try {
  writeFileSync(join(scratch, "package.json"), '{ "private": true }\n');
  const install = spawnSync(
    "npm",
    ["install", "--no-audit", "--no-fund", "--ignore-scripts", ...SDKS.map((s) => `${s}@latest`)],
    { cwd: scratch, stdio: ["ignore", "inherit", "inherit"] },
  );
  if (install.status !== 0) {
    process.stderr.write(
      "check-latest-sdks: npm install of the newest SDKs failed (is the registry reachable?)\n",
    );
    process.exit(2);
  }
  const modules = join(scratch, "node_modules");
  for (const sdk of SDKS) {
    const { version } = JSON.parse(readFileSync(join(modules, sdk, "package.json"), "utf8")) as {
      version: string;
    };
    process.stderr.write(`check-latest-sdks: ${sdk}@${version}\n`);
  }
  const run = spawnSync("pnpm", ["exec", "vitest", "run", ...process.argv.slice(2)], {
    cwd: pkgDir,
    env: { ...process.env, YOI_SDK_DIR: modules },
    stdio: "inherit",
  });
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
