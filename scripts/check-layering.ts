/**
 * Checks the package layering of ARCHITECTURE.md on every import of every
 * workspace package (sources, tests and benchmarks):
 *
 * - a `@yoi/*` import must follow an allowed edge and go through a public
 *   export of that package (its `exports` map), never a deep path;
 * - any other bare import must be a Node builtin or a dependency declared in
 *   the importing package's package.json (devDependencies and the root's
 *   devDependencies count for tests and benchmarks only);
 * - a relative import must stay inside its own package (benchmarks may use
 *   the root `scripts/bench-kit.ts`).
 *
 *   node scripts/check-layering.ts [--root <dir>]
 *
 * Exits 1 and lists every violation as `file:line: message`.
 */

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";

/** The allowed edges: a package may import exactly the packages listed for it. */
export const ALLOWED_EDGES: Record<string, readonly string[]> = {
  "@yoi/manifest": [],
  "@yoi/llm-client": ["@yoi/manifest"],
  "@yoi/timeline": ["@yoi/llm-client", "@yoi/manifest"],
  "@yoi/llm-worker": ["@yoi/timeline", "@yoi/llm-client", "@yoi/manifest"],
  "@yoi/worker-persistence": ["@yoi/llm-worker", "@yoi/timeline", "@yoi/llm-client", "@yoi/manifest"],
  "@yoi/compaction": ["@yoi/llm-worker", "@yoi/timeline", "@yoi/llm-client", "@yoi/manifest"],
  "@yoi/pod": [
    "@yoi/compaction",
    "@yoi/worker-persistence",
    "@yoi/llm-worker",
    "@yoi/timeline",
    "@yoi/llm-client",
    "@yoi/manifest",
  ],
  "@yoi/cli": [
    "@yoi/pod",
    "@yoi/compaction",
    "@yoi/worker-persistence",
    "@yoi/llm-worker",
    "@yoi/timeline",
    "@yoi/llm-client",
    "@yoi/manifest",
  ],
};

interface PackageJson {
  name: string;
  exports?: Record<string, unknown> | string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

interface WorkspacePackage {
  dir: string;
  json: PackageJson;
}

export interface Violation {
  file: string;
  line: number;
  message: string;
}

const SOURCE_EXT = /\.(?:ts|mts|cts|tsx|js|mjs|cjs)$/;
const SKIP_DIRS = new Set(["node_modules", "dist", ".turbo", "coverage", "__fixtures__", "schema"]);

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, "utf8")) as T;
}

function workspacePackages(root: string): WorkspacePackage[] {
  const out: WorkspacePackage[] = [];
  for (const area of ["packages", "apps"]) {
    const areaDir = join(root, area);
    if (!existsSync(areaDir)) continue;
    for (const name of readdirSync(areaDir).sort()) {
      const dir = join(areaDir, name);
      const pj = join(dir, "package.json");
      if (existsSync(pj)) out.push({ dir, json: readJson<PackageJson>(pj) });
    }
  }
  return out;
}

function walk(dir: string, out: string[]): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) walk(join(dir, entry.name), out);
    } else if (entry.isFile() && SOURCE_EXT.test(entry.name) && !entry.name.endsWith(".d.ts")) {
      out.push(join(dir, entry.name));
    }
  }
}

/**
 * Blanks comments and the contents of template literals (keeping line breaks
 * and string literals), so that import-like text in comments or templates is
 * not mistaken for an import.
 */
