import { execFileSync, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll } from "vitest";

export const CLI_DIR = fileURLToPath(new URL("..", import.meta.url));
/**
 * The shipped yoi: the bundle `npm install -g @yoi/cli` installs, rebuilt
 * by the global set-up when its sources changed (../fresh-bundle.ts).
 */
export const BIN = path.join(CLI_DIR, "dist", "bin.js");

/** The command line that runs the shipped yoi: Node, its flags (`--import=...`), dist/bin.js. */
export function yoiArgv(nodeArgs: readonly string[] = []): string[] {
  return [process.execPath, ...nodeArgs, BIN];
}
export const FIXTURES = fileURLToPath(new URL("../../../fixtures/provider-streams/", import.meta.url));

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** An environment with nothing of the user's: a temp HOME, no keys, no YOI_* variables. */
export function cleanEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    LANG: "C.UTF-8",
  };
  return { ...env, ...extra };
}

/** Runs the shipped CLI with Node 24 (the one running the tests). */
export function runYoi(
  args: readonly string[],
  options: { env: Record<string, string>; cwd?: string; input?: string | Uint8Array; nodeArgs?: string[] },
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const [node, ...argv] = yoiArgv(options.nodeArgs);
    const child = spawn(node!, [...argv, ...args], {
      cwd: options.cwd ?? CLI_DIR,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    child.on("error", reject);
    // The CLI may exit before reading all of stdin (an oversized prompt): that is not the test's error.
    child.stdin.on("error", () => {});
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
  });
}

/**
 * What tempWorld made in this test file, removed when the file's tests are
 * done (under vitest; a benchmark that borrows these helpers cleans up itself).
 */
const worlds: string[] = [];
if (process.env.VITEST) {
  afterAll(async () => {
    // Retried: a yoi just killed with its tmux pane may still be writing its cache as it exits.
    await Promise.all(
      worlds
        .splice(0)
        .map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 })),
    );
  });
}

/** A temp dir with a HOME and a project holding `files`. */
export async function tempWorld(
  files: Record<string, string> = {},
): Promise<{ home: string; project: string }> {
  const base = await mkdtemp(path.join(tmpdir(), "yoi-cli-test-"));
  worlds.push(base);
  const home = path.join(base, "home");
  const project = path.join(base, "project");
  await mkdir(home, { recursive: true });
  await mkdir(project, { recursive: true });
  for (const [name, body] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(project, name)), { recursive: true });
    await writeFile(path.join(project, name), body);
  }
  return { home, project };
}

/** Lines of JSON output, parsed. */
export function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The text of the tool results an Anthropic request carries for the previous turn's calls. */
export function toolResults(body: unknown): string[] {
  const last = (body as { messages: { content: unknown }[] }).messages.at(-1);
  if (last === undefined || !Array.isArray(last.content)) return [];
  return (last.content as { type: string; content?: unknown }[])
    .filter((block) => block.type === "tool_result")
    .map((block) =>
      typeof block.content === "string"
        ? block.content
        : ((block.content ?? []) as { text?: string }[]).map((p) => p.text ?? "").join(""),
    );
}

/**
 * A self-signed certificate for 127.0.0.1, made by openssl (on the machine
 * image) in a temp dir removed after the tests: the CA file to trust, and
 * the key and certificate a TLS server serves.
 */
export async function selfSignedCertificate(): Promise<{
  certFile: string;
  tls: { key: Buffer; cert: Buffer };
}> {
  const dir = await mkdtemp(path.join(tmpdir(), "yoi-cli-tls-"));
  worlds.push(dir);
  const key = path.join(dir, "key.pem");
  const cert = path.join(dir, "cert.pem");
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"].concat([
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      key,
      "-out",
      cert,
    ]),
    { stdio: "ignore" },
  );
  return { certFile: cert, tls: { key: await readFile(key), cert: await readFile(cert) } };
}
