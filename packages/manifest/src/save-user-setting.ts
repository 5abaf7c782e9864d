/**
 * Remembering a choice made in a session (`/theme`) for the next one: the
 * value is set in the user's own config file, `~/.yoi/config.jsonc` (or
 * `config.json` when that is the one there), never in a project's. The file
 * is edited where the key is, or the key is added, so its comments, its
 * other keys and their layout stay as they were; a file that does not exist
 * yet is created. The edited file must still be a valid config, or nothing
 * is written. The write goes through a temp file renamed over the old one
 * (through a symbolic link, to the file it points at), so a reader never
 * sees half of it.
 */
import { realpath } from "node:fs/promises";
import { join } from "node:path";
import { applyEdits, modify } from "jsonc-parser";
import { ConfigError, type ConfigIssue } from "./config-error.ts";
import type { PathSegment } from "./config-path.ts";
import { CONFIG_DIR_NAME, CONFIG_FILE_NAME } from "./defaults.ts";
import { parseJsoncDocument } from "./jsonc-document.ts";
import { documentIssues, readConfigFile } from "./load-config.ts";
import { writePrivateFile } from "./private-file.ts";
import { validateLayer } from "./validate-layer.ts";

/**
 * Sets `path` to `value` in the user config under `homeDir` and returns
 * the file written. Throws a {@link ConfigError} (nothing written) when
 * the file cannot be read or edited safely: a syntax error, both
 * `config.jsonc` and `config.json`, or a result the schema rejects.
 */
export async function saveUserSetting(
  homeDir: string,
  path: readonly PathSegment[],
  value: unknown,
): Promise<string> {
  const dir = join(homeDir, CONFIG_DIR_NAME);
  const issues: ConfigIssue[] = [];
  const existing = await readConfigFile(dir, homeDir, issues);
  if (issues.length > 0) throw new ConfigError(issues);
  const file = existing?.path ?? join(dir, CONFIG_FILE_NAME);
  const text = existing?.text ?? "{}\n";
  const before = parseJsoncDocument(text);
  const unreadable = documentIssues(before, file, homeDir);
  if (unreadable.length > 0) throw new ConfigError(unreadable);
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const edits = modify(text, [...path], value, {
    formattingOptions: { insertSpaces: true, tabSize: 2, eol },
  });
  const edited = applyEdits(text, edits);
  const after = parseJsoncDocument(edited);
  const shape = documentIssues(after, file, homeDir);
  const wrong =
    shape.length > 0
      ? shape
      : validateLayer(after.value as Record<string, unknown>, {
          fileFor: () => file,
          locate: after.locate,
          home: homeDir,
        });
  if (wrong.length > 0) throw new ConfigError(wrong);
  const target = existing === undefined ? file : await realpath(file);
  await writePrivateFile(target, edited.endsWith(eol) ? edited : `${edited}${eol}`);
  return file;
}
