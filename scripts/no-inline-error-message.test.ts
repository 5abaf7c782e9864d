/**
 * The Biome plugin scripts/biome/no-inline-error-message.grit (enabled in
 * biome.json, so `pnpm check` runs it) rejects the inline message idiom.
 * Planted probe files in a real package are linted with the repository's
 * own configuration: the idiom's forms fail, `errorMessage` and `String` of
 * values that are not caught pass.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const biome = join(root, "node_modules", ".bin", "biome");

const PROBES: Record<string, { source: string; flagged: number }> = {
  ternary: {
    source: `export function f(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
`,
    flagged: 1,
  },
  ternaryWithStack: {
    source: `export function f(error: unknown): string {
  return \`crashed: \${error instanceof Error ? (error.stack ?? error.message) : String(error)}\`;
}
`,
    flagged: 1,
  },
  stringOfCaught: {
    source: `export function f(run: () => void): string {
  try {
    run();
    return "ok";
  } catch (failure: unknown) {
    if (failure) return \`failed: \${String(failure)}\`;
    return "failed";
  }
}
`,
    flagged: 1,
  },
  stringInCatchCallback: {
    source: `export async function f(p: Promise<string>): Promise<string> {
  return p.catch((reason: unknown) => String(reason));
}
`,
    flagged: 1,
  },
  allowed: {
    source: `import { errorMessage } from "@yoi/manifest/errors";

export async function f(p: Promise<string>, values: number[]): Promise<string[]> {
  const shown = values.map((v) => String(v));
  try {
    shown.push(await p);
  } catch (error) {
    shown.push(errorMessage(error), String(values.length));
  }
  return p.catch((error: unknown) => errorMessage(error)).then((s) => [...shown, s]);
}
`,
    flagged: 0,
  },
};

interface Diagnostic {
  category: string;
  message: string;
  location: { path: string };
}

const planted = Object.fromEntries(
  Object.keys(PROBES).map((name) => [
    name,
    `packages/pod/src/__error_message_probe_${name}_${randomUUID().slice(0, 8)}.ts`,
  ]),
);
afterAll(() => {
  for (const file of Object.values(planted)) rmSync(join(root, file), { force: true });
});

/** Lints the planted files with the repository's biome.json; the plugin's diagnostics by file. */
function lintProbes(): Map<string, Diagnostic[]> {
  for (const [name, file] of Object.entries(planted)) writeFileSync(join(root, file), PROBES[name]!.source);
  let out: string;
  try {
    out = execFileSync(
      biome,
      ["lint", "--reporter=json", "--max-diagnostics=none", ...Object.values(planted)],
      {
        cwd: root,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
  } catch (error) {
    // Biome exits 1 when it reports errors; the report is still on stdout.
    out = (error as { stdout: string }).stdout;
  }
  const report = JSON.parse(out) as { diagnostics: Diagnostic[] };
  const byFile = new Map<string, Diagnostic[]>();
  for (const d of report.diagnostics) {
    if (d.category !== "plugin") continue;
    byFile.set(d.location.path, [...(byFile.get(d.location.path) ?? []), d]);
  }
  return byFile;
}

describe("no inline errorMessage (Biome plugin)", () => {
  const found = lintProbes();
  for (const [name, probe] of Object.entries(PROBES)) {
    it(`${name}: ${probe.flagged === 0 ? "passes" : "is rejected"}`, () => {
      const diagnostics = found.get(planted[name]!) ?? [];
      expect(diagnostics).toHaveLength(probe.flagged);
      for (const d of diagnostics)
        expect(d.message).toMatch(/errorMessage\(error\) from @yoi\/manifest\/errors/);
    });
  }
});
