/**
 * `yoi acp` to the first word: the time from starting the agent and sending
 * `initialize` (then `session/new` and `session/prompt`, as an editor does)
 * to the first `agent_message_chunk`, against print mode's first streamed
 * text (`yoi -p --output stream-json`, from its start) on the same scripted
 * server. Runs alternate, and the ratio is the median of pairs.
 *
 *   pnpm bench acp
 */
import { spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { startScriptedServer } from "@yoi/llm-client/testing";
import { median, pairedRatio, report } from "../../../scripts/bench-kit.ts";
import { freshBundle } from "../fresh-bundle.ts";
import { initialize, startAcp } from "../test/acp-client.ts";
import { cleanEnv, tempWorld, yoiArgv } from "../test/helpers.ts";

freshBundle((line) => process.stderr.write(`acp.bench: ${line}\n`));

const RUNS = 9;
const MODEL = ["--model", "anthropic/claude-haiku-4-5"];

const server = await startScriptedServer({
  provider: "anthropic",
  script: () => ({ type: "reply", text: "The answer is 42, as it was yesterday." }),
});
const { home, project } = await tempWorld({ "a.txt": "alpha\n" });
const env = cleanEnv(home, { ANTHROPIC_API_KEY: "bench-key", ANTHROPIC_BASE_URL: server.baseURL });

async function acpFirstChunk(): Promise<number> {
  const start = performance.now();
  const client = startAcp({ cwd: project, env, args: MODEL });
  await initialize(client);
  const { sessionId } = await client.agent.request("session/new", { cwd: project, mcpServers: [] });
  const done = client.agent.request("session/prompt", {
    sessionId,
    prompt: [{ type: "text", text: "answer?" }],
  });
  await client.waitForUpdate((u) => u.sessionUpdate === "agent_message_chunk");
  const ms = performance.now() - start;
  await done;
  await client.close();
  return ms;
}

function printFirstText(): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const [node, ...argv] = yoiArgv();
    const child = spawn(node as string, [...argv, "-p", "--output", "stream-json", ...MODEL, "answer?"], {
      cwd: project,
      env,
      stdio: ["ignore", "pipe", "ignore"],
    });
    let ms: number | undefined;
    let buffered = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      buffered += d;
      if (ms === undefined && /"type":"text"/.test(buffered)) ms = performance.now() - start;
    });
    child.on("error", reject);
    child.on("close", (code) =>
      ms === undefined ? reject(new Error(`print mode exited ${code} without text`)) : resolve(ms),
    );
  });
}

try {
  await acpFirstChunk();
  await printFirstText();
  const acp: number[] = [];
  const print: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    acp.push(await acpFirstChunk());
    print.push(await printFirstText());
  }
  report({
    group: "cli",
    name: "acp: start + initialize to first agent_message_chunk",
    subject: median(acp),
    baseline: median(print),
    baselineName: "print mode: start to first stream-json text",
    unit: "ms",
    ratio: pairedRatio(acp, print),
    note: `${RUNS} alternating pairs; scripted Anthropic server on 127.0.0.1; acp adds session/new and session/prompt round trips`,
  });
} finally {
  await server.close();
  await rm(path.dirname(home), { recursive: true, force: true });
}
