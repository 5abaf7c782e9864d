import type { Item } from "@yoi/llm-client";
import * as z from "zod";
import type { WorkerEvent } from "../src/events.ts";
import { defineTool } from "../src/tool.ts";
import type { Worker } from "../src/worker.ts";

export function record(worker: Worker): WorkerEvent[] {
  const events: WorkerEvent[] = [];
  worker.subscribe((event) => events.push(event));
  return events;
}

export function types(events: WorkerEvent[]): string[] {
  return events.map((e) => e.type);
}

/** A compact view of history for assertions. */
export function shape(history: readonly Item[]): string[] {
  return history.map((item) => {
    switch (item.type) {
      case "message":
        return `${item.role}:${item.content.map((p) => (p.type === "text" ? p.text : "[image]")).join("")}`;
      case "tool_call":
        return `call:${item.name}#${item.callId}`;
      case "tool_result":
        return `result${item.isError ? "!" : ""}:${item.callId}`;
      case "server_tool":
        return `server:${item.name}#${item.callId}`;
      default:
        return `reasoning:${item.text}`;
    }
  });
}

/** Fails if any tool call lacks a result or a result answers no call (what providers reject). */
export function assertValidHistory(history: readonly Item[]): void {
  const open = new Set<string>();
  for (const item of history) {
    if (item.type === "tool_call") open.add(item.callId);
    else if (item.type === "tool_result") {
      if (!open.delete(item.callId)) throw new Error(`tool result ${item.callId} answers no open call`);
    } else if (open.size > 0) {
      throw new Error(`${item.type} before results of ${[...open].join(", ")}`);
    }
  }
  if (open.size > 0) throw new Error(`calls without results: ${[...open].join(", ")}`);
}

export const echoTool = defineTool({
  name: "echo",
  description: "Echo the text back.",
  inputSchema: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
});

export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
