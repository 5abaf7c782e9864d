/**
 * The one way yoi writes a file of the user's own under `~/.yoi` (saved
 * keys, lasting approvals, trusted projects): in a 0700 directory, mode
 * 0600, through a temp file renamed over the old one, so a reader sees the
 * old content or the new, never half of it, and a crash leaves no torn file.
 */
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import * as path from "node:path";

export async function writePrivateFile(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    await writeFile(tmp, text, { mode: 0o600, flag: "wx" });
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}
