import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ConfigDirs, makeConfigDirs } from "./__tests__/config-dirs.ts";
import { ConfigError } from "./config-error.ts";
import { type LoadConfigOptions, loadConfig } from "./load-config.ts";

let dirs: ConfigDirs;
beforeEach(() => {
  dirs = makeConfigDirs();
});
afterEach(() => dirs.cleanup());

const USER = "~/.yoi/config.jsonc";

/** Load and return the ConfigError it must throw. */
async function failure(options: LoadConfigOptions = {}): Promise<ConfigError> {
  try {
    await loadConfig({ homeDir: dirs.home, cwd: dirs.cwd, env: {}, ...options });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected loadConfig to fail, but it returned a config");
}

/** The single problem's message, for a user file with `text`. */
async function userFileMessage(text: string): Promise<string> {
  dirs.writeUser(text);
  const err = await failure();
  expect(err.issues).toHaveLength(1);
  return err.message;
}

describe("malformed config files", () => {
  it("1. wrong type: names file, position, field path, expectation and the value found", async () => {
    dirs.writeUser(`{\n  "worker": { "maxTurns": "ten" }\n}`);
    const err = await failure();
    expect(err.message).toBe(`${USER}:2:27: worker.maxTurns: expected a positive integer, found "ten"`);
    expect(err).toMatchObject({
      code: "invalid_value",
      file: dirs.userFile,
      path: "worker.maxTurns",
      found: '"ten"',
      expected: "a positive integer",
    });
    expect(err.issues[0]).toMatchObject({ line: 2, column: 27 });
  });

  it("2. unknown top-level key, with a suggestion", async () => {
    expect(await userFileMessage(`{ "modle": "openai/gpt-5" }`)).toBe(
      `${USER}:1:3: unknown key "modle" at top level — did you mean "model"?`,
    );
  });

  it("3. unknown nested key, with a suggestion; an unlike key lists the known ones", async () => {
    expect(await userFileMessage(`{ "compaction": { "treshold_ratio": 0.5 } }`)).toBe(
      `${USER}:1:19: unknown key "treshold_ratio" in compaction — did you mean "thresholdRatio"?`,
    );
    expect(await userFileMessage(`{ "session": { "colour": "red" } }`)).toBe(
      `${USER}:1:16: unknown key "colour" in session (known keys: dir)`,
    );
  });

  it("4. bad enum value", async () => {
    expect(await userFileMessage(`{ "providers": { "mine": { "kind": "openai" } } }`)).toBe(
      `${USER}:1:36: providers.mine.kind: expected one of "openai-responses", "openai-chat", "anthropic", "gemini", found "openai"`,
    );
    expect(await userFileMessage(`{ "theme": "solarized" }`)).toBe(
      `${USER}:1:12: theme: expected one of "auto", "dark", "light", "dark-colorblind", "light-colorblind", "ansi", found "solarized"`,
    );
  });

  it("4b. terminal settings: editor mode, status line, notifications", async () => {
    expect(await userFileMessage(`{ "editorMode": "vi" }`)).toBe(
      `${USER}:1:17: editorMode: expected one of "emacs", "vim", found "vi"`,
    );
    expect(await userFileMessage(`{ "statusLine": { "type": "command", "command": "  " } }`)).toMatch(
      /statusLine\.command: expected a non-empty shell command/,
    );
    expect(await userFileMessage(`{ "statusLine": { "type": "script", "command": "x" } }`)).toMatch(
      /statusLine\.type: expected "command", found "script"/,
    );
    expect(await userFileMessage(`{ "notifications": { "method": "toast" } }`)).toMatch(
      /notifications\.method: expected one of "auto", "osc9", "osc777", "bell"/,
    );
    dirs.writeUser(`{ "statusLine": { "type": "command", "command": "echo hi" }, "editorMode": "vim" }`);
    const { config } = await loadConfig({ homeDir: dirs.home, cwd: dirs.cwd, env: {} });
    expect(config.statusLine).toEqual({
      type: "command",
      command: "echo hi",
      padding: 0,
      timeoutMs: 5000,
      debounceMs: 300,
    });
    expect(config.editorMode).toBe("vim");
    expect(config.notifications).toEqual({ enabled: true, longTurnSeconds: 30, method: "auto" });
    expect(config.paste).toEqual({ collapseLines: 10 });
  });

  it("5. negative and fractional numbers", async () => {
    expect(await userFileMessage(`{ "toolOutput": { "maxBytes": -1 } }`)).toBe(
      `${USER}:1:31: toolOutput.maxBytes: expected a positive integer, found -1`,
    );
    expect(await userFileMessage(`{ "compaction": { "retainLastTurns": 1.5 } }`)).toBe(
      `${USER}:1:38: compaction.retainLastTurns: expected a non-negative integer, found 1.5`,
    );
  });

  it("6. ratio out of range (0 < r <= 1)", async () => {
    expect(await userFileMessage(`{ "compaction": { "thresholdRatio": 1.5 } }`)).toBe(
      `${USER}:1:37: compaction.thresholdRatio: expected a number greater than 0 and at most 1, found 1.5`,
    );
    expect(await userFileMessage(`{ "compaction": { "thresholdRatio": 0 } }`)).toMatch(/found 0$/);
    dirs.writeUser(`{ "compaction": { "thresholdRatio": 1 } }`);
    await expect(loadConfig({ homeDir: dirs.home, cwd: dirs.cwd, env: {} })).resolves.toBeTruthy();
  });

  it("7. model without a provider part", async () => {
    expect(await userFileMessage(`{ "model": "claude-sonnet-4-5" }`)).toBe(
      `${USER}:1:12: model: expected a model as "<provider>/<model>", like "anthropic/claude-sonnet-4-5", found "claude-sonnet-4-5"`,
    );
  });

  it("8. model naming a provider nobody declared", async () => {
    expect(await userFileMessage(`{\n  "model": "azure/gpt-5"\n}`)).toBe(
      `${USER}:2:12: model: expected a provider declared in \`providers\` ("openai", "anthropic", "gemini") before the "/", found "azure/gpt-5"`,
    );
  });

  it("9. syntax error with line and column", async () => {
    expect(await userFileMessage(`{\n  "model": "openai/gpt-5"\n  "worker": {}\n}`)).toBe(
      `${USER}:3:3: expected a comma, found "worker"`,
    );
    expect(await userFileMessage(`{\n  model: "openai/gpt-5"\n}`)).toBe(
      `${USER}:2:3: unquoted text "model"; property names and strings need double quotes`,
    );
    const err = await failure();
    expect(err.code).toBe("syntax_error");
  });

  it("10. unreadable file (permission denied)", async () => {
    dirs.writeUser(`{ "model": "openai/gpt-5" }`);
    chmodSync(dirs.userFile, 0o000);
    const expected = `${USER}: permission denied (EACCES); expected a file yoi can read — check its permissions`;
    if (process.getuid?.() !== 0) {
      const err = await failure();
      expect(err.message).toBe(expected);
      expect(err.code).toBe("unreadable");
      return;
    }
    // Root reads any file: run the real loader as an unprivileged user instead.
    for (const dir of [dirs.home, `${dirs.home}/..`, `${dirs.home}/.yoi`, dirs.cwd, `${dirs.cwd}/.yoi`])
      chmodSync(dir, 0o755);
    const loader = fileURLToPath(new URL("./load-config.ts", import.meta.url));
    const script = `
      import { loadConfig } from ${JSON.stringify(loader)};
      try { await loadConfig({ homeDir: ${JSON.stringify(dirs.home)}, cwd: ${JSON.stringify(dirs.cwd)}, env: {} }); console.log("LOADED"); }
      catch (e) { console.log(JSON.stringify({ message: e.message, code: e.code })); }`;
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      uid: 65534,
      gid: 65534,
      encoding: "utf8",
      cwd: "/",
    });
    expect(child.stderr).toBe("");
    expect(JSON.parse(child.stdout)).toEqual({ message: expected, code: "unreadable" });
  });

  it("11. the config path is a directory", async () => {
    mkdirSync(dirs.userFile);
    expect((await failure()).message).toBe(`${USER}: is a directory; expected a JSONC config file`);
  });

  it("11b. a symlink loop or a dangling symlink is reported, not skipped", async () => {
    symlinkSync(dirs.userFile, dirs.userFile);
    expect((await failure()).message).toBe(`${USER}: cannot be read (ELOOP); expected a readable file`);
    rmSync(dirs.userFile);
    symlinkSync(`${dirs.home}/dotfiles/yoi.jsonc`, dirs.userFile);
    const err = await failure();
    expect(err.message).toBe(
      `${USER}: is a symbolic link to a file that does not exist; expected a readable file`,
    );
    expect(err.code).toBe("unreadable");
  });

  it("12. empty file, and a file of only comments", async () => {
    expect(await userFileMessage("")).toBe(
      `${USER}:1:1: the file is empty; expected a JSON object such as {} (or delete the file)`,
    );
    expect(await userFileMessage("// nothing yet\n")).toBe(
      `${USER}:1:1: the file is only comments; expected a JSON object such as {} (or delete the file)`,
    );
    expect((await failure()).code).toBe("empty_file");
  });

  it("13. bad environment values name the variable", async () => {
    const err = await failure({
      env: {
        YOI_MAX_TURNS: "ten",
        YOI_COMPACTION_ENABLED: "maybe",
        YOI_CONFIG__permissions__rules: "[not json",
        YOI_CONFIG__worker__maxTurn: "5",
      },
    });
    expect(err.issues.map((i) => i.message)).toEqual([
      'env:YOI_COMPACTION_ENABLED: compaction.enabled: expected true or false, found "maybe"',
      expect.stringMatching(/^env:YOI_CONFIG__permissions__rules: permissions\.rules: expected JSON \(.+\)$/),
      'env:YOI_CONFIG__worker__maxTurn: unknown key "maxTurn" in worker — did you mean "maxTurns"?',
      'env:YOI_MAX_TURNS: worker.maxTurns: expected a positive integer, found "ten"',
    ]);
    expect(err.issues[3]?.file).toBe("env:YOI_MAX_TURNS");
  });

  it("13a. a bad value below a union (sandbox: true, false or an object) names its variable", async () => {
    const err = await failure({ env: { YOI_CONFIG__sandbox__network: "maybe" } });
    expect(err.issues.map((i) => i.file)).toEqual(["env:YOI_CONFIG__sandbox__network"]);
    expect(err.message).toContain("sandbox: expected true, false, or an object { enabled, network }");
  });

  it("13b. a bad JSON value for headers does not echo the value", async () => {
    const err = await failure({
      env: { YOI_CONFIG__providers__openai__headers: '{"Authorization": "Bearer sk-live-1' },
    });
    expect(err.message).toBe(
      "env:YOI_CONFIG__providers__openai__headers: providers.openai.headers: expected JSON (not valid JSON; the value is not shown)",
    );
  });

  it("14. bad permission rules", async () => {
    dirs.writeProject(`{
  "permissions": {
    "rules": [
      { "tool": "bash", "pattern": "git *", "action": "allow" },
      { "tool": "", "action": "deny" },
      { "tool": "write_file", "action": "maybe" },
      { "match": "*.env" , "action": "deny" },
    ],
    "default": { "bash": "yes" },
  },
}`);
    const err = await failure();
    const f = dirs.projectFile;
    expect(err.issues.map((i) => i.message)).toEqual([
      `${f}:4:25: unknown key "pattern" in permissions.rules[0] (known keys: tool, match, action)`,
      `${f}:5:17: permissions.rules[1].tool: expected a tool name or glob, like "bash" or "*", found an empty string ""`,
      `${f}:6:41: permissions.rules[2].action: expected one of "allow", "deny", "ask", found "maybe"`,
      `${f}:7:7: permissions.rules[3].tool: missing; expected a tool name or glob, like "bash" or "*"`,
      `${f}:9:26: permissions.default.bash: expected one of "allow", "deny", "ask", found "yes"`,
    ]);
  });

  it("15. top-level value that is not an object", async () => {
    expect(await userFileMessage(`["openai/gpt-5"]`)).toBe(
      `${USER}:1:1: expected an object at top level, found an array`,
    );
  });

  it("16. duplicate keys", async () => {
    expect(await userFileMessage(`{ "model": "openai/gpt-5",\n  "model": "openai/o3" }`)).toBe(
      `${USER}:2:3: duplicate key "model" (JSON would silently keep only the last one); keep one`,
    );
  });

  it("17. an API key in the file is refused and never echoed", async () => {
    dirs.writeUser(`{ "providers": {
      "openai": { "apiKey": "sk-live-abcdef" },
      "anthropic": { "apiKeyEnv": "sk-ant-123456" },
      "proxy": { "kind": "anthropic", "headers": { "Authorization": 42 } },
    } }`);
    const err = await failure();
    expect(err.message).not.toContain("sk-");
    expect(err.issues.map((i) => i.message)).toEqual([
      `${USER}:2:19: unknown key "apiKey" in providers.openai — API keys do not belong in config files: put the key in an environment variable and name that variable with "apiKeyEnv"`,
      `${USER}:3:35: providers.anthropic.apiKeyEnv: expected the name of an environment variable, like "OPENAI_API_KEY", found a string of 13 characters (not shown)`,
      `${USER}:4:69: providers.proxy.headers.Authorization: expected a string header value, found 42`,
    ]);
  });

  it("18. a new model without its numbers; a model entry naming an unknown provider", async () => {
    dirs.writeUser(`{ "models": {
      "llama3": { "provider": "openai-chat" },
      "gpt-5": { "provider": "azure" },
    } }`);
    const err = await failure();
    expect(err.issues.map((i) => i.message)).toEqual([
      `${USER}:2:7: models.llama3.contextWindow: missing; expected a positive integer (required: "llama3" is not in the built-in catalog)`,
      `${USER}:2:7: models.llama3.maxOutputTokens: missing; expected a positive integer (required: "llama3" is not in the built-in catalog)`,
      `${USER}:3:30: models.gpt-5.provider: expected a provider declared in \`providers\` ("openai", "anthropic", "gemini") or a provider kind ("openai-responses", "openai-chat", "anthropic", "gemini"), found "azure"`,
    ]);
  });

  it("19. a new provider without a kind; a base URL that is not http(s)", async () => {
    dirs.writeUser(`{ "providers": { "local": { "baseURL": "localhost:11434" } } }`);
    const err = await failure();
    expect(err.issues.map((i) => i.message)).toEqual([
      `${USER}:1:40: providers.local.baseURL: expected an http(s) URL, like "http://localhost:11434/v1", found "localhost:11434"`,
    ]);
    dirs.writeUser(`{ "providers": { "local": { "baseURL": "http://localhost:11434/v1" } } }`);
    expect((await failure()).message).toBe(
      `${USER}:1:18: providers.local.kind: missing; expected one of "openai-responses", "openai-chat", "anthropic", "gemini"`,
    );
  });

  it("20. bad overrides name the override source", async () => {
    const err = await failure({ overrides: { worker: { maxTurns: 0 } } as never });
    expect(err.message).toBe("override: worker.maxTurns: expected a positive integer, found 0");
  });

  it("21. both config.jsonc and config.json in one directory", async () => {
    dirs.writeProject("{}");
    writeFileSync(dirs.projectFile.replace(/\.jsonc$/, ".json"), "{}");
    expect((await failure()).message).toBe(
      `${dirs.projectFile}: both config.jsonc and config.json exist in this directory; expected one (merge them into config.jsonc)`,
    );
  });

  it("reports every problem of every source together, in precedence order, and never falls back", async () => {
    dirs.writeUser(`{\n  "worker": { "maxTurns": "ten" },\n  "modle": "x"\n}`);
    dirs.writeProject(`{ "compaction": { "thresholdRatio": 2 }`);
    const err = await failure({ env: { YOI_MAX_TOKENS: "-3" } });
    expect(err.issues.map((i) => i.file)).toEqual([
      dirs.userFile,
      dirs.userFile,
      dirs.projectFile,
      "env:YOI_MAX_TOKENS",
    ]);
    expect(err.message.split("\n")).toEqual([
      "4 problems in the yoi configuration:",
      `  ${USER}:2:27: worker.maxTurns: expected a positive integer, found "ten"`,
      `  ${USER}:3:3: unknown key "modle" at top level — did you mean "model"?`,
      `  ${dirs.projectFile}:1:40: expected "}", found the end of the file`,
      "  env:YOI_MAX_TOKENS: worker.maxTokens: expected a positive integer, found -3",
    ]);
    // The first problem is also on the error itself.
    expect(err).toMatchObject({ file: dirs.userFile, path: "worker.maxTurns" });
  });

  it("a missing .yoi directory or file is not an error", async () => {
    rmSync(`${dirs.home}/.yoi`, { recursive: true });
    rmSync(`${dirs.cwd}/.yoi`, { recursive: true });
    await expect(loadConfig({ homeDir: dirs.home, cwd: dirs.cwd, env: {} })).resolves.toMatchObject({
      files: [],
    });
  });
});

describe("config limits", () => {
  it("a config nested 3,000 levels deep is an error with a location, not a stack overflow", async () => {
    const { mkdtemp, mkdir, writeFile } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { loadConfig } = await import("./load-config.ts");
    const base = await mkdtemp(join(tmpdir(), "yoi-deep-"));
    await mkdir(join(base, "p", ".yoi"), { recursive: true });
    await mkdir(join(base, "h"));
    const depth = 3000;
    await writeFile(
      join(base, "p", ".yoi", "config.jsonc"),
      `{"worker":${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}`,
    );
    const error = await loadConfig({ cwd: join(base, "p"), homeDir: join(base, "h"), env: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues[0]).toMatchObject({ code: "too_deep", line: 1 });
    expect(String((error as Error).message)).toMatch(
      /config\.jsonc:1:\d+: values are nested more than 64 levels deep/,
    );
    await writeFile(join(base, "p", ".yoi", "config.jsonc"), `{"model":"${"x".repeat(2 * 1024 * 1024)}"}`);
    const large = await loadConfig({ cwd: join(base, "p"), homeDir: join(base, "h"), env: {} }).catch(
      (e: unknown) => e,
    );
    expect((large as ConfigError).issues[0]).toMatchObject({ code: "too_large" });
  });
});
