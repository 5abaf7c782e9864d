/**
 * dependency-cruiser rules for the workspace (run by `pnpm check` through
 * scripts/check-layering.ts). The layer edges come from scripts/layers.mjs;
 * imports are read by swc, a real parser (a regex literal is not an import).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { allowedImports, LAYERS } from "./scripts/layers.mjs";

const root = import.meta.dirname;

/** Workspace package name -> its directory, e.g. "@yoi/pod" -> "packages/pod". */
function workspaceDirs() {
  const dirs = new Map();
  for (const area of ["packages", "apps"]) {
    for (const entry of readdirSync(join(root, area), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      try {
        const { name } = JSON.parse(readFileSync(join(root, area, entry.name, "package.json"), "utf8"));
        dirs.set(name, `${area}/${entry.name}`);
      } catch {
        // not a package
      }
    }
  }
  return dirs;
}

const dirs = workspaceDirs();
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");

const layerRules = LAYERS.flat()
  .filter((name) => dirs.has(name))
  .map((name) => {
    const allowed = new Set([name, ...allowedImports(name)]);
    const others = [...dirs].filter(([other]) => !allowed.has(other));
    const forbiddenDirs = others.map(([, dir]) => escapeRe(dir)).join("|");
    // By name too: an upward import does not even resolve under pnpm (the package is not a dependency).
    const forbiddenNames = others.map(([other]) => escapeRe(other)).join("|");
    return {
      name: `layer:${name}`,
      comment: `${name} may import only ${allowedImports(name).join(", ") || "no workspace package"} (scripts/layers.mjs, docs/architecture.md)`,
      severity: "error",
      from: { path: `^${escapeRe(dirs.get(name))}/` },
      to: { path: `^(?:(?:${forbiddenDirs})/|(?:${forbiddenNames})(?:/|$))` },
    };
  });

export default {
  forbidden: [
    ...layerRules,
    {
      name: "not-to-unresolvable",
      comment:
        "an import that does not resolve: a deep path into a package that its exports map does not offer, or a package this package.json does not declare",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: "no-relative-into-another-package",
      comment: "packages import each other by name and public exports only, never by a relative path",
      severity: "error",
      from: { path: "^(?:packages|apps)/([^/]+)/" },
      to: { dependencyTypes: ["local"], path: "^(?:packages|apps)/", pathNot: "^(?:packages|apps)/$1/" },
    },
    {
      name: "no-relative-out-of-the-workspace-package",
      comment:
        "a relative import stays inside its package (benchmarks may use scripts/bench-kit.ts, vitest configs the shared one)",
      severity: "error",
      from: { path: "^(?:packages|apps)/" },
      to: {
        dependencyTypes: ["local"],
        pathNot: "^(?:packages|apps)/|^scripts/bench-kit\\.ts$|^vitest\\.shared\\.ts$",
      },
    },
    {
      name: "no-undeclared-dependency",
      comment: "a package imports only what its package.json declares",
      severity: "error",
      from: { path: "^(?:packages|apps)/" },
      to: { dependencyTypes: ["npm-no-pkg", "npm-unknown"] },
    },
    {
      name: "no-dev-dependency-in-sources",
      comment: "published sources (src/, not tests) import only dependencies, not devDependencies",
      severity: "error",
      from: { path: "^(?:packages|apps)/[^/]+/src/", pathNot: "\\.test\\.ts$|/testing/|/__tests__/" },
      to: { dependencyTypes: ["npm-dev"] },
    },
  ],
  options: {
    parser: "swc",
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(?:^|/)(?:node_modules|dist|\\.turbo|coverage|__fixtures__)/" },
    enhancedResolveOptions: {
      conditionNames: ["@yoi/source", "import", "node", "default"],
      exportsFields: ["exports"],
      extensions: [".ts", ".mts", ".js", ".mjs", ".json"],
    },
  },
};
