/**
 * API keys saved by `yoi setup`: `~/.yoi/credentials.json`, mode 0600 in a
 * 0700 directory, written atomically (a temp file renamed over the old
 * one), keyed by the variable a provider's `apiKeyEnv` names
 * (`ANTHROPIC_API_KEY`). A key in the environment wins over a saved one:
 * the file is the source of last resort (see llm-client's
 * `modelEndpoint`). The file's content is never shown: a damaged file is an
 * error naming the file and what is wrong with it, not its text.
 */
import { readFile, rm } from "node:fs/promises";
import * as path from "node:path";
import { YoiError } from "./errors/yoi-error.ts";
import { writePrivateFile } from "./private-file.ts";

/** Saved keys by variable name. */
export type Credentials = Readonly<Record<string, string>>;

/**
 * What is wrong with the credentials file, as a stable string:
 *
 * - `invalid_credentials_file`: it is not JSON, has no `keys` object, or a key is not a string
 *   under a variable name.
 * - `unreadable_credentials_file`: the operating system refused to read it (permissions, a directory).
 */
export type CredentialsErrorCode = "invalid_credentials_file" | "unreadable_credentials_file";

/** The credentials file cannot be used; the message names it and says what to do. */
export class CredentialsError extends YoiError<CredentialsErrorCode> {
  override readonly name = "CredentialsError";
  static override readonly marker: symbol = Symbol.for("yoi.error.CredentialsError");
}

/** Where the keys are kept for the user whose home is `homeDir`. */
export function credentialsFile(homeDir: string): string {
  return path.join(homeDir, ".yoi", "credentials.json");
}

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The saved keys (none when there is no file). Throws {@link CredentialsError} for a damaged or unreadable file. */
export async function readCredentials(homeDir: string): Promise<Credentials> {
  const file = credentialsFile(homeDir);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return {};
    throw new CredentialsError(
      "unreadable_credentials_file",
      `${file} cannot be read (${code ?? "unknown error"}); fix its permissions or remove it with yoi logout`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw damaged(file, "it is not valid JSON");
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (
    typeof parsed !== "object" ||
    parsed === null ||
    typeof keys !== "object" ||
    keys === null ||
    Array.isArray(keys)
  )
    throw damaged(file, 'it has no "keys" object');
  for (const [name, value] of Object.entries(keys)) {
    if (!VARIABLE.test(name)) throw damaged(file, `"${name}" is not a variable name`);
    if (typeof value !== "string" || value.trim() === "")
      throw damaged(file, `the key of ${name} is not a string`);
  }
  return keys as Credentials;
}

/** Saves `key` for the variable `keyEnv`, keeping the other saved keys. */
export async function saveCredential(homeDir: string, keyEnv: string, key: string): Promise<void> {
  if (!VARIABLE.test(keyEnv))
    throw new CredentialsError("invalid_credentials_file", `"${keyEnv}" is not a variable name`);
  const keys = { ...(await readCredentials(homeDir)), [keyEnv]: key.trim() };
  await writeKeys(homeDir, keys);
}

/**
 * Removes the saved keys of `keyEnvs` (every saved key when omitted) and
 * returns the names removed. The file goes when no key is left. A damaged
 * file is removed whole when every key is asked to go.
 */
export async function removeCredentials(homeDir: string, keyEnvs?: readonly string[]): Promise<string[]> {
  let keys: Credentials;
  try {
    keys = await readCredentials(homeDir);
  } catch (error) {
    if (keyEnvs !== undefined || !CredentialsError.isInstance(error)) throw error;
    await rm(credentialsFile(homeDir), { force: true });
    return ["(the damaged file)"];
  }
  const removed = Object.keys(keys).filter((name) => keyEnvs === undefined || keyEnvs.includes(name));
  if (removed.length === 0) return [];
  const left = Object.fromEntries(Object.entries(keys).filter(([name]) => !removed.includes(name)));
  if (Object.keys(left).length === 0) await rm(credentialsFile(homeDir), { force: true });
  else await writeKeys(homeDir, left);
  return removed;
}

async function writeKeys(homeDir: string, keys: Credentials): Promise<void> {
  await writePrivateFile(credentialsFile(homeDir), `${JSON.stringify({ keys }, null, 2)}\n`);
}

function damaged(file: string, why: string): CredentialsError {
  return new CredentialsError(
    "invalid_credentials_file",
    `${file} is damaged (${why}); run yoi logout to remove it and yoi setup to save a key again`,
  );
}
