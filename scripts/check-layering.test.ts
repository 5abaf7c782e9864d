/**
 * Planted forbidden imports fail the layering check: each case writes a
 * probe file into a real package of this workspace (so imports resolve
 * exactly as they do for the real sources), runs dependency-cruiser with
 * the repository's rules on it, and removes it.
 */
import { randomUUID } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkDeclaredEdges, cruiseImports } from "./check-layering.ts";
import { allowedImports, LAYERS } from "./layers.mjs";

const root = join(import.meta.dirname, "..");
const planted: string[] = [];
afterEach(() => {
  for (const file of planted.splice(0)) rmSync(join(root, file), { force: true });
});

/** Writes `source` as a new file in `dir` (repository-relative) and checks it alone. */
function plant(dir: string, source: string): string[] {
  const file = `${dir}/__layering_probe_${randomUUID().slice(0, 8)}.ts`;
  planted.push(file);
  writeFileSync(join(root, file), source);
  return cruiseImports([file]).violations;
}

describe("layering (dependency-cruiser)", () => {
  it("passes on the repository as it is", () => {
    expect(cruiseImports(["packages", "apps"]).violations).toEqual([]);
    expect(checkDeclaredEdges().violations).toEqual([]);
  });

  it("an allowed import passes (the probe itself is not a violation)", () => {
    expect(
      plant("packages/pod/src", 'import { ToolError } from "@yoi/llm-worker";\nexport { ToolError };\n'),
    ).toEqual([]);
  });

  it("fails on an upward import (manifest importing pod)", () => {
    const v = plant(
      "packages/manifest/src",
      'import { createPod } from "@yoi/pod";\nexport { createPod };\n',
    );
    expect(v.join("\n")).toMatch(/layer:@yoi\/manifest/);
  });

  it("fails on an import right after a regex literal", () => {
    const v = plant(
      "packages/llm-client/src",
      'const re = /import("x")/; import { Worker } from "@yoi/llm-worker";\nexport { re, Worker };\n',
    );
    expect(v.join("\n")).toMatch(/layer:@yoi\/llm-client/);
  });

  it("fails on a dynamic upward import", () => {
    const v = plant("packages/timeline/src", 'export const load = () => import("@yoi/llm-worker");\n');
    expect(v.join("\n")).toMatch(/layer:@yoi\/timeline/);
  });

  it("fails on the sideways pair (worker-persistence importing compaction)", () => {
    const v = plant(
      "packages/worker-persistence/src",
      'import * as c from "@yoi/compaction";\nexport { c };\n',
    );
    expect(v.join("\n")).toMatch(/layer:@yoi\/worker-persistence/);
  });

  it("fails on an edge the picture does not draw (compaction importing timeline)", () => {
    const v = plant("packages/compaction/src", 'import * as t from "@yoi/timeline";\nexport { t };\n');
    expect(v.join("\n")).toMatch(/layer:@yoi\/compaction/);
  });

  it("fails on a deep path into another package's internals", () => {
    const v = plant(
      "packages/pod/src",
      'import { classifyWithTable } from "@yoi/llm-client/src/adapters/classify.ts";\nexport { classifyWithTable };\n',
    );
    expect(v.join("\n")).toMatch(/not-to-unresolvable/);
  });

  it("fails on a relative import into a sibling package", () => {
    const v = plant(
      "packages/pod/src",
      'import { redactSecrets } from "../../llm-client/src/redact.ts";\nexport { redactSecrets };\n',
    );
    expect(v.join("\n")).toMatch(/no-relative-into-another-package/);
  });

  it("fails on an import of a package that is not declared", () => {
    const v = plant("packages/timeline/src", 'import { z } from "zod";\nexport { z };\n');
    // Under pnpm an undeclared package does not resolve at all; a hoisted one is npm-no-pkg.
    expect(v.join("\n")).toMatch(/not-to-unresolvable|no-undeclared-dependency/);
  });

  it("does not read an import inside a string or a comment", () => {
    const src =
      '// import "@yoi/pod";\nexport const s = \'import("@yoi/pod")\';\nexport const t = `from "@yoi/cli"`;\n';
    expect(plant("packages/manifest/src", src)).toEqual([]);
  });
});

describe("scripts/layers.mjs", () => {
  it("puts every workspace package in a layer, bottom first, the sideways pair apart", () => {
    expect(LAYERS[0]).toEqual(["@yoi/manifest"]);
    expect(allowedImports("@yoi/llm-client")).toEqual(["@yoi/manifest"]);
    expect(allowedImports("@yoi/worker-persistence")).not.toContain("@yoi/compaction");
    expect(allowedImports("@yoi/compaction")).not.toContain("@yoi/worker-persistence");
    expect(allowedImports("@yoi/cli")).toContain("@yoi/pod");
    expect(() => allowedImports("@yoi/unknown")).toThrow(/no layer/);
  });
});
