import { join } from "node:path";
import { defineConfig } from "vitest/config";
import { yoiVitestConfig } from "../../vitest.shared.ts";

/**
 * `YOI_SDK_DIR`: a node_modules directory holding other versions of the
 * SDKs (scripts/check-latest-sdks.ts installs the newest there); the
 * adapters and tests then import those instead of the locked ones.
 */
const sdkDir = process.env.YOI_SDK_DIR;
const sdkAlias = sdkDir
  ? ["openai", "@anthropic-ai/sdk", "@google/genai"].map((name) => ({
      find: new RegExp(`^${name.replace("/", "\\/")}$`),
      replacement: join(sdkDir, name),
    }))
  : [];

export default defineConfig({
  ...yoiVitestConfig,
  resolve: { ...yoiVitestConfig.resolve, alias: sdkAlias },
});
