/**
 * What the start-up machinery (src/startup/) promises beyond speed, checked
 * on the shipped bundle. How fast the first request leaves is the
 * benchmark's to guard (bench/first-request.bench.ts), not a test's: no
 * test here pins which files a command loads.
 */
import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { startScriptedServer } from "@yoi/llm-client/testing";
import { describe, expect, it } from "vitest";
import { cleanEnv, runYoi, tempWorld } from "./helpers.ts";
import { startOtlpReceiver } from "./otlp-receiver.ts";

const COUNT_EVAL = fileURLToPath(new URL("./fixtures/count-eval.mjs", import.meta.url));

describe("start-up", () => {
  // Traced: the telemetry chunk loads our packages (and their schemas) before the command does.
  it.each([
    ["untraced", false],
    ["traced", true],
  ])(
    "builds no functions from strings (%s): zod's generated parsers are off before the first schema is built",
    async (_name, traced) => {
      const server = await startScriptedServer({
        provider: "anthropic",
        script: [
          { type: "reply", toolCalls: [{ id: "c1", name: "read_file", arguments: { path: "a.txt" } }] },
          { type: "reply", text: "ok" },
        ],
      });
      const receiver = traced ? await startOtlpReceiver() : undefined;
      try {
        const { home, project } = await tempWorld({ "a.txt": "x\n" });
        const counted = path.join(home, "evals.txt");
        const result = await runYoi(
          ["-p", "hi", "--model", "anthropic/claude-haiku-4-5", "--base-url", server.baseURL],
          {
            env: cleanEnv(home, {
              ANTHROPIC_API_KEY: "test-key",
              YOI_EVAL_FILE: counted,
              ...(receiver ? { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint } : {}),
            }),
            cwd: project,
            nodeArgs: [`--import=${COUNT_EVAL}`],
          },
        );
        expect(result.code, result.stderr).toBe(0);
        expect(result.stdout.trim()).toBe("ok");
        // Config layers and a tool's input were parsed; zod compiled none of them.
        expect(await readFile(counted, "utf8")).toBe("0");
        if (receiver) expect(receiver.spans.map((s) => s.name)).toContain("invoke_agent yoi");
      } finally {
        await server.close();
        await receiver?.close();
      }
    },
  );
});
