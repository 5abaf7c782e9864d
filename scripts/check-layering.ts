/**
 * Checks the package layering of docs/architecture.md (`pnpm check`):
 *
 * - every import of every workspace file, read by dependency-cruiser with
 *   swc (a real parser: an import after a regex literal is found, a string
 *   that looks like one is not), against `.dependency-cruiser.mjs`: layer
 *   edges, deep paths into another package, relative imports across
 *   packages, undeclared and dev-only dependencies;
 * - every package.json: a declared `@yoi/*` dependency must follow an edge.
 *
 * The edges of both come from scripts/layers.mjs, the one copy of the
 * architecture page's picture (docs/architecture.md).
 *
 *   node scripts/check-layering.ts [paths...]     (default: packages apps)
 *
 * Exits 1 and lists every violation.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { allowedImports, LAYERS } from "./layers.mjs";

const root = join(import.meta.dirname, "..");

export interface LayeringResult {
  ok: boolean;
  /** One line per violation. */
  violations: string[];
}

/** Runs dependency-cruiser over `paths` (relative to the repository root). */
export function cruiseImports(paths: readonly string[]): LayeringResult {
  const bin = join(root, "node_modules", ".bin", "depcruise");
  const res = spawnSync(bin, ["--config", ".dependency-cruiser.mjs", "--output-type", "err", ...paths], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  if (res.error) throw res.error;
  const violations = `${res.stdout}\n${res.stderr}`
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith("error "));
  // dependency-cruiser exits with the number of errors; anything else non-zero is a crash.
  if (res.status !== 0 && violations.length === 0) {
    throw new Error(`dependency-cruiser failed (exit ${res.status}):\n${res.stderr}`);
  }
  return { ok: violations.length === 0, violations };
}

/** Declared `@yoi/*` dependencies of every workspace package against the layers. */
export function checkDeclaredEdges(): LayeringResult {
  const violations: string[] = [];
  const known = new Set(LAYERS.flat());
  for (const area of ["packages", "apps"]) {
    const dir = join(root, area);
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir)) {
      const file = join(dir, entry, "package.json");
      if (!existsSync(file)) continue;
      const json = JSON.parse(readFileSync(file, "utf8")) as {
        name: string;
        dependencies?: Record<string, string>;
        devDependencies?: Record<string, string>;
        peerDependencies?: Record<string, string>;
      };
      if (!known.has(json.name)) {
        violations.push(`error layers: ${area}/${entry} (${json.name}) is in no layer of scripts/layers.mjs`);
        continue;
      }
      const allowed = new Set(allowedImports(json.name));
      for (const deps of [json.dependencies, json.devDependencies, json.peerDependencies]) {
        for (const dep of Object.keys(deps ?? {})) {
          if (dep.startsWith("@yoi/") && !allowed.has(dep)) {
            violations.push(
              `error layers: ${area}/${entry}/package.json declares ${dep}, which ${json.name} may not import`,
            );
          }
        }
      }
    }
  }
  return { ok: violations.length === 0, violations };
}

function main(): void {
  const args = process.argv.slice(2);
  const paths = args.length > 0 ? args : ["packages", "apps"];
  const results = [cruiseImports(paths), ...(args.length > 0 ? [] : [checkDeclaredEdges()])];
  const violations = results.flatMap((r) => r.violations);
  if (violations.length === 0) {
    process.stdout.write("layering: ok\n");
    return;
  }
  for (const v of violations) process.stderr.write(`${v}\n`);
  process.stderr.write(
    `layering: ${violations.length} violation(s); the rules are in .dependency-cruiser.mjs\n`,
  );
  process.exit(1);
}

if (import.meta.main) main();
