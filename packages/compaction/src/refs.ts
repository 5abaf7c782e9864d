/** Which refs a history still mentions (for GC after compaction). */
import type { Item } from "@yoi/llm-client";

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
/**
 * Any UUID in text counts as a mention (`ref=<id>`, `[blob:<id>]`, or an id
 * a summary quoted bare): deleting is not undoable, so GC errs on keeping.
 */
const MENTION = new RegExp(`(?<![0-9a-f])(${UUID})(?![0-9a-f])`, "gi");

/** Every ref id `items` reference: `outputRef` ids and ids mentioned in text (lower-cased). */
export function collectRefs(items: readonly Item[]): Set<string> {
  const refs = new Set<string>();
  const scan = (text: string) => {
    for (const match of text.matchAll(MENTION)) refs.add(match[1]!.toLowerCase());
  };
  for (const item of items) {
    switch (item.type) {
      case "tool_result":
        if (item.outputRef) refs.add(item.outputRef.id.toLowerCase());
        scan(item.output);
        break;
      case "message":
        for (const part of item.content) if (part.type === "text") scan(part.text);
        break;
      case "tool_call":
        scan(item.arguments);
        break;
      case "reasoning":
        scan(item.text);
        break;
      case "server_tool":
        break; // the provider's search: it cannot name a blob of ours
    }
  }
  return refs;
}
