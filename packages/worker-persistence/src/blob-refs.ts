import { readdir } from "node:fs/promises";
import type { Item } from "@yoi/llm-client";
import { isBlobId } from "@yoi/llm-worker";
import { errnoOf } from "./fs-errors.ts";
import { sessionIoError } from "./session-error.ts";
import { scanSessionFile } from "./session-scan.ts";
import { sessionsDir } from "./session-store.ts";

// The marker a Stored summary starts with; a ref id is a blob id.
const MARKER = /\[blob:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\]/gi;

function addMarkers(text: string, into: Set<string>): void {
  if (!text.includes("[blob:")) return;
  for (const match of text.matchAll(MARKER)) into.add((match[1] as string).toLowerCase());
}

/** Blob ids items refer to: `outputRef.id` and `[blob:<id>]` markers in tool output and message text. */
export function collectBlobRefs(items: Iterable<Item>, into: Set<string> = new Set()): Set<string> {
  for (const item of items) {
    if (item.type === "tool_result") {
      if (item.outputRef && isBlobId(item.outputRef.id)) into.add(item.outputRef.id.toLowerCase());
      addMarkers(item.output, into);
    } else if (item.type === "message") {
      for (const part of item.content) if (part.type === "text") addMarkers(part.text, into);
    }
  }
  return into;
}

/**
 * Every blob id referenced anywhere in the session logs under `dir` (current
 * history or not: an audited, compacted-away output still counts), for
 * `gc({ liveRefs })`. Reads every log in full; gc is rare.
 */
export async function sessionBlobRefs(options: { dir: string }): Promise<Set<string>> {
  const sdir = sessionsDir(options.dir);
  let names: string[];
  try {
    names = await readdir(sdir);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return new Set();
    throw sessionIoError("list", sdir, error);
  }
  const refs = new Set<string>();
  for (const name of names) {
    if (!name.endsWith(".jsonl")) continue;
    await scanSessionFile(`${sdir}/${name}`, (record) => {
      if (record.type === "item") collectBlobRefs([record.item], refs);
      else if (record.type === "history_replaced") collectBlobRefs(record.history, refs);
      // checkpoints keep prior file content for rewinds
      else if (record.type === "file_change" && record.before.kind === "file" && record.before.blob)
        refs.add(record.before.blob.toLowerCase());
      else if (record.type === "subagent") {
        if (record.blobId !== undefined && isBlobId(record.blobId)) refs.add(record.blobId.toLowerCase());
        collectBlobRefs(record.items, refs);
      }
    });
  }
  return refs;
}
