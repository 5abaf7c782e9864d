import type { ViteUserConfig } from "vitest/config";

/**
 * Shared vitest settings: sibling packages resolve to their TypeScript sources
 * through the `@yoi/source` export condition, so tests need no prior build.
 */
export const yoiVitestConfig: ViteUserConfig = {
  resolve: { conditions: ["@yoi/source", "module", "node", "import", "default"] },
  ssr: { resolve: { conditions: ["@yoi/source", "module", "node", "import", "default"] } },
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
};
