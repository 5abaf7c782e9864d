import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { startScriptedServer } from "@yoi/llm-client/testing";
import { describe, expect, it } from "vitest";
import { cleanEnv, FIXTURES, runYoi, tempWorld } from "./helpers.ts";
import { TmuxSession, waitForFile, yoiCommand } from "./tmux.ts";

const TRACER = fileURLToPath(new URL("./fixtures/trace-loads.mjs", import.meta.url));
const COUNT_EVAL = fileURLToPath(new URL("./fixtures/count-eval.mjs", import.meta.url));

/** Runs the CLI with the load tracer and returns the modules it loaded. */
async function loadedModules(
  args: string[],
): Promise<{ modules: string[]; code: number | null; stdout: string }> {
  const { home } = await tempWorld();
  const trace = path.join(home, "trace.txt");
  const result = await runYoi(args, {
    env: cleanEnv(home, { YOI_TRACE_FILE: trace }),
    nodeArgs: [`--import=${TRACER}`],
  });
  const modules = (await readFile(trace, "utf8")).split("\n").filter(Boolean);
  return { modules, code: result.code, stdout: result.stdout };
}

const HEAVY = [
  /@anthropic-ai[/+]sdk/,
  /\/openai\//,
  /@google[/+]genai/,
  /\/zod\//,
  /\/packages\/[a-z-]+\/src\//,
];

describe("start-up", () => {
  for (const flag of ["--version", "--help"]) {
    it(`${flag} loads no provider SDK, no zod and no other yoi package`, async () => {
      const { modules, code, stdout } = await loadedModules([flag]);
      expect(code).toBe(0);
      expect(stdout.length).toBeGreaterThan(0);
      // the tracer works: it saw the CLI's own entry
      expect(modules.some((m) => m.endsWith("/apps/cli/src/bin.ts"))).toBe(true);
      const heavy = modules.filter((m) => HEAVY.some((re) => re.test(m)));
      expect(heavy).toEqual([]);
      const cliFiles = modules.filter((m) => m.includes("/apps/cli/src/")).map((m) => path.basename(m));
      expect(cliFiles.sort()).toEqual(
        flag === "--version" ? ["bin.ts", "version.ts"] : ["bin.ts", "help.ts"],
      );
    });
  }

  it("any other command line goes through the parser, which loads nothing heavy either", async () => {
    const { modules, code } = await loadedModules(["--help", "--no-color"]);
    expect(code).toBe(0);
    // CliError's base class and errorMessage: @yoi/manifest/errors, two small files without zod.
    const errorBase = modules.filter((m) => m.includes("/packages/manifest/src/errors/"));
    expect(errorBase.map((m) => path.basename(m)).sort()).toEqual([
      "error-message.ts",
      "index.ts",
      "yoi-error.ts",
    ]);
    expect(modules.filter((m) => HEAVY.some((re) => re.test(m)) && !errorBase.includes(m))).toEqual([]);
    const cliFiles = modules.filter((m) => m.includes("/apps/cli/src/")).map((m) => path.basename(m));
    expect(cliFiles.sort()).toEqual([
      "args.ts",
      "bin.ts",
      "cli-error.ts",
      "exit-codes.ts",
      "help.ts",
      "main.ts",
      "version.ts",
    ]);
  });

  it("the same tracer sees the SDK when one is used (replay loads only the chosen provider's SDK)", async () => {
    const file = path.join(FIXTURES, "anthropic", "anthropic-text.chunks.txt");
    const { modules, code } = await loadedModules(["debug", "replay", "--provider", "anthropic", file]);
    expect(code).toBe(0);
    expect(modules.some((m) => /@anthropic-ai[/+]sdk/.test(m))).toBe(true);
    expect(modules.some((m) => /@google[/+]genai/.test(m))).toBe(false);
    expect(modules.some((m) => /node_modules\/openai\//.test(m))).toBe(false);
  });

  it("print mode loads no terminal layout, Markdown or highlighting (only the interactive screen needs them)", async () => {
    // No key and no model: print mode loads its modules, then stops at the set-up with exit 2.
    const { modules, code } = await loadedModules(["-p", "hi"]);
    expect(code).toBe(2);
    expect(modules.some((m) => m.endsWith("/apps/cli/src/commands/print.ts"))).toBe(true);
    const screen = [/string-width/, /get-east-asian-width/, /\/marked\//, /cli-highlight/, /\/diff\//];
    expect(modules.filter((m) => screen.some((re) => re.test(m)))).toEqual([]);
  });

  it("builds no functions from strings: zod's generated parsers are off before the first schema is built", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        { type: "reply", toolCalls: [{ id: "c1", name: "read_file", arguments: { path: "a.txt" } }] },
        { type: "reply", text: "ok" },
      ],
    });
    try {
      const { home, project } = await tempWorld({ "a.txt": "x\n" });
      const counted = path.join(home, "evals.txt");
      const result = await runYoi(
        ["-p", "hi", "--model", "anthropic/claude-haiku-4-5", "--base-url", server.baseURL],
        {
          env: cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", YOI_EVAL_FILE: counted }),
          cwd: project,
          nodeArgs: [`--import=${COUNT_EVAL}`],
        },
      );
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trim()).toBe("ok");
      // Config layers and a tool's input were parsed; zod compiled none of them.
      expect(await readFile(counted, "utf8")).toBe("0");
    } finally {
      await server.close();
    }
  });

  it.skipIf(!TmuxSession.available())(
    "the interactive screen measures plain text without loading string-width (its load took 20 ms before the prompt)",
    async () => {
      const server = await startScriptedServer({
        provider: "anthropic",
        script: [{ type: "reply", text: "plain answer" }],
      });
      const { home, project } = await tempWorld();
      const trace = path.join(home, "trace.txt");
      const tty = TmuxSession.start(
        yoiCommand({
          project,
          home,
          baseURL: server.baseURL,
          args: [],
          out: path.join(home, "out.txt"),
          env: [`YOI_TRACE_FILE=${trace}`],
          nodeArgs: [`--import=${TRACER}`],
        }),
      );
      try {
        await tty.waitFor(/^›\s*$/m);
        tty.type("hello");
        tty.keys("Enter");
        await tty.waitFor("plain answer");
        tty.keys("C-c");
        tty.keys("C-c");
        const modules = (await waitForFile(trace)).split("\n");
        expect(modules.some((m) => m.endsWith("/apps/cli/src/commands/interactive.ts"))).toBe(true);
        expect(modules.filter((m) => /string-width|get-east-asian-width/.test(m))).toEqual([]);
      } finally {
        tty.kill();
        await server.close();
      }
    },
  );
});
