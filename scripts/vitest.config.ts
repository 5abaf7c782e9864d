import { defineConfig } from "vitest/config";

/** Tests of the repository's own tooling (layering and package checks). */
export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ["**/*.test.ts"],
    testTimeout: 60_000,
  },
});
