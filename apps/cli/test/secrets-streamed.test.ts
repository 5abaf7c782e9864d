/**
 * A secret the model streams back split over several text deltas (2, 3 or
 * one character each) is masked in every stream-json `text` line and in the
 * answer `yoi -p` prints, and text without secrets comes through unchanged.
 */
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, jsonLines, runYoi, tempWorld } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const KEY = "test-Key-7Qx2Lm9Pw4Rv"; // 21 characters, shaped like no known key: only the registration masks it
const PREFIX = "The key is "; // 11 characters: the key spans [11, 32)
const ANSWER = `${PREFIX}${KEY} ok, and that is all I will say.`;

async function ask(chunkSize: number, output: "stream-json" | "text") {
  const server = await startScriptedServer({
    provider: "anthropic",
    script: [{ type: "reply", text: ANSWER, options: { chunkSize } }],
  });
  servers.push(server);
  const { home, project } = await tempWorld();
  const result = await runYoi(["-p", "--output", output, "--model", "anthropic/claude-haiku-4-5", "say it"], {
    cwd: project,
    env: cleanEnv(home, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.baseURL }),
  });
  expect(result.stderr).not.toContain(KEY);
  expect(result.code, result.stderr).toBe(0);
  return result;
}

describe("a key split across streamed deltas", () => {
  // chunkSize 16: the key arrives in 2 deltas; 9: in 3; 1: in 21.
  it.each([
    [16, 2],
    [9, 3],
    [1, KEY.length],
  ])(
    "is masked in every stream-json line (chunks of %i: the key in %i deltas)",
    async (chunkSize, pieces) => {
      const deltas: string[] = [];
      for (let i = 0; i < ANSWER.length; i += chunkSize) deltas.push(ANSWER.slice(i, i + chunkSize));
      const start = ANSWER.indexOf(KEY);
      expect(
        deltas.filter((_, i) => i * chunkSize < start + KEY.length && (i + 1) * chunkSize > start),
      ).toHaveLength(pieces);

      const result = await ask(chunkSize, "stream-json");
      for (const line of result.stdout.split("\n")) {
        expect(line).not.toContain(KEY);
        expect(line).not.toContain(KEY.slice(0, 8));
      }
      const lines = jsonLines(result.stdout);
      const texts = lines.filter((l) => l.type === "text").map((l) => String(l.text));
      // Still streamed (not one line at the end), and the whole answer is there, masked.
      expect(texts.length).toBeGreaterThan(1);
      expect(texts.join("")).toBe(ANSWER.replace(KEY, "<redacted>"));
      expect(lines.find((l) => l.type === "result")).toMatchObject({
        status: "completed",
        text: ANSWER.replace(KEY, "<redacted>"),
      });
    },
  );

  it("is masked in the answer yoi -p prints", async () => {
    const result = await ask(3, "text");
    expect(result.stdout).not.toContain(KEY);
    expect(result.stdout).toBe(`${ANSWER.replace(KEY, "<redacted>")}\n`);
  });

  it("leaves an answer without secrets unchanged, line by line as it streamed", async () => {
    const text = "Nothing secret here: just words, numbers 1 2 3, and a URL http://127.0.0.1:8080/v1.";
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "reply", text, options: { chunkSize: 5 } }],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const result = await runYoi(
      ["-p", "--output", "stream-json", "--model", "anthropic/claude-haiku-4-5", "hi"],
      {
        cwd: project,
        env: cleanEnv(home, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.baseURL }),
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const texts = jsonLines(result.stdout)
      .filter((l) => l.type === "text")
      .map((l) => String(l.text));
    expect(texts.join("")).toBe(text);
    // Held back is only an unfinished word: most deltas come out as they arrive.
    expect(texts.length).toBeGreaterThan(text.length / 5 / 2);
  });
});
