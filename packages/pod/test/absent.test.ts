/**
 * isAbsent answers "nothing is there" without an exception, and answers
 * false for anything the real (checked) read must see: a dangling symlink,
 * a path through a file, a file, a directory.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { isAbsent } from "../src/absent.ts";
import { tempDir } from "./helpers.ts";

describe("isAbsent", () => {
  it("is true only when nothing at all is at the path", async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, "file"), "x");
    await mkdir(path.join(dir, "sub"));
    await symlink(path.join(dir, "nowhere"), path.join(dir, "dangling"));
    expect(isAbsent(path.join(dir, "missing"))).toBe(true);
    expect(isAbsent(path.join(dir, "missing", "deeper"))).toBe(true);
    expect(isAbsent(path.join(dir, "file"))).toBe(false);
    expect(isAbsent(path.join(dir, "sub"))).toBe(false);
    expect(isAbsent(path.join(dir, "dangling"))).toBe(false);
    // ENOTDIR: the read that follows reports it as it always did.
    expect(isAbsent(path.join(dir, "file", "below"))).toBe(false);
  });
});
