import { mkdir, readdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient } from "@yoi/llm-client";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { ConfigSchema } from "@yoi/manifest";
import { afterEach, describe, expect, it } from "vitest";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/** A session whose large tool output is stored, then compacted away; returns the blob files left. */
async function storedThenCompacted(
  deleteUnreferencedRefs: boolean,
): Promise<{ before: string[]; after: string[] }> {
  const base = await tempDir();
  const root = path.join(base, "p");
  await mkdir(root, { recursive: true });
  await writeFile(path.join(root, "big.log"), `${"a log line with some words\n".repeat(400)}`);
  const s = await startScriptedServer({
    provider: "anthropic",
    validate: true,
    script: [
      { type: "reply", toolCalls: [{ id: "toolu_1", name: "read_file", arguments: { path: "big.log" } }] },
      { type: "reply", text: "it is a log" },
      { type: "reply", text: "you are welcome" },
      { type: "reply", text: "<summary>The user looked at big.log.</summary>" },
    ],
  });
  servers.push(s);
  const dataDir = path.join(base, "d");
  const pod = await Pod.create({
    cwd: root,
    dataDir,
    fsync: "never",
    autoRead: false,
    config: ConfigSchema.parse({ toolOutputCache: { deleteUnreferencedRefs } }),
    client: createClient({
      provider: "anthropic",
      model: "claude-haiku-4-5",
      apiKey: "k",
      baseURL: s.baseURL,
    }),
  });
  try {
    await pod.run("what is in big.log?");
    await pod.run("thanks");
    const before = await readdir(path.join(dataDir, "blobs"));
    const replacement = await pod.compact();
    expect(replacement?.reason).toBe("compaction");
    expect(replacement?.detail).toMatchObject({ unreferencedRefs: [before[0]?.replace(/\.txt$/, "")] });
    expect(s.rejections).toEqual([]);
    return { before, after: await readdir(path.join(dataDir, "blobs")) };
  } finally {
    await pod.close();
  }
}

describe("stored tool outputs after compaction", () => {
  it("are kept by default: the session log and yoi inspect may still point at them", async () => {
    const { before, after } = await storedThenCompacted(false);
    expect(before).toHaveLength(1);
    expect(after).toEqual(before);
  });

  it("are deleted with toolOutputCache.deleteUnreferencedRefs once no history references them", async () => {
    const { before, after } = await storedThenCompacted(true);
    expect(before).toHaveLength(1);
    expect(after).toEqual([]);
  });
});
