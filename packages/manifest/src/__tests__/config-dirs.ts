import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A throwaway home and project directory pair, each with a `.yoi/` directory. */
export interface ConfigDirs {
  home: string;
  cwd: string;
  userFile: string;
  projectFile: string;
  writeUser(text: string): void;
  writeProject(text: string): void;
  cleanup(): void;
}

export function makeConfigDirs(): ConfigDirs {
  const root = mkdtempSync(join(tmpdir(), "yoi-manifest-"));
  const home = join(root, "home");
  const cwd = join(root, "work", "project");
  mkdirSync(join(home, ".yoi"), { recursive: true });
  mkdirSync(join(cwd, ".yoi"), { recursive: true });
  const userFile = join(home, ".yoi", "config.jsonc");
  const projectFile = join(cwd, ".yoi", "config.jsonc");
  return {
    home,
    cwd,
    userFile,
    projectFile,
    writeUser: (text) => writeFileSync(userFile, text),
    writeProject: (text) => writeFileSync(projectFile, text),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}
