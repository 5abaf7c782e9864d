/**
 * The real reference MCP servers (devDependencies of this package), run
 * from node_modules with the Node that runs the tests: never fetched at
 * test time.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

const modules = new URL("../../node_modules/@modelcontextprotocol/", import.meta.url);
const bin = (pkg: string, file: string) => fileURLToPath(new URL(`${pkg}/dist/${file}`, modules));

export const NODE = process.execPath;
export const EVERYTHING = bin("server-everything", "index.js");
export const FILESYSTEM = bin("server-filesystem", "index.js");
export const MEMORY = bin("server-memory", "index.js");

/** `mcpServers` entry of the everything server over stdio. */
export const everythingStdio = () => ({ command: NODE, args: [EVERYTHING, "stdio"] });

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The everything server in its Streamable HTTP mode; resolves once it listens. */
export async function startEverythingHttp(): Promise<{
  url: string;
  child: ChildProcess;
  stop: () => Promise<void>;
}> {
  const port = await freePort();
  const child = spawn(NODE, [EVERYTHING, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = "";
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes("listening on port")) resolve();
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`everything server exited (${code}): ${seen}`)));
    setTimeout(() => reject(new Error(`everything server did not start: ${seen}`)), 30_000).unref();
  });
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  };
  return { url: `http://127.0.0.1:${port}/mcp`, child, stop };
}

/** Whether a process is alive (a zombie waiting for its reaper counts as gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return true;
  }
}

/** Waits up to `ms` for a process to be gone; returns whether it is. */
export async function gone(pid: number, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!alive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !alive(pid);
}
