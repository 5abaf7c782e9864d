/**
 * The streams the llm-client benchmarks time, shared by normalize.bench.ts
 * (yoi against the raw SDKs) and peers.bench.ts (yoi against the Vercel AI
 * SDK and pi-ai): synthetic responses built with each provider's wire
 * format (thousands of 4-character text deltas, or one tool call whose
 * arguments arrive in thousands of 4-character deltas), served by one local
 * server on 127.0.0.1 that answers every request with the current body.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { ProviderKind } from "../src/index.ts";
import { frameLines, WIRE_FORMATS } from "../src/testing/index.ts";

const CHUNK = 4;

/** The serialized stream of a workload: `deltas` text deltas, or tool-argument deltas. */
export function workloadBytes(provider: ProviderKind, kind: "text" | "tool", deltas: number): Buffer {
  const wire = WIRE_FORMATS[provider];
  const lines =
    kind === "text"
      ? wire.response("abcd".repeat(deltas), [], { chunkSize: CHUNK })
      : // {"a":"xx...x"} is 8 characters of JSON around the string.
        wire.response(
          "",
          [{ id: "call_1", name: "write", arguments: { a: "x".repeat(Math.max(0, deltas * CHUNK - 8)) } }],
          { chunkSize: CHUNK },
        );
  return Buffer.from(frameLines(provider, lines), "utf8");
}

export interface WorkloadServer {
  origin: string;
  /** What every request gets, as server-sent events. */
  body: Buffer;
  close(): Promise<void>;
}

export async function startWorkloadServer(): Promise<WorkloadServer> {
  const state: WorkloadServer = {
    origin: "",
    body: Buffer.alloc(0),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(state.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
