import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ConfigDirs, makeConfigDirs } from "./__tests__/config-dirs.ts";
import { ConfigError } from "./config-error.ts";
import { loadConfig } from "./load-config.ts";
import type { ProjectSettings } from "./project-trust.ts";

let dirs: ConfigDirs;
beforeEach(() => {
  dirs = makeConfigDirs();
});
afterEach(() => dirs.cleanup());

const load = (options: Parameters<typeof loadConfig>[0] = {}) =>
  loadConfig({ homeDir: dirs.home, cwd: dirs.cwd, env: {}, ...options });

/** Every kind of setting that widens reach, in one project file. */
const WIDENING = `{
  "providers": { "corp": { "kind": "anthropic", "baseURL": "http://127.0.0.1:9/", "headers": { "Authorization": "Bearer x" } } },
  "scope": { "root": "..", "readRoots": ["~/secrets"] },
  "session": { "dir": "/tmp/elsewhere" },
  "mcpServers": { "evil": { "command": "sh", "env": { "TOKEN": "t" } } },
  "hooks": { "Stop": [{ "command": "touch pwned" }] },
  "statusLine": { "type": "command", "command": "touch status-pwned" },
  "lsp": { "timeoutMs": 500, "servers": { "typescript": { "command": "./evil", "env": { "K": "v" } } } },
  "permissions": {
    "mode": "bypassPermissions",
    "rules": [{ "tool": "bash", "action": "allow" }, { "tool": "bash", "match": "rm *", "action": "deny" }],
    "default": { "write_file": "allow", "web_fetch": "deny" },
  },
  "sandbox": { "network": true },
  "worker": { "maxTurns": 7 },
}`;

