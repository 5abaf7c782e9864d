/**
 * The README examples of `query()` are files under `examples/`: this test
 * checks that each block marked `<!-- example: <file> -->` in the root and
 * the pod's README is that file as it is, and runs each file as written
 * against a scripted Anthropic server (only the environment points it there:
 * the key, the base URL and a home directory of its own).
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { tempDir } from "./helpers.ts";

const repo = path.resolve(import.meta.dirname, "../../..");
const READMES = ["README.md", "packages/pod/README.md"];

/** Every marked block of the READMEs: the file it claims to be and its text. */
function markedBlocks(): { readme: string; file: string; code: string }[] {
  const out: { readme: string; file: string; code: string }[] = [];
  for (const readme of READMES) {
    const text = readFileSync(path.join(repo, readme), "utf8");
    for (const match of text.matchAll(/<!-- example: (\S+) -->\n```ts\n([\s\S]*?)```/g))
      out.push({ readme, file: match[1]!, code: match[2]! });
  }
  return out;
}

const servers: ScriptedServer[] = [];
const saved = { ...process.env };
afterEach(async () => {
  vi.restoreAllMocks();
  for (const key of ["HOME", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "YOI_MODEL"]) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
  for (const server of servers.splice(0)) await server.close();
});

/** Runs an example file against `script`; what it printed, and the server. */
async function runExample(
  file: string,
  script: ScriptStep[],
): Promise<{ printed: string; server: ScriptedServer }> {
  const server = await startScriptedServer({ provider: "anthropic", validate: true, script });
  servers.push(server);
  process.env.HOME = await tempDir();
  process.env.ANTHROPIC_API_KEY = "test-key";
  process.env.ANTHROPIC_BASE_URL = server.baseURL;
  delete process.env.YOI_MODEL;
  let printed = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    printed += String(chunk);
    return true;
  });
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
    printed += `${args.join(" ")}\n`;
  });
  await import(path.join(repo, file));
  vi.restoreAllMocks();
  return { printed, server };
}

describe("README examples of query()", () => {
  it("every marked block is its example file, as it is", () => {
    const blocks = markedBlocks();
    expect(blocks.map((b) => `${b.readme} ${b.file}`)).toEqual([
      "README.md packages/pod/examples/query-basic.ts",
      "packages/pod/README.md packages/pod/examples/query-basic.ts",
      "packages/pod/README.md packages/pod/examples/query-mcp-resume.ts",
    ]);
    for (const block of blocks)
      expect(block.code, block.file).toBe(readFileSync(path.join(repo, block.file), "utf8"));
  });

  it("query-basic: the zod tool is allowed, runs, and the result is printed", async () => {
    const { printed, server } = await runExample("packages/pod/examples/query-basic.ts", [
      {
        type: "reply",
        toolCalls: [{ id: "toolu_wc", name: "word_count", arguments: { text: "the quick brown fox" } }],
      },
      { type: "reply", text: "There are 4 words." },
    ]);
    expect(server.rejections).toEqual([]);
    expect(JSON.stringify(server.requests[1])).toMatch(/"tool_use_id":"toolu_wc","content":[^}]*"4"/);
    expect(printed).toMatch(/^There are 4 words\.\ncompleted, \$[0-9.e-]+, session [0-9a-f-]{36}\n$/);
  });

  it("query-mcp-resume: the in-process server's tool answers, and the second query continues the session", async () => {
    const { printed, server } = await runExample("packages/pod/examples/query-mcp-resume.ts", [
      { type: "reply", toolCalls: [{ id: "toolu_1", name: "mcp__calc__add", arguments: { a: 2, b: 40 } }] },
      { type: "reply", text: "It is 42." },
      { type: "reply", toolCalls: [{ id: "toolu_2", name: "mcp__calc__add", arguments: { a: 42, b: 8 } }] },
      { type: "reply", text: "That makes 50." },
    ]);
    expect(server.rejections).toEqual([]);
    expect(printed).toBe("It is 42.\nThat makes 50.\n");
    expect(JSON.stringify(server.requests[1])).toMatch(/"tool_use_id":"toolu_1","content":[^}]*"42"/);
    expect(JSON.stringify(server.requests[3])).toMatch(/"tool_use_id":"toolu_2","content":[^}]*"50"/);
    // Resumed: the second query's first request carries the first conversation.
    expect(JSON.stringify(server.requests[2])).toContain("What is 2 + 40? Use the calculator.");
  });
});
