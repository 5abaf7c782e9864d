import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { query } from "@yoi/pod";
import * as z from "zod";

// An MCP server in this process: no child process, no port.
const calc = new McpServer({ name: "calc", version: "1.0.0" });
calc.registerTool(
  "add",
  { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
);

const options = {
  model: "anthropic/claude-haiku-4-5",
  mcpServers: { calc },
  canUseTool: () => ({ behavior: "allow" }) as const,
  signal: AbortSignal.timeout(120_000), // give up after two minutes
};

let sessionId: string | undefined;
for await (const event of query({ ...options, prompt: "What is 2 + 40? Use the calculator." })) {
  if (event.type === "result") {
    sessionId = event.session_id;
    console.log(event.text);
  }
}
// The same conversation later (forkSession: true would continue a copy and leave this one as it is).
for await (const event of query({ ...options, prompt: "And 42 + 8?", resume: sessionId })) {
  if (event.type === "result") console.log(event.text);
}
