/**
 * The files yoi keeps for one user under `~/.yoi` that are theirs alone:
 * the saved API keys and the prompt history (what they typed, in every
 * project). A session's tools never open them, even when the session's
 * scope holds the home directory.
 */
import * as path from "node:path";
import { credentialsFile } from "./credentials.ts";
import { CONFIG_DIR_NAME } from "./defaults.ts";

/** The interactive prompt's history of the user whose home is `homeDir`. */
export function promptHistoryFile(homeDir: string): string {
  return path.join(homeDir, CONFIG_DIR_NAME, "history");
}

/** The saved keys and the prompt history of the user whose home is `homeDir`. */
export function privateUserFiles(homeDir: string): string[] {
  return [credentialsFile(homeDir), promptHistoryFile(homeDir)];
}
