import { mkdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, jsonLines, runYoi, tempWorld } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/** Two calls of claude-haiku-4-5 (list prices $1 in, $5 out, $0.10 cached read per million). */
async function twoCalls() {
  const server = await startScriptedServer({
    provider: "anthropic",
    validate: true,
    script: [
      {
        type: "reply",
        toolCalls: [{ id: "call_list", name: "list_dir", arguments: { path: "." } }],
        options: { usage: { inputTokens: 100_000, outputTokens: 1_000 } },
      },
      {
        type: "reply",
        text: "Done.",
        options: { usage: { inputTokens: 200_000, outputTokens: 2_000, cacheReadTokens: 100_000 } },
      },
    ],
  });
  servers.push(server);
  return server;
}

describe("cost in print mode's JSON results", () => {
  it("--output json carries cost_usd and usage per model", async () => {
    const server = await twoCalls();
    const { home, project } = await tempWorld({ "a.txt": "a\n" });
    const result = await runYoi(["-p", "--output", "json", "-m", "anthropic/claude-haiku-4-5", "list it"], {
      cwd: project,
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL }),
    });
    expect(result.code).toBe(0);
    const [line] = jsonLines(result.stdout);
    // 100k fresh ($0.10) + 1k out ($0.005), then 100k fresh ($0.10) + 100k cached ($0.01) + 2k out ($0.01)
    expect(line?.cost_usd).toBeCloseTo(0.225, 6);
    expect(line?.models).toEqual({
      "anthropic/claude-haiku-4-5": {
        input_tokens: 300_000,
        output_tokens: 3_000,
        cache_read_tokens: 100_000,
        cache_write_tokens: 0,
        reasoning_tokens: 0,
        calls: 2,
        cost_usd: expect.closeTo(0.225, 6),
      },
    });
    expect(result.stderr).toBe("");
  });

  it("stream-json's result carries them too; a model without prices gets null and a pointer to the config entry", async () => {
    const server = await twoCalls();
    const { home, project } = await tempWorld({ "a.txt": "a\n" });
    // A model only the config knows, without prices.
    const yoiDir = path.join(home, ".yoi");
    await mkdir(yoiDir, { recursive: true });
    await writeFile(
      path.join(yoiDir, "config.jsonc"),
      JSON.stringify({
        models: { "house-model": { provider: "anthropic", contextWindow: 100_000, maxOutputTokens: 4_000 } },
      }),
    );
    const result = await runYoi(["-p", "--output", "stream-json", "-m", "anthropic/house-model", "list it"], {
      cwd: project,
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL }),
    });
    expect(result.code).toBe(0);
    const final = jsonLines(result.stdout).at(-1);
    expect(final).toMatchObject({ type: "result", cost_usd: null });
    expect(final?.models).toMatchObject({ "anthropic/house-model": { calls: 2, cost_usd: null } });
    expect(result.stderr).toContain("no prices known for anthropic/house-model");
    expect(result.stderr).toContain('"models": { "house-model": { "provider": "anthropic", "pricing"');
  });
});
