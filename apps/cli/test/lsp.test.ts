/**
 * `yoi lsp status` as it ships: a real pyright started and stopped, a
 * configured program that does not exist, an entry that cannot be a server.
 */
import { mkdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { cleanEnv, runYoi, tempWorld } from "./helpers.ts";

/** pyright, a devDependency: a real language server. */
const PYRIGHT = fileURLToPath(new URL("../node_modules/pyright/langserver.index.js", import.meta.url));

async function userConfig(home: string, config: unknown): Promise<void> {
  await mkdir(path.join(home, ".yoi"), { recursive: true });
  await writeFile(path.join(home, ".yoi", "config.jsonc"), JSON.stringify(config));
}

describe("yoi lsp status", () => {
  it("starts each server it finds and says which are ready, missing or invalid", async () => {
    const { home, project } = await tempWorld();
    await userConfig(home, {
      lsp: {
        servers: {
          python: { command: process.execPath, args: [PYRIGHT, "--stdio"] },
          typescript: { command: "/nonexistent/typescript-language-server" },
          rust: { args: ["--stdio"] },
        },
      },
    });
    const r = await runYoi(["lsp", "status"], { cwd: project, env: cleanEnv(home) });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^python ready · .+ · \.py \.pyi · ready in \d+ ms · pid \d+$/m);
    expect(r.stdout).toMatch(
      /^typescript not found · \/nonexistent\/typescript-language-server · \.ts .*\n {2}\/nonexistent\/typescript-language-server does not exist$/m,
    );
    expect(r.stdout).toMatch(/^rust invalid\n {2}lsp.servers.rust needs "command" and "extensions"/m);
  }, 90_000);

  it("rejects unknown subcommands and bad config with what to do", async () => {
    const { home, project } = await tempWorld();
    const bad = await runYoi(["lsp", "start"], { cwd: project, env: cleanEnv(home) });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('yoi: yoi lsp takes one subcommand: status (got "start")\n');
    await userConfig(home, { lsp: { timeoutMs: 5, servers: { py: { extensions: ["py"] } } } });
    const config = await runYoi(["lsp", "status"], { cwd: project, env: cleanEnv(home) });
    expect(config.code).toBe(2);
    expect(config.stderr).toContain("lsp.timeoutMs: expected an integer of at least 100 (milliseconds)");
    expect(config.stderr).toContain('expected a file extension like ".ts"');
  }, 60_000);
});
