import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkLayering, findImports } from "./check-layering.ts";

const repoRoot = join(import.meta.dirname, "..");
const script = join(import.meta.dirname, "check-layering.ts");

/** A temporary copy of the workspace's package manifests and sources (no node_modules). */
function copyWorkspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "yoi-layering-"));
  const filter = (src: string): boolean => !/[\\/](node_modules|dist|\.turbo)([\\/]|$)/.test(src);
  cpSync(join(repoRoot, "package.json"), join(dir, "package.json"));
  cpSync(join(repoRoot, "scripts"), join(dir, "scripts"), { recursive: true, filter });
  cpSync(join(repoRoot, "packages"), join(dir, "packages"), { recursive: true, filter });
  cpSync(join(repoRoot, "apps"), join(dir, "apps"), { recursive: true, filter });
  return dir;
}

function runCheck(root: string): { status: number | null; stderr: string } {
  const res = spawnSync(process.execPath, [script, "--root", root], { encoding: "utf8" });
  return { status: res.status, stderr: res.stderr };
}

describe("check-layering", () => {
  let copy: string;
  beforeEach(() => {
    copy = copyWorkspace();
  });
  afterEach(() => {
    rmSync(copy, { recursive: true, force: true });
  });

  it("passes on the repository as it is", () => {
    expect(checkLayering(repoRoot)).toEqual([]);
    expect(runCheck(copy).status).toBe(0);
  });

  it("fails on an import along a forbidden edge (manifest importing pod)", () => {
    appendFileSync(
      join(copy, "packages/manifest/src/index.ts"),
      '\nimport { x } from "@yoi/pod";\nvoid x;\n',
    );
    const res = runCheck(copy);
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("packages/manifest/src/index.ts");
    expect(res.stderr).toContain("@yoi/manifest may not import @yoi/pod");
  });

  it("fails on an upward import through a dynamic import", () => {
    writeFileSync(
      join(copy, "packages/llm-client/src/planted.ts"),
      'export const m = () => import("@yoi/llm-worker");\n',
    );
    const res = runCheck(copy);
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("@yoi/llm-client may not import @yoi/llm-worker");
  });

  it("fails on a sideways import between worker-persistence and compaction", () => {
    writeFileSync(
      join(copy, "packages/compaction/src/planted.ts"),
      'export type { X } from "@yoi/worker-persistence";\n',
    );
    const res = runCheck(copy);
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("@yoi/compaction may not import @yoi/worker-persistence");
  });

  it("fails on a deep import into another package's internals", () => {
    writeFileSync(
      join(copy, "packages/timeline/src/planted.ts"),
      'import "@yoi/llm-client/src/errors.ts";\n',
    );
    const res = runCheck(copy);
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("deep import into @yoi/llm-client");
  });

  it("fails on a relative import that reaches into a sibling package", () => {
    writeFileSync(
      join(copy, "packages/timeline/src/planted.ts"),
      'import "../../llm-client/src/errors.ts";\n',
    );
    const res = runCheck(copy);
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("leaves @yoi/timeline");
  });

  it("fails on an import of an undeclared package", () => {
    writeFileSync(
      join(copy, "packages/timeline/src/planted.ts"),
      'import OpenAI from "openai";\nvoid OpenAI;\n',
    );
    const res = runCheck(copy);
    expect(res.status).toBe(1);
    expect(res.stderr).toContain('"openai" is not declared in packages/timeline/package.json');
  });

  it("fails on a declared dependency along a forbidden edge", () => {
    const pj = join(copy, "packages/manifest/package.json");
    const json = JSON.parse(readFileSync(pj, "utf8"));
    json.dependencies = { ...json.dependencies, "@yoi/llm-client": "workspace:^" };
    writeFileSync(pj, JSON.stringify(json));
    const res = runCheck(copy);
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("@yoi/manifest declares a dependency on @yoi/llm-client");
  });

  it("fails on a dynamic import written with a template literal", () => {
    writeFileSync(
      join(copy, "packages/timeline/src/planted.ts"),
      "export const m = () => import(`@yoi/pod`);\n",
    );
    const res = runCheck(copy);
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("@yoi/timeline may not import @yoi/pod");
  });

  it("checks every source file of a package, not only src/", () => {
    mkdirSync(join(copy, "packages/manifest/scripts"), { recursive: true });
    writeFileSync(join(copy, "packages/manifest/scripts/planted.ts"), 'import "@yoi/llm-client";\n');
    const res = runCheck(copy);
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("packages/manifest/scripts/planted.ts");
  });

  it("ignores imports inside comments and template literals", () => {
    writeFileSync(
      join(copy, "packages/manifest/src/planted.ts"),
      '// import x from "@yoi/pod";\n/* import("@yoi/cli") */\nexport const s = `import "@yoi/pod"`;\n',
    );
    expect(runCheck(copy).status).toBe(0);
  });
});

describe("findImports", () => {
  it("does not read the word import at the end of a string as an import", () => {
    const src = 'describe("entry points the adapters import", () => {\n  it("works", () => {});\n});\n';
    expect(findImports(src)).toEqual([]);
  });

  it("does not read a method or property named import or from as an import", () => {
    expect(findImports('loader.import("x");\nconst o = { from: "y" };\n')).toEqual([]);
  });

  it("finds static, type-only, re-export, side-effect and dynamic imports with line numbers", () => {
    const src = [
      'import a from "a";',
      'import type { B } from "b";',
      'export { c } from "c";',
      'export * from "d";',
      'import "e";',
      'const f = await import("f");',
      "import {",
      "  g,",
      '} from "g";',
    ].join("\n");
    expect(findImports(src)).toEqual([
      { specifier: "a", line: 1 },
      { specifier: "b", line: 2 },
      { specifier: "c", line: 3 },
      { specifier: "d", line: 4 },
      { specifier: "e", line: 5 },
      { specifier: "f", line: 6 },
      { specifier: "g", line: 9 },
    ]);
  });
});
