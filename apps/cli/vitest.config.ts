import { defineConfig } from "vitest/config";
import { yoiVitestConfig } from "../../vitest.shared.ts";

export default defineConfig({
  ...yoiVitestConfig,
  test: { ...yoiVitestConfig.test, globalSetup: ["./test/global-setup.ts"] },
});
