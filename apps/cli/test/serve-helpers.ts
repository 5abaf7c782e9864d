/** Starting `yoi serve` processes and reading their event streams, for the serve tests and the bench. */
import { type ChildProcess, spawn } from "node:child_process";
import { CLI_DIR, yoiArgv } from "./helpers.ts";

export interface ServeProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** SIGKILL, and wait for the exit. */
  kill(): Promise<void>;
  /** SIGTERM, and wait for the exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Spawns `yoi serve --port 0 ...args` and waits for its listening line. */
export function startServe(
  args: readonly string[],
  env: Record<string, string>,
  cwd = CLI_DIR,
): Promise<ServeProcess> {
  const [node, ...argv] = yoiArgv();
  const child = spawn(node!, [...argv, "serve", "--port", "0", ...args], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`yoi serve did not start in 60 s: ${stderr}`)), 60_000);
    child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve({
          url: match[1] as string,
          child,
          stderr: () => stderr,
          async kill() {
            child.kill("SIGKILL");
            await exited;
          },
          async stop() {
            child.kill("SIGTERM");
            return exited;
          },
        });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`yoi serve exited with ${code} before listening: ${stderr}`));
    });
  });
}

/** One server-sent event: its `id:` (the last stored seq), as sent, and its parsed `data:` object. */
export interface ServeEvent {
  id: number | undefined;
  rawId: string | undefined;
  data: Record<string, unknown>;
}

/** Parses a `text/event-stream` body as it arrives; stops when the stream ends. */
export async function* sseEvents(response: Response): AsyncGenerator<ServeEvent> {
  if (!response.body) return;
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let rawId: string | undefined;
      let data: string | undefined;
      for (const line of block.split("\n")) {
        if (line.startsWith("id: ")) rawId = line.slice(4);
        else if (line.startsWith("data: ")) data = line.slice(6);
      }
      if (data !== undefined) {
        const id = rawId === undefined ? undefined : Number(rawId);
        yield { id, rawId, data: JSON.parse(data) as Record<string, unknown> };
      }
      end = buffer.indexOf("\n\n");
    }
  }
}

/** POSTs JSON (with an optional bearer token). */
export function post(url: string, body: unknown, token?: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}
