/**
 * Packing workspace packages the way they would be published: `pnpm pack`
 * rewrites `workspace:` ranges and applies `files`. Used by the packed-package
 * checks (check-packages.ts) and the install tests that put the tarballs in
 * a project of their own.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const root = join(import.meta.dirname, "..");

export interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
  type?: string;
  sideEffects?: boolean;
  files?: string[];
  exports?: Record<string, unknown>;
  publishConfig?: { access?: string; exports?: unknown };
  scripts?: Record<string, string>;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

export function run(cmd: string, cmdArgs: string[], cwd: string): { ok: boolean; out: string } {
  const res = spawnSync(cmd, cmdArgs, { cwd, encoding: "utf8", env: { ...process.env, FORCE_COLOR: "0" } });
  return { ok: res.status === 0, out: `${res.stdout ?? ""}${res.stderr ?? ""}`.trim() };
}

/** Every package directory under packages/ and apps/, sorted. */
export function workspacePackageDirs(): string[] {
  const dirs: string[] = [];
  for (const area of ["packages", "apps"]) {
    for (const name of readdirSync(join(root, area)).sort()) {
      if (existsSync(join(root, area, name, "package.json"))) dirs.push(join(root, area, name));
    }
  }
  return dirs;
}

export function readPackageJson(dir: string): PackageJson {
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as PackageJson;
}

/** Packs the package in `dir` into `dest`; the tarball's path, or the pack's output as an error. */
export function packPackage(
  dir: string,
  dest: string,
): { ok: true; path: string } | { ok: false; out: string } {
  const pj = readPackageJson(dir);
  const packed = run("pnpm", ["pack", "--pack-destination", dest], dir);
  if (!packed.ok) return { ok: false, out: packed.out };
  const file = `${pj.name.replace("@", "").replace("/", "-")}-${pj.version}.tgz`;
  if (!existsSync(join(dest, file))) return { ok: false, out: `no tarball ${file} produced:\n${packed.out}` };
  return { ok: true, path: join(dest, file) };
}
