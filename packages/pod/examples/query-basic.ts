import { defineTool } from "@yoi/llm-worker";
import { query } from "@yoi/pod";
import * as z from "zod";

const wordCount = defineTool({
  name: "word_count",
  description: "Counts the words of a text.",
  inputSchema: z.object({ text: z.string() }),
  execute: ({ text }) => String(text.split(/\s+/).filter(Boolean).length),
});

for await (const event of query({
  prompt: "How many words are in 'the quick brown fox'?",
  model: "anthropic/claude-haiku-4-5",
  tools: [wordCount],
  // Asked about each call the permission mode leaves open: allow (maybe with changed input) or deny.
  canUseTool: (tool) =>
    tool === "word_count" ? { behavior: "allow" } : { behavior: "deny", message: "Only word_count here." },
})) {
  if (event.type === "text") process.stdout.write(event.text);
  if (event.type === "result")
    console.log(`\n${event.status}, $${event.cost_usd}, session ${event.session_id}`);
}
