/**
 * `pnpm --filter @yoi/llm-client record -- --provider <p> --model <m> --prompt "..." --out file.chunks.txt`
 *
 * Exit codes: 0 written, 1 the request failed, 2 usage error or no API key.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { errorMessage } from "@yoi/manifest/errors";
import { LlmError } from "../errors.ts";
import type { ProviderKind } from "../item.ts";
import type { ToolSpec } from "../request.ts";
import { recordStream } from "./record.ts";

const PROVIDERS: ProviderKind[] = ["anthropic", "openai-chat", "openai-responses", "gemini"];
const EFFORTS = ["minimal", "low", "medium", "high"] as const;

const USAGE = `usage: record --provider <${PROVIDERS.join("|")}> --model <id> --prompt <text> --out <file.chunks.txt>
       [--system <text>] [--max-tokens <n>] [--effort <${EFFORTS.join("|")}>] [--budget <tokens>]
       [--tools <tools.json: [{name, description, parameters}]>] [--base-url <url>]
API keys come from ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY (or GOOGLE_API_KEY).`;

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

function positiveInt(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0)
    fail(`--${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return n;
}

async function main(): Promise<void> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: process.argv.slice(2).filter((arg) => arg !== "--"),
      options: {
        provider: { type: "string" },
        model: { type: "string" },
        prompt: { type: "string" },
        out: { type: "string" },
        system: { type: "string" },
        "max-tokens": { type: "string" },
        effort: { type: "string" },
        budget: { type: "string" },
        tools: { type: "string" },
        "base-url": { type: "string" },
        help: { type: "boolean" },
      },
    }));
  } catch (error) {
    fail(errorMessage(error));
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const str = (name: string): string | undefined =>
    typeof values[name] === "string" ? (values[name] as string) : undefined;
  const provider = str("provider");
  if (!provider || !PROVIDERS.includes(provider as ProviderKind)) {
    fail(
      `--provider must be one of ${PROVIDERS.join(", ")}${provider ? `, got ${JSON.stringify(provider)}` : ""}`,
    );
  }
  const model = str("model");
  const prompt = str("prompt");
  const out = str("out");
  if (!model) fail("--model is required");
  if (!prompt) fail("--prompt is required");
  if (!out) fail("--out is required");
  const effort = str("effort");
  if (effort !== undefined && !(EFFORTS as readonly string[]).includes(effort)) {
    fail(`--effort must be one of ${EFFORTS.join(", ")}`);
  }
  let tools: ToolSpec[] | undefined;
  const toolsFile = str("tools");
  if (toolsFile) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(toolsFile, "utf8"));
      if (!Array.isArray(parsed)) throw new Error("expected a JSON array of {name, description, parameters}");
      tools = parsed as ToolSpec[];
    } catch (error) {
      fail(`--tools ${toolsFile}: ${errorMessage(error)}`);
    }
  }
  const maxTokens = positiveInt("max-tokens", str("max-tokens"));
  const budgetTokens = positiveInt("budget", str("budget"));
  const system = str("system");
  const baseURL = str("base-url");
  try {
    const result = await recordStream({
      provider: provider as ProviderKind,
      model,
      prompt,
      out: resolve(out),
      ...(system === undefined ? {} : { system }),
      ...(maxTokens === undefined ? {} : { maxTokens }),
      ...(effort === undefined ? {} : { effort: effort as (typeof EFFORTS)[number] }),
      ...(budgetTokens === undefined ? {} : { budgetTokens }),
      ...(tools === undefined ? {} : { tools }),
      ...(baseURL === undefined ? {} : { baseURL }),
    });
    process.stdout.write(`wrote ${result.lines} payload line(s) to ${result.path}\n`);
  } catch (error) {
    // No key (said with the variable to set) is a usage error; anything else the recording's failure.
    if (LlmError.isInstance(error) && error.code === "config") {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    // SDK errors carry the server's message, never the key.
    process.stderr.write(`recording failed: ${errorMessage(error)}\n`);
    process.exit(1);
  }
}

await main();
