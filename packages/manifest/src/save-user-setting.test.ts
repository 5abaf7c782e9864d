import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ConfigDirs, makeConfigDirs } from "./__tests__/config-dirs.ts";
import { ConfigError } from "./config-error.ts";
import { loadConfig } from "./load-config.ts";
import { saveUserSetting } from "./save-user-setting.ts";

let dirs: ConfigDirs;
afterEach(() => dirs?.cleanup());

describe("saveUserSetting", () => {
  it("creates the user config when there is none, and the next load reads the value from it", async () => {
    dirs = makeConfigDirs();
    rmSync(join(dirs.home, ".yoi"), { recursive: true });
    const file = await saveUserSetting(dirs.home, ["theme"], "light");
    expect(file).toBe(dirs.userFile);
    const loaded = await loadConfig({ homeDir: dirs.home, cwd: dirs.cwd, env: {} });
    expect(loaded.config.theme).toBe("light");
    expect(loaded.sources.theme).toBe(dirs.userFile);
  });

  it("keeps comments, other keys and their layout; replaces the key where it is", async () => {
    dirs = makeConfigDirs();
    const text = [
      "// my settings",
      "{",
      '  "model": "anthropic/claude-haiku-4-5", // the cheap one',
      '  "theme": "dark",',
      "  /* the rest */",
      '  "editorMode": "vim",',
      "}",
      "",
    ].join("\n");
    dirs.writeUser(text);
    await saveUserSetting(dirs.home, ["theme"], "light");
    expect(readFileSync(dirs.userFile, "utf8")).toBe(text.replace('"theme": "dark"', '"theme": "light"'));
    await saveUserSetting(dirs.home, ["theme"], "dark-colorblind");
    expect(readFileSync(dirs.userFile, "utf8")).toContain('"theme": "dark-colorblind",');
  });

  it("adds the key to a file without it, CRLF line ends kept", async () => {
    dirs = makeConfigDirs();
    dirs.writeUser('{\r\n  // keep me\r\n  "editorMode": "vim"\r\n}\r\n');
    await saveUserSetting(dirs.home, ["theme"], "ansi");
    const text = readFileSync(dirs.userFile, "utf8");
    expect(text).toContain("// keep me");
    expect(text.split("\r\n").length).toBeGreaterThan(4);
    expect(text.replace(/\r\n/g, "")).not.toContain("\n");
    const loaded = await loadConfig({ homeDir: dirs.home, cwd: dirs.cwd, env: {} });
    expect(loaded.config.theme).toBe("ansi");
    expect(loaded.config.editorMode).toBe("vim");
  });

  it("edits config.json when that is the user's file, never the project's", async () => {
    dirs = makeConfigDirs();
    const json = join(dirs.home, ".yoi", "config.json");
    writeFileSync(json, '{ "editorMode": "vim" }\n');
    dirs.writeProject('{ "theme": "dark" }\n');
    expect(await saveUserSetting(dirs.home, ["theme"], "light")).toBe(json);
    expect(JSON.parse(readFileSync(json, "utf8"))).toEqual({ editorMode: "vim", theme: "light" });
    expect(existsSync(dirs.userFile)).toBe(false);
    expect(readFileSync(dirs.projectFile, "utf8")).toBe('{ "theme": "dark" }\n');
  });

  it("writes through a symbolic link to the file it points at", async () => {
    dirs = makeConfigDirs();
    const real = join(dirs.home, "dotfiles", "yoi.jsonc");
    mkdirSync(join(dirs.home, "dotfiles"));
    writeFileSync(real, '{ "theme": "dark" }\n');
    symlinkSync(real, dirs.userFile);
    await saveUserSetting(dirs.home, ["theme"], "light");
    expect(lstatSync(dirs.userFile).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, "utf8")).toContain('"theme": "light"');
  });

  it("writes nothing to a file it cannot edit safely, and says where and why", async () => {
    dirs = makeConfigDirs();
    const broken = '{ "theme": "dark", oops }\n';
    dirs.writeUser(broken);
    const error = await saveUserSetting(dirs.home, ["theme"], "light").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe("syntax_error");
    expect((error as ConfigError).message).toContain("config.jsonc:1:");
    expect(readFileSync(dirs.userFile, "utf8")).toBe(broken);

    dirs.writeUser('{ "theme": "dark" }\n');
    const wrong = await saveUserSetting(dirs.home, ["theme"], "neon").catch((e: unknown) => e);
    expect((wrong as ConfigError).code).toBe("invalid_value");
    expect((wrong as ConfigError).message).toMatch(/theme/);
    expect(readFileSync(dirs.userFile, "utf8")).toBe('{ "theme": "dark" }\n');

    writeFileSync(join(dirs.home, ".yoi", "config.json"), "{}\n");
    const both = await saveUserSetting(dirs.home, ["theme"], "light").catch((e: unknown) => e);
    expect((both as ConfigError).code).toBe("ambiguous_file");

    const list = "[1, 2]\n";
    rmSync(join(dirs.home, ".yoi", "config.json"));
    dirs.writeUser(list);
    const array = await saveUserSetting(dirs.home, ["theme"], "light").catch((e: unknown) => e);
    expect((array as ConfigError).message).toContain("expected an object at top level");
    expect(readFileSync(dirs.userFile, "utf8")).toBe(list);
  });
});
