/**
 * checkRefs: what a UI calls before sending, one result per distinct ref,
 * read the way the pod reads refs at submit.
 */
import { mkdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { ConfigSchema } from "@yoi/manifest";
import { describe, expect, it } from "vitest";
import { scopeFromConfig } from "../src/fs/scope-from-config.ts";
import { checkRefs } from "../src/input/ref-check.ts";
import { tempDir } from "./helpers.ts";

describe("checkRefs", () => {
  it("says for each ref whether it can be attached, with a code and a reason when not", async () => {
    const base = await tempDir();
    const root = path.join(base, "project");
    await mkdir(root);
    await writeFile(path.join(base, "outside.txt"), "secret");
    await writeFile(path.join(root, "a.txt"), "hello\n");
    await writeFile(path.join(root, "big.txt"), "x".repeat(5000));
    await writeFile(path.join(root, "blob.bin"), Buffer.from([0, 1, 2, 3]));
    await writeFile(
      path.join(root, "cut.png"),
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]),
    );
    const fs = await scopeFromConfig(ConfigSchema.parse({}).scope, root);
    const checks = await checkRefs(
      "see @a.txt, @a.txt again, @big.txt @Injectable @blob.bin @../outside.txt @cut.png @docs:readme",
      { fs, maxBytes: 1000, isServer: (name) => name === "docs" },
    );
    expect(checks.map((c) => [c.ref, c.ok, c.ok ? c.kind : c.code])).toEqual([
      ["a.txt", true, "file"],
      ["big.txt", true, "file"],
      ["Injectable", false, "not_found"],
      ["blob.bin", false, "binary"],
      ["../outside.txt", false, "out_of_scope"],
      ["cut.png", false, "binary"],
      ["docs:readme", true, "resource"],
    ]);
    // What the ref will attach: the `[File: ...]` message, its body capped at maxBytes.
    expect(checks[0]).toMatchObject({ bytes: Buffer.byteLength("[File: a.txt]\nhello\n") });
    const big = checks[1] as { bytes: number };
    expect(big.bytes).toBeGreaterThan(1000);
    expect(big.bytes).toBeLessThan(1200);
    expect(checks[2]).toMatchObject({ reason: "Injectable: no such file or directory" });
  });
});
