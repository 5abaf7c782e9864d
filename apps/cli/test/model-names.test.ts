import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, runYoi, tempWorld } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe("--model with a bare model name", () => {
  it("resolves through the catalog to the provider that serves it", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "reply", text: "hi there" }],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const result = await runYoi(["-p", "--model", "claude-haiku-4-5", "hello"], {
      cwd: project,
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.baseURL }),
    });
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("hi there\n");
    expect((server.requests[0] as { model: string }).model).toBe("claude-haiku-4-5");
  });

  it("YOI_MODEL may be bare too", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "reply", text: "from env" }],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const result = await runYoi(["-p", "hello"], {
      cwd: project,
      env: cleanEnv(home, {
        YOI_MODEL: "claude-sonnet-4-5",
        ANTHROPIC_API_KEY: "test-key",
        ANTHROPIC_BASE_URL: server.baseURL,
      }),
    });
    expect(result.stdout).toBe("from env\n");
    expect((server.requests[0] as { model: string }).model).toBe("claude-sonnet-4-5");
  });

  it("an unknown bare name: exit 2 and how to write it", async () => {
    const { home, project } = await tempWorld();
    const result = await runYoi(["-p", "--model", "nonesuch-1", "hello"], {
      cwd: project,
      env: cleanEnv(home),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown model "nonesuch-1"');
    expect(result.stderr).toContain('write it as "<provider>/<model>"');
  });
});
