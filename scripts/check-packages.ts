/**
 * Publishing checks on what users would install: builds every workspace
 * package, packs it with pnpm (workspace: ranges rewritten, `files`
 * applied), and runs publint and are-the-types-wrong on the packed tarball.
 * Also checks the package.json conventions of the repository (ESM only,
 * `exports` with types first after the source condition, `files`,
 * `sideEffects: false`, public publishConfig, a build script).
 *
 *   node scripts/check-packages.ts            build, pack and check all
 *   node scripts/check-packages.ts --no-build reuse existing dist/
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import {
  type PackageJson,
  packPackage,
  readPackageJson,
  root,
  run,
  workspacePackageDirs,
} from "./pack-kit.ts";

const args = new Set(process.argv.slice(2));
const bin = (name: string): string => join(root, "node_modules", ".bin", name);
const dirs = workspacePackageDirs();

const problems: string[] = [];
for (const dir of dirs) {
  const pj = readPackageJson(dir);
  const where = relative(root, join(dir, "package.json"));
  if (pj.private) continue;
  if (pj.type !== "module") problems.push(`${where}: "type" must be "module" (ESM only)`);
  if (pj.sideEffects !== false) problems.push(`${where}: "sideEffects" must be false`);
  if (!pj.files?.includes("dist")) problems.push(`${where}: "files" must whitelist "dist"`);
  if (pj.publishConfig?.access !== "public") problems.push(`${where}: publishConfig.access must be "public"`);
  if (!pj.scripts?.build) problems.push(`${where}: a "build" script is required`);
  // In the repo, `@yoi/source` comes first so tests read sibling sources; the
  // published map (publishConfig.exports) is the same without it, types first.
  const published = JSON.stringify(pj.publishConfig?.exports);
  if (published !== JSON.stringify(withoutSourceCondition(pj.exports))) {
    problems.push(
      `${where}: publishConfig.exports must equal "exports" without the @yoi/source condition (regenerate it from "exports")`,
    );
  }
}

function withoutSourceCondition(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (k !== "@yoi/source") out[k] = withoutSourceCondition(v);
  return out;
}

/** Problems of a packed package.json's exports: a source condition left in, or a condition object without types first. */
function packedExportProblems(name: string, exports: unknown): string[] {
  const out: string[] = [];
  const visit = (path: string, value: unknown): void => {
    if (typeof value !== "object" || value === null) return;
    const keys = Object.keys(value);
    if (keys.includes("@yoi/source"))
      out.push(`${name}: packed exports${path} still has the @yoi/source condition`);
    const conditions = keys.filter((k) => !k.startsWith("."));
    if (conditions.length > 0 && conditions.includes("types") && conditions[0] !== "types")
      out.push(`${name}: packed exports${path} must list "types" first`);
    if (conditions.length > 0 && !conditions.includes("types") && conditions.includes("default"))
      out.push(`${name}: packed exports${path} has no "types" condition`);
    for (const [k, v] of Object.entries(value)) visit(`${path}["${k}"]`, v);
  };
  visit("", exports);
  return out;
}

if (!args.has("--no-build")) {
  process.stdout.write("building all packages...\n");
  const built = run(bin("turbo"), ["run", "build", "--output-logs=errors-only"], root);
  if (!built.ok) {
    process.stderr.write(`${built.out}\nbuild failed\n`);
    process.exit(1);
  }
}

const packDir = mkdtempSync(join(tmpdir(), "yoi-pack-"));
try {
  for (const dir of dirs) {
    const pj = readPackageJson(dir);
    if (pj.private) continue;
    const packed = packPackage(dir, packDir);
    if (!packed.ok) {
      problems.push(`${pj.name}: pnpm pack failed:\n${packed.out}`);
      continue;
    }
    const { path } = packed;
    const manifest = run("tar", ["-xzOf", path, "package/package.json"], root);
    if (!manifest.ok) problems.push(`${pj.name}: cannot read package.json from ${path}`);
    else problems.push(...packedExportProblems(pj.name, (JSON.parse(manifest.out) as PackageJson).exports));
    const lint = run(bin("publint"), ["run", path, "--strict"], root);
    if (!lint.ok || /warning|error/i.test(lint.out.replace(/All good!/, ""))) {
      problems.push(`${pj.name}: publint:\n${lint.out}`);
    }
    // ESM only: the CommonJS and node10 resolution modes do not apply.
    const types = run(bin("attw"), [path, "--profile", "esm-only", "--format", "ascii", "--no-emoji"], root);
    if (!types.ok) problems.push(`${pj.name}: are-the-types-wrong:\n${types.out}`);
    process.stdout.write(`${pj.name}: ${lint.ok && types.ok ? "ok" : "problems"}\n`);
    rmSync(path);
  }
} finally {
  rmSync(packDir, { recursive: true, force: true });
}

if (problems.length > 0) {
  for (const p of problems) process.stderr.write(`${p}\n`);
  process.stderr.write(`packages: ${problems.length} problem(s)\n`);
  process.exit(1);
}
process.stdout.write("packages: ok\n");
