/**
 * The floor of the long-session benchmark (long-session.bench.ts): the least
 * an agent on an OpenAI-compatible server can do per turn. It sends the
 * history with Node's own fetch, parses the SSE stream, reads the file each
 * tool call names, appends the assistant turn and the tool results to the
 * history, and loops until the model answers with text, which it prints.
 * No session log, no permissions, no events: what no agent goes below.
 *
 *   node long-session-floor.ts <base URL with /v1> <model> <prompt>
 */
import { readFile } from "node:fs/promises";

interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

type Message =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

interface ChunkDelta {
  content?: string | null;
  tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[];
}

const [baseURL, model, prompt] = process.argv.slice(2);
if (baseURL === undefined || model === undefined || prompt === undefined) {
  process.stderr.write("usage: node long-session-floor.ts <base URL with /v1> <model> <prompt>\n");
  process.exit(2);
}

const tools = [
  {
    type: "function",
    function: {
      name: "read_file",
      description: "Read a text file of the project.",
      parameters: {
        type: "object",
        properties: { path: { type: "string", description: "Path relative to the project" } },
        required: ["path"],
        additionalProperties: false,
      },
    },
  },
];
const messages: Message[] = [
  { role: "system", content: "You are a coding agent. Use read_file to read files." },
  { role: "user", content: prompt },
];

/** One streamed answer: its text and its tool calls, assembled from the chunks. */
async function ask(): Promise<{ text: string; calls: ToolCall[] }> {
  const res = await fetch(`${baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer floor" },
    body: JSON.stringify({ model, stream: true, messages, tools }),
  });
  if (!res.ok || res.body === null) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  const decoder = new TextDecoder();
  let pending = "";
  let text = "";
  const calls: ToolCall[] = [];
  const take = (event: string) => {
    for (const line of event.split("\n")) {
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") continue;
      const chunk = JSON.parse(data) as { choices: { delta?: ChunkDelta }[] };
      const delta = chunk.choices[0]?.delta;
      if (delta === undefined) continue;
      if (delta.content) text += delta.content;
      for (const part of delta.tool_calls ?? []) {
        let call = calls[part.index];
        if (call === undefined) {
          call = { id: "", type: "function", function: { name: "", arguments: "" } };
          calls[part.index] = call;
        }
        if (part.id) call.id = part.id;
        if (part.function?.name) call.function.name += part.function.name;
        if (part.function?.arguments) call.function.arguments += part.function.arguments;
      }
    }
  };
  for await (const bytes of res.body) {
    pending += decoder.decode(bytes, { stream: true });
    let end = pending.indexOf("\n\n");
    while (end >= 0) {
      take(pending.slice(0, end));
      pending = pending.slice(end + 2);
      end = pending.indexOf("\n\n");
    }
  }
  take(pending);
  return { text, calls };
}

for (;;) {
  const { text, calls } = await ask();
  if (calls.length === 0) {
    process.stdout.write(`${text}\n`);
    break;
  }
  messages.push({ role: "assistant", content: text === "" ? null : text, tool_calls: calls });
  for (const call of calls) {
    const { path } = JSON.parse(call.function.arguments) as { path: string };
    messages.push({ role: "tool", tool_call_id: call.id, content: await readFile(path, "utf8") });
  }
}
