/**
 * The adapters use the SDKs through their public API only (the package
 * roots, the documented `openai/resources/*` types, and the Anthropic SDK's
 * `client` and `resources/*` entry points, which its `exports` map lists),
 * so a caret range is safe: a minor or patch release of an SDK cannot move
 * what we import.
 * `pnpm --filter @yoi/llm-client test:latest-sdks` runs the adapter tests
 * against the newest versions the registry serves.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("../", import.meta.url));
const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  devDependencies: Record<string, string>;
};

const SDKS = ["openai", "@anthropic-ai/sdk", "@google/genai"];

/**
 * What a source file may import from an SDK: the root, `openai`'s public
 * resource types, or the Anthropic SDK's client without resources and its
 * resources (the adapter builds a client with only `messages`).
 */
const ALLOWED =
  /^(?:openai|openai\/resources\/[a-z/-]+|@anthropic-ai\/sdk|@anthropic-ai\/sdk\/(?:client|resources\/[a-z/-]+)|@google\/genai)$/;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

describe("SDKs through their public API", () => {
  for (const sdk of SDKS) {
    it(`${sdk} is an optional peer dependency with a caret range, tested at that range`, () => {
      expect(manifest.peerDependencies[sdk], `${sdk}: use a caret range so users get security fixes`).toMatch(
        /^\^\d+\.\d+\.\d+$/,
      );
      // Installing @yoi/llm-client must not install every provider's SDK.
      expect(manifest.peerDependenciesMeta[sdk]?.optional).toBe(true);
      expect(manifest.dependencies[sdk]).toBeUndefined();
      expect(manifest.devDependencies[sdk], `${sdk}: the tests install the range users are told`).toBe(
        manifest.peerDependencies[sdk],
      );
    });
  }

  it("no source file imports an SDK-internal path", () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(join(packageDir, "src"))) {
      const text = readFileSync(file, "utf8");
      for (const match of text.matchAll(/\bfrom\s+["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
        const spec = match[1] ?? match[2]!;
        const isSdk = SDKS.some((sdk) => spec === sdk || spec.startsWith(`${sdk}/`));
        if (isSdk && !ALLOWED.test(spec)) offenders.push(`${file.slice(packageDir.length)}: ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("the Anthropic SDK's exports map lists the entry points the adapter imports", () => {
    const sdkManifest = JSON.parse(
      readFileSync(join(packageDir, "node_modules", "@anthropic-ai", "sdk", "package.json"), "utf8"),
    ) as { exports: Record<string, unknown> };
    expect(sdkManifest.exports["./client"]).toBeTruthy();
    expect(sdkManifest.exports["./resources/*"]).toBeTruthy();
  });

  it("an SDK-internal path is caught (the check can fail)", () => {
    expect(ALLOWED.test("openai/core/streaming")).toBe(false);
    expect(ALLOWED.test("@anthropic-ai/sdk/core/streaming")).toBe(false);
    expect(ALLOWED.test("@anthropic-ai/sdk/lib/internal/tracing")).toBe(false);
    expect(ALLOWED.test("@anthropic-ai/sdk/resources/messages")).toBe(true);
    expect(ALLOWED.test("openai/resources/responses/responses")).toBe(true);
  });
});
