/**
 * What a session hides from its tools (fs/scope-from-config.ts): yoi's own
 * private files everywhere, and the home's credential stores only where a
 * write root holds them, so that a project session's bash reads ~/.ssh as
 * it always could (what the user approves there is theirs to run).
 */
import { mkdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { ConfigSchema } from "@yoi/manifest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionBase } from "../src/assembly/session-base.ts";
import { tempDir } from "./helpers.ts";

let home: string;
let saved: string | undefined;
beforeEach(async () => {
  home = await tempDir();
  saved = process.env.HOME;
  process.env.HOME = home;
  await mkdir(path.join(home, ".ssh"));
  await writeFile(path.join(home, ".ssh", "id_ed25519"), "key\n");
  await mkdir(path.join(home, ".yoi"));
  await writeFile(path.join(home, ".yoi", "credentials.json"), "{}");
  await mkdir(path.join(home, "project"));
});
afterEach(() => {
  process.env.HOME = saved;
});

async function hiddenIn(cwd: string) {
  const base = await openSessionBase({ cwd, config: ConfigSchema.parse({}), fsync: "never" });
  return { tools: base.fs.hidden, bash: (await base.sandbox.settle()).bash?.policy.hidden ?? [] };
}

describe.runIf(process.platform === "linux")("a session's private paths", () => {
  it("started in the home directory: the credential stores and yoi's files, from every tool", async () => {
    const { tools, bash } = await hiddenIn(home);
    for (const p of [".ssh", ".yoi/credentials.json", ".yoi/sessions"]) {
      expect(tools).toContain(path.join(home, p));
      expect(bash).toContain(path.join(home, p));
    }
  });

  it("started in a project: yoi's data hidden from bash, the home's ssh keys left as they were", async () => {
    const { bash } = await hiddenIn(path.join(home, "project"));
    expect(bash).toContain(path.join(home, ".yoi"));
    expect(bash).not.toContain(path.join(home, ".ssh"));
  });
});