export function stripComments(source: string): string {
  let out = "";
  let i = 0;
  const n = source.length;
  while (i < n) {
    const c = source[i]!;
    const next = source[i + 1];
    if (c === "/" && next === "/") {
      while (i < n && source[i] !== "\n") i++;
    } else if (c === "/" && next === "*") {
      i += 2;
      while (i < n && !(source[i] === "*" && source[i + 1] === "/")) {
        if (source[i] === "\n") out += "\n";
        i++;
      }
      i += 2;
    } else if (c === '"' || c === "'") {
      const quote = c;
      out += c;
      i++;
      while (i < n && source[i] !== quote && source[i] !== "\n") {
        if (source[i] === "\\") {
          out += source[i]!;
          i++;
        }
        out += source[i]!;
        i++;
      }
      if (i < n) out += source[i]!;
      i++;
    } else if (c === "`") {
      out += "`";
      i++;
      while (i < n && source[i] !== "`") {
        if (source[i] === "\\") i++;
        else if (source[i] === "\n") out += "\n";
        i++;
      }
      out += "`";
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const IMPORT_PATTERNS = [
  // import x from "a"; import { x } from "a"; export { x } from "a"; export * from "a"; import type ...
  /\b(?:import|export)\s+(?:type\s+)?[\w*{}\s,$]*?\bfrom\s*["']([^"']+)["']/g,
  // import "a";
  /\bimport\s*["']([^"']+)["']/g,
  // import("a"), await import("a")
  /\bimport\s*\(\s*["']([^"']+)["']\s*[,)]/g,
  // require("a")
  /\brequire\s*\(\s*["']([^"']+)["']\s*\)/g,
];

export function findImports(source: string): { specifier: string; line: number }[] {
  const text = stripComments(source);
  const found: { specifier: string; index: number }[] = [];
  for (const pattern of IMPORT_PATTERNS) {
    pattern.lastIndex = 0;
    for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
      found.push({ specifier: m[1]!, index: m.index + m[0].lastIndexOf(m[1]!) });
    }
  }
  found.sort((a, b) => a.index - b.index);
  const lineStarts: number[] = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") lineStarts.push(i + 1);
  const lineOf = (index: number): number => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  return found.map((f) => ({ specifier: f.specifier, line: lineOf(f.index) }));
}

function packageNameOf(specifier: string): { name: string; subpath: string } {
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
  const rest = specifier.slice(name.length);
  return { name, subpath: rest === "" ? "." : `.${rest}` };
}

function exportedSubpaths(json: PackageJson): Set<string> {
  if (json.exports === undefined) return new Set(["."]);
  if (typeof json.exports === "string") return new Set(["."]);
  return new Set(Object.keys(json.exports));
}

const BUILTINS = new Set(builtinModules);

function isTestOrBench(file: string, pkgDir: string): boolean {
  const rel = relative(pkgDir, file).split(sep).join("/");
  return (
    rel.startsWith("test/") ||
    rel.startsWith("bench/") ||
    rel.includes("__tests__/") ||
    /\.(test|spec|bench)\.[cm]?[jt]sx?$/.test(rel) ||
    rel === "vitest.config.ts"
  );
}

export function checkLayering(root: string): Violation[] {
  const rootJson = readJson<PackageJson>(join(root, "package.json"));
  const rootDev = new Set(Object.keys(rootJson.devDependencies ?? {}));
  const packages = workspacePackages(root);
  const byName = new Map(packages.map((p) => [p.json.name, p]));
  const violations: Violation[] = [];

  for (const pkg of packages) {
    const name = pkg.json.name;
    const allowed = ALLOWED_EDGES[name];
    const rel = (f: string): string => relative(root, f).split(sep).join("/");
    if (allowed === undefined) {
      violations.push({
        file: rel(join(pkg.dir, "package.json")),
        line: 1,
        message: `package ${name} has no entry in the allowed edges of scripts/check-layering.ts; add one that matches ARCHITECTURE.md`,
      });
      continue;
    }
    const deps = new Set([
      ...Object.keys(pkg.json.dependencies ?? {}),
      ...Object.keys(pkg.json.peerDependencies ?? {}),
      ...Object.keys(pkg.json.optionalDependencies ?? {}),
    ]);
    const devDeps = new Set(Object.keys(pkg.json.devDependencies ?? {}));

    // A declared dependency on a package outside the allowed edges is a violation too.
    for (const dep of [...deps, ...devDeps]) {
      if (dep.startsWith("@yoi/") && dep !== name && !allowed.includes(dep)) {
        violations.push({
          file: rel(join(pkg.dir, "package.json")),
          line: 1,
          message: `${name} declares a dependency on ${dep}, which the layering does not allow (allowed: ${allowed.join(", ") || "none"})`,
        });
      }
    }

    const files: string[] = [];
    for (const sub of ["src", "test", "bench"]) walk(join(pkg.dir, sub), files);
    if (existsSync(join(pkg.dir, "vitest.config.ts"))) files.push(join(pkg.dir, "vitest.config.ts"));

    for (const file of files) {
      const testOrBench = isTestOrBench(file, pkg.dir);
      for (const { specifier, line } of findImports(readFileSync(file, "utf8"))) {
        const at = { file: rel(file), line };
        if (specifier.startsWith(".")) {
          const target = resolve(dirname(file), specifier);
          const inside = !relative(pkg.dir, target).startsWith("..");
          const benchKit =
            testOrBench &&
            (target === join(root, "scripts", "bench-kit.ts") || target === join(root, "vitest.shared.ts"));
          if (!inside && !benchKit) {
            violations.push({
              ...at,
              message: `relative import "${specifier}" leaves ${name}; import other packages by name through their public exports`,
            });
          }
          continue;
        }
        if (
          specifier.startsWith("node:") ||
          BUILTINS.has(specifier) ||
          BUILTINS.has(specifier.split("/")[0]!)
        ) {
          continue;
        }
        const { name: target, subpath } = packageNameOf(specifier);
        if (target.startsWith("@yoi/")) {
          if (target === name) {
            violations.push({
              ...at,
              message: `${name} imports itself by name ("${specifier}"); use a relative import`,
            });
            continue;
          }
          if (!allowed.includes(target)) {
            violations.push({
              ...at,
              message: `${name} may not import ${target} (layering of ARCHITECTURE.md; allowed: ${allowed.join(", ") || "none"})`,
            });
            continue;
          }
          const targetPkg = byName.get(target);
          if (targetPkg !== undefined && !exportedSubpaths(targetPkg.json).has(subpath)) {
            violations.push({
              ...at,
              message: `"${specifier}" is a deep import into ${target}; use one of its public exports (${[...exportedSubpaths(targetPkg.json)].filter((s) => s !== "./package.json").join(", ")})`,
            });
            continue;
          }
        }
        const declared = deps.has(target) || (testOrBench && (devDeps.has(target) || rootDev.has(target)));
        if (!declared) {
          violations.push({
            ...at,
            message: `"${target}" is not declared in ${rel(join(pkg.dir, "package.json"))}${testOrBench ? " (dependencies or devDependencies)" : " dependencies"}`,
          });
        }
      }
    }
  }
  return violations;
}

function main(): void {
  const args = process.argv.slice(2);
  const rootIdx = args.indexOf("--root");
  const root = resolve(
    rootIdx >= 0 && args[rootIdx + 1] ? args[rootIdx + 1]! : join(import.meta.dirname, ".."),
  );
  if (!existsSync(join(root, "package.json")) || !statSync(root).isDirectory()) {
    process.stderr.write(`check-layering: ${root} is not a workspace root (no package.json)\n`);
    process.exit(2);
  }
  const violations = checkLayering(root);
  if (violations.length === 0) {
    process.stdout.write("layering: ok\n");
    return;
  }
  for (const v of violations) process.stderr.write(`${v.file}:${v.line}: ${v.message}\n`);
  process.stderr.write(`layering: ${violations.length} violation(s)\n`);
  process.exit(1);
}

if (import.meta.main) main();
