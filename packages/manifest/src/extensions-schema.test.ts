import { describe, expect, it } from "vitest";
import { ConfigSchema } from "./config-schema.ts";
import { checkMcpServer } from "./extensions-schema.ts";

describe("mcpServers entries", () => {
  it("accepts a stdio and an HTTP server", () => {
    expect(checkMcpServer("fs", { command: "node", args: ["s.js"], env: { X: "1" } })).toEqual({
      ok: true,
      server: { command: "node", args: ["s.js"], env: { X: "1" } },
    });
    expect(checkMcpServer("docs", { url: "http://127.0.0.1:8931/mcp", headers: { A: "b" } })).toMatchObject({
      ok: true,
    });
  });

  it.each([
    [{}, 'expected "command" (a program yoi starts) or "url" (a Streamable HTTP server); neither is set'],
    [{ command: "a", url: "http://x" }, 'set either "command" (a program yoi starts) or "url", not both'],
    [{ command: "" }, 'command: the program to run, like "node" or "uvx", found ""'],
    [{ command: "node", args: "x.js" }, 'args: an array of strings, found "x.js"'],
    [{ url: "ftp://x" }, 'url: an http(s) URL, like "http://127.0.0.1:8931/mcp", found "ftp://x"'],
    [
      { command: "node", comand: 1 },
      'unknown key "comand" (known: type, command, args, env, cwd, disabled, startupTimeoutMs, toolTimeoutMs)',
    ],
    [{ command: "node", env: { A: 1 } }, "env.A: a string environment variable value, found 1"],
    ["node x", 'expected an object with "command" or "url"'],
  ])("rejects %j with one message", (entry, message) => {
    expect(checkMcpServer("fs", entry)).toEqual({ ok: false, message });
  });

  it("a malformed entry does not fail the config (the session reports and skips it)", () => {
    const config = ConfigSchema.parse({ mcpServers: { bad: { comand: "x" } } });
    expect(config.mcpServers).toEqual({ bad: { comand: "x" } });
    expect(() => ConfigSchema.parse({ mcpServers: { "bad name": {} } })).toThrow(/server name/);
  });
});

describe("hooks", () => {
  it("defaults to none and checks each hook strictly", () => {
    expect(ConfigSchema.parse({}).hooks).toEqual({});
    const config = ConfigSchema.parse({
      hooks: { PreToolUse: [{ matcher: "bash", command: "./check.sh" }] },
    });
    expect(config.hooks.PreToolUse).toEqual([{ matcher: "bash", command: "./check.sh" }]);
    expect(() => ConfigSchema.parse({ hooks: { PreToolCall: [] } })).toThrow();
    expect(() => ConfigSchema.parse({ hooks: { Stop: [{ command: "" }] } })).toThrow(/a shell command/);
  });
});

describe("yoi config output of MCP servers", () => {
  it("redacts credential-like env values and headers of MCP servers", async () => {
    const { makeConfigDirs } = await import("./__tests__/config-dirs.ts");
    const { loadConfig } = await import("./load-config.ts");
    const { formatConfig } = await import("./format-config.ts");
    const dirs = makeConfigDirs();
    try {
      dirs.writeUser(
        JSON.stringify({
          mcpServers: {
            gh: { command: "gh-mcp", env: { GITHUB_TOKEN: "ghp_secret", LOG_LEVEL: "debug" } },
            docs: { url: "http://127.0.0.1:1/mcp", headers: { Authorization: "Bearer abc-secret" } },
          },
        }),
      );
      const loaded = await loadConfig({ homeDir: dirs.home, cwd: dirs.cwd, env: {} });
      const text = formatConfig(loaded, { home: dirs.home });
      expect(text).not.toContain("ghp_secret");
      expect(text).not.toContain("abc-secret");
      expect(text).toMatch(/mcpServers\.gh\.env\.LOG_LEVEL\s+"debug"/);
      expect(text).toMatch(/mcpServers\.gh\.env\.GITHUB_TOKEN\s+<redacted>/);
    } finally {
      dirs.cleanup();
    }
  });
});
