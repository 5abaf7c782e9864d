import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { LlmError } from "../src/errors.ts";
import type { ProviderKind } from "../src/item.ts";
import { recordStream } from "../src/record/record.ts";
import { startReplayServer } from "../src/testing/replay-server.ts";
import { fixtureLines } from "./openai-responses-collect.ts";

const cli = fileURLToPath(new URL("../src/record/cli.ts", import.meta.url));
const dirs: string[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "yoi-record-"));
  dirs.push(dir);
  return dir;
}

const noKeys = (): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/API_KEY$/.test(key)) env[key] = value;
  }
  return env;
};

describe("record: writes the raw stream in the fixture format", () => {
  const cases: [ProviderKind, string][] = [
    ["openai-responses", "openai-responses/openai-custom-tool.1.chunks.txt"],
    ["gemini", "gemini/google-stream-no-args-tool-call.chunks.txt"],
    ["anthropic", "anthropic/anthropic-json-tool.1.chunks.txt"],
    ["openai-chat", "openai-chat/openai-text.chunks.txt"],
  ];
  for (const [provider, fixture] of cases) {
    it(`${provider}: one JSON payload per line, equal to what the server sent`, async () => {
      const lines = fixtureLines(fixture);
      const server = await startReplayServer({ provider, lines });
      closers.push(server.close);
      const out = join(tempDir(), "recorded.chunks.txt");
      const result = await recordStream({
        provider,
        model: "m",
        prompt: "hello",
        out,
        apiKey: "test-key",
        baseURL: server.baseURL,
      });
      // What the SDK yields: Anthropic's SDK drops `ping` events.
      const expected = lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((p) => p.type !== "ping");
      expect(result).toEqual({ path: out, lines: expected.length });
      const written = readFileSync(out, "utf8");
      expect(written.endsWith("\n")).toBe(true);
      const recorded = written
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      if (provider === "gemini") {
        // @google/genai keeps the fields it knows (content, usage, ids), not e.g. createTime.
        expect(recorded).toHaveLength(expected.length);
        recorded.forEach((payload, i) => {
          expect(expected[i]).toMatchObject(payload);
          expect(payload.candidates).toEqual(expected[i]?.candidates);
          expect(payload.usageMetadata).toEqual(expected[i]?.usageMetadata);
        });
      } else {
        expect(recorded).toEqual(expected);
      }
      expect(written).not.toContain("test-key");
      expect(server.requests).toHaveLength(1);
    });
  }

  it("without a key: a config error that names the variable yoi reads", async () => {
    const out = join(tempDir(), "x.chunks.txt");
    const failed = await recordStream({ provider: "gemini", model: "m", prompt: "p", out, env: {} }).catch(
      (error: unknown) => error,
    );
    expect(LlmError.isInstance(failed) && failed.code).toBe("config");
    expect(String((failed as Error).message)).toContain("set GEMINI_API_KEY");
  });

  it("CLI without a key exits 2 and says which variable to set", () => {
    const out = join(tempDir(), "x.chunks.txt");
    const run = spawnSync(
      process.execPath,
      [
        "--conditions=@yoi/source",
        cli,
        "--",
        "--provider",
        "openai-responses",
        "--model",
        "gpt-5",
        "--prompt",
        "hi",
        "--out",
        out,
      ],
      { env: noKeys(), encoding: "utf8" },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("set OPENAI_API_KEY");
  });

  it("CLI with a bad provider exits 2 with the accepted values", () => {
    const run = spawnSync(process.execPath, ["--conditions=@yoi/source", cli, "--provider", "nope"], {
      env: noKeys(),
      encoding: "utf8",
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(
      "--provider must be one of anthropic, openai-chat, openai-responses, gemini",
    );
  });

  it("CLI records against a server and writes the file", async () => {
    const lines = fixtureLines("gemini/google-text.chunks.txt");
    const server = await startReplayServer({ provider: "gemini", lines });
    closers.push(server.close);
    const out = join(tempDir(), "g.chunks.txt");
    const child = await new Promise<{ status: number | null; stdout: string }>((resolve) => {
      execFile(
        process.execPath,
        [
          "--conditions=@yoi/source",
          cli,
          "--provider",
          "gemini",
          "--model",
          "gemini-3-pro-preview",
          "--prompt",
          "hi",
          "--out",
          out,
          "--base-url",
          server.baseURL,
        ],
        { env: { ...noKeys(), GEMINI_API_KEY: "k" } },
        (error, stdout) => resolve({ status: error ? (error.code as number) : 0, stdout }),
      );
    });
    expect(child.status).toBe(0);
    expect(child.stdout).toContain(`wrote ${lines.length} payload line(s)`);
    expect(readFileSync(out, "utf8").trimEnd().split("\n")).toHaveLength(lines.length);
  });
});
