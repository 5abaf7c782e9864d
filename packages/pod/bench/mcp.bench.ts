/**
 * What yoi's MCP layer costs over the bare SDK, against the reference
 * everything server over stdio (run from node_modules). (1) Start: McpManager
 * up to ready (spawn, initialize, tools/list, prompts/list) against a bare
 * SDK Client connect + listTools + listPrompts; target <= 1.2x. (2) 200 echo
 * calls through the mcp__ tool (result mapping included) against bare
 * client.callTool; target <= 1.3x.
 */
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { compare, report } from "../../../scripts/bench-kit.ts";
import { McpManager } from "../src/index.ts";

const server = fileURLToPath(
  new URL("../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url),
);
const params = { command: process.execPath, args: [server, "stdio"] };

function manager(): McpManager {
  return new McpManager({
    servers: { ev: params },
    env: process.env,
    cwd: process.cwd(),
    toolTimeoutMs: 60_000,
    onAlert: (_level, message) => {
      throw new Error(message);
    },
    onChange: () => {},
  });
}

async function bareClient(): Promise<Client> {
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(new StdioClientTransport({ ...params, stderr: "pipe" }));
  return client;
}

const start = await compare(
  async () => {
    const m = manager();
    await m.ready();
    await m.close();
  },
  async () => {
    const client = await bareClient();
    await client.listTools();
    await client.listPrompts();
    await client.close();
  },
  { runs: 5, warmup: 1 },
);
report({
  group: "pod",
  name: "MCP server start to tools listed (everything, stdio)",
  subject: start.subject,
  baseline: start.baseline,
  baselineName: "SDK connect + list tools, prompts",
  unit: "ms",
  target: 1.2,
});

const m = manager();
await m.ready();
const echo = m.tools().find((t) => t.name === "mcp__ev__echo")!;
const client = await bareClient();
const signal = new AbortController().signal;
const ctx = { callId: "c", batchId: "b", callIndex: 0, batchSize: 1, turnIndex: 0, signal };
try {
  const calls = await compare(
    async () => {
      for (let i = 0; i < 200; i++) await echo.execute({ message: `hello ${i}` }, ctx);
    },
    async () => {
      for (let i = 0; i < 200; i++)
        await client.callTool({ name: "echo", arguments: { message: `hello ${i}` } });
    },
  );
  report({
    group: "pod",
    name: "200 MCP tool calls (echo, stdio)",
    subject: calls.subject,
    baseline: calls.baseline,
    baselineName: "SDK client.callTool",
    unit: "ms",
    target: 1.3,
  });
} finally {
  await m.close();
  await client.close();
}
