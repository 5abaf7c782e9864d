import { readFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterEach } from "vitest";

const dirs: string[] = [];

/** A fresh real temp directory, removed after the test. */
export async function tempDir(prefix = "yoi-pod-"): Promise<string> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), prefix)));
  dirs.push(dir);
  return dir;
}

/** A recorded provider stream of the repository's fixtures, one payload a line. */
export function fixtureLines(relative: string): string[] {
  return readFileSync(new URL(`../../../fixtures/provider-streams/${relative}`, import.meta.url), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
}

afterEach(async () => {
  while (dirs.length > 0) {
    const dir = dirs.pop()!;
    await rm(dir, { recursive: true, force: true });
  }
});
