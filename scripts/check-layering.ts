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
const SKIP_DIRS = new Set(["node_modules", "dist", ".turbo", "coverage", "__fixtures__"]);

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

interface Token {
  kind: "word" | "string" | "punct";
  value: string;
  index: number;
}

/**
 * Splits TypeScript source into words, string literals and punctuation,
 * skipping comments and whitespace. Template literals without substitutions
 * count as strings (so `import(\`x\`)` is seen); ones with substitutions
 * are skipped. Good enough to find module specifiers, which is all it is for.
 */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const n = source.length;
  let i = 0;
  while (i < n) {
    const c = source[i]!;
    const next = source[i + 1];
    if (c === "/" && next === "/") {
      while (i < n && source[i] !== "\n") i++;
    } else if (c === "/" && next === "*") {
      const close = source.indexOf("*/", i + 2);
      i = close < 0 ? n : close + 2;
    } else if (c === '"' || c === "'" || c === "`") {
      const start = i;
      let value = "";
      let plain = true;
      i++;
      while (i < n && source[i] !== c) {
        if (source[i] === "\\") {
          value += source[i + 1] ?? "";
          i += 2;
          continue;
        }
        if (c !== "`" && source[i] === "\n") break;
        if (c === "`" && source[i] === "$" && source[i + 1] === "{") plain = false;
        value += source[i];
        i++;
      }
      i++;
      if (plain) tokens.push({ kind: "string", value, index: start + 1 });
    } else if (/[A-Za-z_$]/.test(c)) {
      const start = i;
      while (i < n && /[\w$]/.test(source[i]!)) i++;
      tokens.push({ kind: "word", value: source.slice(start, i), index: start });
    } else if (/\s/.test(c)) {
      i++;
    } else {
      tokens.push({ kind: "punct", value: c, index: i });
      i++;
    }
  }
  return tokens;
}

/**
 * Module specifiers of every import form: `import ... from "a"`,
 * `export ... from "a"`, `import "a"`, `import("a")`, `require("a")`, with
 * their line numbers. Text inside strings and comments is never mistaken
 * for an import.
 */
export function findImports(source: string): { specifier: string; line: number }[] {
  const tokens = tokenize(source);
  const found: { specifier: string; index: number }[] = [];
  for (let t = 0; t < tokens.length; t++) {
    const tok = tokens[t]!;
    if (tok.kind !== "word") continue;
    const prev = tokens[t - 1];
    // `x.import(...)`, `obj.from "..."` are not imports.
    if (prev?.kind === "punct" && prev.value === ".") continue;
    const a = tokens[t + 1];
    const b = tokens[t + 2];
    if ((tok.value === "from" || tok.value === "import") && a?.kind === "string") {
      found.push({ specifier: a.value, index: a.index });
    } else if (
      (tok.value === "import" || tok.value === "require") &&
      a?.kind === "punct" &&
      a.value === "(" &&
      b?.kind === "string"
    ) {
      found.push({ specifier: b.value, index: b.index });
    }
  }
  const lineStarts: number[] = [0];
  for (let i = 0; i < source.length; i++) if (source[i] === "\n") lineStarts.push(i + 1);
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
    rel.startsWith("scripts/") ||
    rel.startsWith("examples/") ||
    rel.includes("__tests__/") ||
    /\.(test|spec|bench)\.[cm]?[jt]sx?$/.test(rel) ||
    !rel.includes("/")
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

    // Every source file of the package: src, tests, benchmarks, scripts, examples, configs.
    const files: string[] = [];
    walk(pkg.dir, files);

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
