/**
 * Credentials in a provider's configuration never leave: a custom header
 * value and a base URL's `user:password@` are absent from stderr, from
 * every stream-json line and from the session log, even when the server
 * echoes them back (in an error it retries, in the model's text).
 */
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, jsonLines, runYoi, tempWorld } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const HEADER_SECRET = "hdr-Secret-4f9a2c";
const URL_PASSWORD = "pw-Hunter-77d1";

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(full)));
    else if ((await stat(full)).isFile()) out.push(full);
  }
  return out;
}

async function userConfig(home: string, provider: Record<string, unknown>): Promise<void> {
  const { mkdir } = await import("node:fs/promises");
  await mkdir(path.join(home, ".yoi"), { recursive: true });
  await writeFile(path.join(home, ".yoi", "config.jsonc"), JSON.stringify({ providers: { gw: provider } }));
}

describe("secrets in the provider config", () => {
  it("a custom header value is never on stderr, in stream-json or in the session log", async () => {
    const server = await startScriptedServer({
      provider: "openai-chat",
      script: [
        // A gateway that echoes what it received, in an error the client retries...
        { type: "error", status: 503, message: `upstream busy for token ${HEADER_SECRET}` },
        // ...and a model that repeats it (in one delta: a secret split across deltas is not caught per line).
        { type: "reply", text: `Your gateway token is ${HEADER_SECRET}.`, options: { chunkSize: 1000 } },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    await userConfig(home, {
      kind: "openai-chat",
      baseURL: server.baseURL,
      headers: { "x-gw-token": HEADER_SECRET },
    });
    const result = await runYoi(["-p", "--output", "stream-json", "--model", "gw/local-model", "hi"], {
      cwd: project,
      env: cleanEnv(home),
    });
    expect(result.stderr).not.toContain(HEADER_SECRET);
    expect(result.code).toBe(0);
    // The header did reach the server: the secret is real, only its display is hidden.
    expect(server.requests).toHaveLength(2);
    const lines = jsonLines(result.stdout);
    expect(lines.some((l) => l.type === "retry")).toBe(true);
    expect(lines.find((l) => l.type === "result")).toMatchObject({ status: "completed" });
    for (const line of result.stdout.split("\n")) expect(line).not.toContain(HEADER_SECRET);
    expect(result.stdout).toContain("<redacted>");
    // Everything yoi wrote (the user's own config file holds the header value, of course).
    const files = [...(await filesUnder(home)), ...(await filesUnder(project))].filter(
      (f) => !f.endsWith("config.jsonc"),
    );
    const logs = files.filter((f) => f.endsWith(".jsonl"));
    expect(logs.length).toBeGreaterThan(0);
    for (const file of files) expect(await readFile(file, "utf8"), file).not.toContain(HEADER_SECRET);
  });

  it("a base URL with user:password@ is refused with exit 2, the password never shown", async () => {
    const server = await startScriptedServer({
      provider: "openai-chat",
      script: [{ type: "reply", text: "x" }],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const url = new URL(server.baseURL);
    url.username = "bob";
    url.password = URL_PASSWORD;
    await userConfig(home, { kind: "openai-chat", baseURL: url.toString() });
    for (const output of ["text", "stream-json"]) {
      const result = await runYoi(["-p", "--output", output, "--model", "gw/local-model", "hi"], {
        cwd: project,
        env: cleanEnv(home),
      });
      expect(result.code).not.toBe(0);
      expect(result.stderr + result.stdout).not.toContain(URL_PASSWORD);
      expect(result.stderr).toMatch(/user:password@|credentials/);
      expect(server.requests).toHaveLength(0);
    }
    // Everything yoi wrote (the user's own config file holds the password, of course).
    const written = [...(await filesUnder(home)), ...(await filesUnder(project))].filter(
      (f) => !f.endsWith("config.jsonc"),
    );
    for (const file of written) expect(await readFile(file, "utf8"), file).not.toContain(URL_PASSWORD);
  });
});