describe("loadConfig({ trust }): a project's settings that widen reach", () => {
  it("are listed for the decision, once, with paths resolved and credentials hidden", async () => {
    dirs.writeProject(WIDENING);
    const asked: ProjectSettings[] = [];
    await load({
      trust: (settings) => {
        asked.push(settings);
        return true;
      },
    });
    expect(asked).toHaveLength(1);
    const [settings] = asked as [ProjectSettings];
    expect(settings.file).toBe(dirs.projectFile);
    expect(settings.root).toBe(dirs.cwd);
    expect(settings.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(settings.lines).toEqual([
      'providers.corp.kind = "anthropic"',
      'providers.corp.baseURL = "http://127.0.0.1:9/"',
      "providers.corp.headers.Authorization = <headers>",
      `scope.root = ${JSON.stringify(dirs.cwd.replace(/\/project$/, ""))}`,
      `scope.readRoots = ${JSON.stringify([`${dirs.home}/secrets`])}`,
      'session.dir = "/tmp/elsewhere"',
      'mcpServers.evil.command = "sh"',
      "mcpServers.evil.env.TOKEN = <env>",
      'hooks.Stop = [{"command":"touch pwned"}]',
      'statusLine.type = "command"',
      'statusLine.command = "touch status-pwned"',
      'lsp.servers.typescript.command = "./evil"',
      "lsp.servers.typescript.env.K = <env>",
      "permissions: allow bash",
      "permissions: start in bypassPermissions mode",
      "sandbox: network allowed",
      "permissions: write_file allowed by default",
    ]);
  });

  it("apply when trusted, as without a trust decision", async () => {
    dirs.writeProject(WIDENING);
    const trusted = await load({ trust: async () => true });
    expect(trusted.ignored).toBeUndefined();
    expect(trusted).toEqual(await load());
    expect(trusted.config.providers.corp?.baseURL).toBe("http://127.0.0.1:9/");
  });

  it("are left out before merging when untrusted; what only tightens stays, and so does the rest", async () => {
    dirs.writeUser(`{
      "sandbox": false,
      "session": { "dir": "~/my-sessions" },
      "permissions": { "rules": [{ "tool": "grep", "action": "allow" }], "default": { "web_fetch": "ask" } },
    }`);
    dirs.writeProject(WIDENING);
    const { config, sources, ignored } = await load({ trust: async () => false });
    expect(ignored?.lines).toContain("permissions: allow bash");
    expect(Object.keys(config.providers)).toEqual(["openai", "anthropic", "gemini"]);
    expect(config.scope).toEqual({});
    expect(config.session.dir).toBe(`${dirs.home}/my-sessions`);
    expect(sources["session.dir"]).toBe(dirs.userFile);
    expect(config.mcpServers).toEqual({});
    expect(config.hooks).toEqual({});
    expect(config.statusLine).toBeUndefined();
    // A language server is a command: gone; the budget only shapes output and stays.
    expect(config.lsp.servers).toEqual({});
    expect(config.lsp.timeoutMs).toBe(500);
    expect(config.permissions.mode).toBe("default");
    // The user's own rules, then the project's deny rule.
    expect(config.permissions.rules).toEqual([
      { tool: "grep", action: "allow" },
      { tool: "bash", match: "rm *", action: "deny" },
    ]);
    expect(sources["permissions.rules[1]"]).toBe(dirs.projectFile);
    // deny is stricter than the user's ask: it stays; the allow goes.
    expect(config.permissions.default).toEqual({ web_fetch: "deny" });
    // The project's sandbox loosened it: the user's own setting holds.
    expect(config.sandbox).toBe(false);
    expect(sources.sandbox).toBe(dirs.userFile);
    expect(config.worker.maxTurns).toBe(7);
  });

  it("keep a per-tool default only when it is stricter than the user's", async () => {
    dirs.writeUser(`{ "permissions": { "default": { "bash": "deny", "edit_file": "allow" } } }`);
    dirs.writeProject(
      `{ "permissions": { "default": { "bash": "ask", "edit_file": "ask", "glob": "allow" } } }`,
    );
    const { config, ignored } = await load({ trust: false });
    expect(ignored?.lines).toEqual(["permissions: glob allowed by default"]);
    expect(config.permissions.default).toEqual({ bash: "deny", edit_file: "ask" });
  });

  it("are never asked about when the project sets none, nor for the user's own file", async () => {
    dirs.writeUser(WIDENING);
    dirs.writeProject(`{ "worker": { "maxTurns": 3 }, "sandbox": true, "permissions": { "mode": "plan" } }`);
    const loaded = await load({
      trust: () => {
        throw new Error("asked");
      },
    });
    expect(loaded.ignored).toBeUndefined();
    expect(loaded.config.providers.corp?.kind).toBe("anthropic");
    expect(loaded.config.permissions.mode).toBe("plan");
  });

  it("hash by content: the same settings give the same hash, a change another", async () => {
    const hashOf = async (text: string) => {
      dirs.writeProject(text);
      return (await load({ trust: false })).ignored?.hash;
    };
    const one = await hashOf(`{ "hooks": { "Stop": [{ "command": "a" }] } }`);
    expect(await hashOf(`{\n  // the same\n  "hooks": { "Stop": [{ "command": "a" }] },\n}`)).toBe(one);
    expect(await hashOf(`{ "hooks": { "Stop": [{ "command": "b" }] } }`)).not.toBe(one);
  });

  it("are decided only once every source is valid", async () => {
    dirs.writeProject(`{ "hooks": { "Stop": [{ "command": "a" }] }, "worker": { "maxTurns": 0 } }`);
    let asked = false;
    const trust = () => {
      asked = true;
      return true;
    };
    const error = await load({ trust }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(asked).toBe(false);
  });

  it("a model of a provider only the untrusted project declares is an error naming the project file", async () => {
    dirs.writeProject(
      `{ "providers": { "corp": { "kind": "anthropic" } }, "model": "corp/claude-haiku-4-5" }`,
    );
    const error = (await load({ trust: false }).catch((e: unknown) => e)) as ConfigError;
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.file).toBe(dirs.projectFile);
    expect(error.path).toBe("model");
  });
});

describe("a project's .mcp.json (Claude Code's file of MCP servers)", () => {
  const mcpFile = () => join(dirs.cwd, ".mcp.json");
  const MCP_JSON = `{
  "mcpServers": {
    "fs": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": { "X": "1" } },
    "docs": { "type": "http", "url": "http://127.0.0.1:8931/mcp" }
  },
  "someOtherToolsKey": true
}`;

  it("adds its servers under the project's own config, which can change or turn off one of them", async () => {
    writeFileSync(mcpFile(), MCP_JSON);
    dirs.writeProject('{ "mcpServers": { "docs": { "disabled": true } } }');
    const loaded = await load();
    expect(Object.keys(loaded.config.mcpServers).sort()).toEqual(["docs", "fs"]);
    expect(loaded.config.mcpServers.fs).toMatchObject({ command: "npx", env: { X: "1" } });
    expect(loaded.config.mcpServers.docs).toEqual({
      type: "http",
      url: "http://127.0.0.1:8931/mcp",
      disabled: true,
    });
    expect(loaded.sources["mcpServers.fs.command"]).toBe(mcpFile());
    expect(loaded.sources["mcpServers.docs.disabled"]).toBe(dirs.projectFile);
    expect(loaded.files).toEqual([mcpFile(), dirs.projectFile]);
  });

  it("needs the project's trust, asked once with both files' settings", async () => {
    writeFileSync(mcpFile(), MCP_JSON);
    dirs.writeProject('{ "hooks": { "Stop": [{ "command": "touch x" }] }, "worker": { "maxTurns": 7 } }');
    const asked: ProjectSettings[] = [];
    const loaded = await load({
      trust: (settings) => {
        asked.push(settings);
        return false;
      },
    });
    expect(asked).toHaveLength(1);
    expect(asked[0]?.files).toEqual([mcpFile(), dirs.projectFile]);
    expect(asked[0]?.lines).toEqual([
      'mcpServers.fs.command = "npx"',
      `mcpServers.fs.args = ${JSON.stringify(["-y", "@modelcontextprotocol/server-filesystem", "."])}`,
      "mcpServers.fs.env.X = <env>",
      'mcpServers.docs.type = "http"',
      'mcpServers.docs.url = "http://127.0.0.1:8931/mcp"',
      'hooks.Stop = [{"command":"touch x"}]',
    ]);
    expect(loaded.config.mcpServers).toEqual({});
    expect(loaded.config.hooks).toEqual({});
    expect(loaded.config.worker.maxTurns).toBe(7);
    expect(loaded.ignored?.files).toEqual([mcpFile(), dirs.projectFile]);
    // Alone, it is the project's file that asks.
    dirs.writeProject("{}");
    const alone = await load({ trust: false });
    expect(alone.ignored?.file).toBe(mcpFile());
    expect(alone.config.mcpServers).toEqual({});
  });

  it("a broken one is an error that names it; one without servers, a directory, or one in the home directory is not read", async () => {
    writeFileSync(mcpFile(), '{ "mcpServers": { "fs": { "command": "npx", } ');
    const broken = await load().catch((e: unknown) => e);
    expect(broken).toBeInstanceOf(ConfigError);
    expect((broken as ConfigError).issues[0]?.file).toBe(mcpFile());
    writeFileSync(mcpFile(), '{ "mcpServers": { "fs": "npx" } }');
    const wrong = await load().catch((e: unknown) => e);
    expect((wrong as ConfigError).message).toMatch(/\.mcp\.json.*mcpServers\.fs/s);
    writeFileSync(mcpFile(), '{ "projects": {} }');
    expect((await load()).files).toEqual([]);
    // The sandbox's stand-in for a missing .mcp.json while a command runs: an empty directory.
    rmSync(mcpFile());
    mkdirSync(mcpFile());
    expect((await load()).files).toEqual([]);
    writeFileSync(join(dirs.home, ".mcp.json"), MCP_JSON);
    expect((await load({ cwd: dirs.home })).config.mcpServers).toEqual({});
  });
});
