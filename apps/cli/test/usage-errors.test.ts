import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { connect, createServer as createNetServer } from "node:net";
import { createServer as createTlsServer } from "node:tls";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { cleanEnv, runYoi, selfSignedCertificate, tempWorld } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/** stderr is exactly one line starting with `yoi: `. */
function oneLine(stderr: string): string {
  const lines = stderr.split("\n").filter((l) => l !== "");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^yoi: /);
  return lines[0] ?? "";
}

describe("bad usage and failures: one clear line and the right exit code", () => {
  it("an unknown flag: exit 2", async () => {
    const { home } = await tempWorld();
    const r = await runYoi(["--frobnicate"], { env: cleanEnv(home) });
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toBe("yoi: unknown option --frobnicate (see yoi --help)");
    // Claude Code's name for --output: pointed at ours.
    const o = await runYoi(["-p", "--output-format", "json", "hi"], { env: cleanEnv(home) });
    expect(o.code).toBe(2);
    expect(oneLine(o.stderr)).toBe(
      "yoi: unknown option --output-format; did you mean --output? (see yoi --help)",
    );
    const s = await runYoi(["sessions", "--model", "x/y"], { env: cleanEnv(home) });
    expect(s.code).toBe(2);
    expect(oneLine(s.stderr)).toContain("--model does not apply to yoi sessions");
  });

  it("a missing file after @ is a warning, not an error: the prompt is sent with its placeholder, exit 0", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "reply", text: "no" }],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "a.txt": "a\n" });
    const r = await runYoi(["-p", "-m", "anthropic/claude-haiku-4-5", "look at @a.txt and @missing.txt"], {
      cwd: project,
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL }),
    });
    expect(r.code).toBe(0);
    expect(oneLine(r.stderr)).toBe(
      "yoi: warn: @missing.txt was not attached: missing.txt: no such file or directory; to send it as text, write \\@missing.txt",
    );
    expect(server.requests).toHaveLength(1);
    const sent = JSON.stringify(server.requests[0]);
    expect(sent).toContain("[File: a.txt]");
    expect(sent).toContain("look at [unresolved file ref: a.txt] and [unresolved file ref: missing.txt]");
  });

  it("an unreachable base URL: exit 1, names the provider, the system's reason and what to check", async () => {
    const { home, project } = await tempWorld();
    // A port on 127.0.0.1 that nothing listens on (bound, then released).
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const r = await runYoi(
      ["-p", "-m", "anthropic/claude-haiku-4-5", "--base-url", `http://127.0.0.1:${port}`, "hi"],
      {
        cwd: project,
        env: cleanEnv(home, { ANTHROPIC_API_KEY: "sk-ant-test-secret-123456" }),
      },
    );
    expect(r.code).toBe(1);
    const last = r.stderr.trim().split("\n").at(-1) ?? "";
    expect(last).toBe(
      `yoi: cannot reach anthropic at http://127.0.0.1:${port} (connect ECONNREFUSED 127.0.0.1:${port}) (gave up after 4 attempts; retry.maxAttempts is 4); check that the server is running and the base URL (--base-url or ANTHROPIC_BASE_URL)`,
    );
    // everything else on stderr is retry progress
    for (const line of r.stderr.trim().split("\n").slice(0, -1)) expect(line).toMatch(/^yoi: retrying/);
    expect(r.stderr).not.toContain("sk-ant-test-secret-123456");
  }, 60_000);

  it("a base URL on a port fetch refuses (one browsers block) is reached: the SDKs send with node:http", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "reply", text: "port ok" }],
    });
    servers.push(server);
    const upstream = Number(new URL(server.baseURL).port);
    // A relay on the first port of fetch's blocked list that is free here.
    const relay = createNetServer((socket) => socket.pipe(connect(upstream, "127.0.0.1")).pipe(socket));
    let port: number | undefined;
    for (const candidate of [6000, 6665, 6666, 6667, 6668, 6669, 6697, 10080, 5060, 5061, 4045]) {
      const bound = await new Promise<boolean>((resolve) => {
        relay.once("error", () => resolve(false));
        relay.listen(candidate, "127.0.0.1", () => resolve(true));
      });
      if (bound) {
        port = candidate;
        break;
      }
    }
    try {
      expect(port).toBeDefined();
      const { home, project } = await tempWorld();
      const r = await runYoi(
        ["-p", "-m", "anthropic/claude-haiku-4-5", "--base-url", `http://127.0.0.1:${port}`, "hi"],
        { cwd: project, env: cleanEnv(home, { ANTHROPIC_API_KEY: "k" }) },
      );
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe("port ok\n");
    } finally {
      await new Promise((resolve) => relay.close(resolve));
    }
  });

  it("an https base URL: trusted through NODE_EXTRA_CA_CERTS, and an untrusted certificate said as such", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: () => ({ type: "reply", text: "over tls" }),
    });
    servers.push(server);
    const { certFile, tls } = await selfSignedCertificate();
    const upstream = Number(new URL(server.baseURL).port);
    // TLS in front of the scripted server.
    const front = createTlsServer(tls, (socket) => socket.pipe(connect(upstream, "127.0.0.1")).pipe(socket));
    await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => new Promise<void>((resolve) => front.close(() => resolve())));
    const baseURL = `https://127.0.0.1:${(front.address() as AddressInfo).port}`;
    const { home, project } = await tempWorld();
    const args = ["-p", "-m", "anthropic/claude-haiku-4-5", "--base-url", baseURL, "hi"];
    const trusted = await runYoi(args, {
      cwd: project,
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "k", NODE_EXTRA_CA_CERTS: certFile }),
    });
    expect(trusted.stderr).toBe("");
    expect(trusted.stdout).toBe("over tls\n");
    const untrusted = await runYoi(args, { cwd: project, env: cleanEnv(home, { ANTHROPIC_API_KEY: "k" }) });
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr.trim().split("\n").at(-1)).toMatch(
      new RegExp(`^yoi: cannot reach anthropic at ${baseURL} \\(self-signed certificate.*\\)`),
    );
  }, 60_000);

  it("with NODE_USE_ENV_PROXY=1 the provider request goes through HTTP_PROXY, as Node's fetch would", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "reply", text: "proxied" }],
    });
    servers.push(server);
    const upstream = new URL(server.baseURL);
    const proxied: string[] = [];
    // A forward proxy: the request line carries the whole URL, which it sends on to the scripted server.
    const proxy = createServer((req, res) => {
      proxied.push(req.url ?? "");
      const target = new URL(req.url ?? "/");
      const forward = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: target.pathname,
          method: req.method,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(forward);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      const { home, project } = await tempWorld();
      const r = await runYoi(
        ["-p", "-m", "anthropic/claude-haiku-4-5", "--base-url", "http://provider.test", "hi"],
        {
          cwd: project,
          env: cleanEnv(home, {
            ANTHROPIC_API_KEY: "k",
            NODE_USE_ENV_PROXY: "1",
            HTTP_PROXY: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
          }),
        },
      );
      expect(r.stdout).toBe("proxied\n");
      expect(proxied).toEqual(["http://provider.test/v1/messages"]);
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it("a wrong key (401): exit 1, names the provider and the variable, never the key", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "error", status: 401, message: "invalid x-api-key sk-ant-wrong-key-987654" }],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const r = await runYoi(["-p", "-m", "anthropic/claude-haiku-4-5", "hi"], {
      cwd: project,
      env: cleanEnv(home, {
        ANTHROPIC_API_KEY: "sk-ant-wrong-key-987654",
        ANTHROPIC_BASE_URL: server.baseURL,
      }),
    });
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toBe(
      "yoi: anthropic rejected the API key (HTTP 401); check ANTHROPIC_API_KEY (a current key from the provider's console)",
    );
    expect(r.stdout + r.stderr).not.toContain("987654");
    expect(server.requests).toHaveLength(1);
  });

  it("a model unknown to the catalog: exit 2 and how to declare it", async () => {
    const { home, project } = await tempWorld();
    const r = await runYoi(["-p", "-m", "anthropic/claude-nonesuch-9", "hi"], {
      cwd: project,
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "k" }),
    });
    expect(r.code).toBe(2);
    const line = oneLine(r.stderr);
    expect(line).toContain('unknown model "claude-nonesuch-9" for anthropic');
    expect(line).toContain('.yoi/config.jsonc: "models": { "claude-nonesuch-9": { "provider": "anthropic"');
  });

  it("a model unknown to the catalog on a local server is fine (window assumed, said once)", async () => {
    const server = await startScriptedServer({
      provider: "openai-chat",
      script: [{ type: "reply", text: "hi there" }],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const r = await runYoi(["-p", "-m", "openai-chat/qwen3-coder:30b", "--base-url", server.baseURL, "hi"], {
      cwd: project,
      env: cleanEnv(home),
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("hi there\n");
    expect(oneLine(r.stderr)).toContain(
      'model "qwen3-coder:30b" is not in yoi\'s catalog; assuming a 131,072-token context window',
    );
    // a placeholder key was sent, since compatible servers need none
    expect(server.requests).toHaveLength(1);
  });

  it("nothing configured: exit 2 and what to set for each provider and a local server", async () => {
    const { home, project } = await tempWorld();
    const r = await runYoi(["-p", "hi"], { cwd: project, env: cleanEnv(home) });
    expect(r.code).toBe(2);
    for (const needle of [
      "ANTHROPIC_API_KEY",
      "OPENAI_API_KEY",
      "GEMINI_API_KEY",
      "--base-url http://127.0.0.1:11434/v1",
      "yoi demo",
    ]) {
      expect(r.stderr).toContain(needle);
    }
  });

  it("a key for a provider without one set: exit 2 naming yoi setup and the variable", async () => {
    const { home, project } = await tempWorld();
    const r = await runYoi(["-p", "-m", "gemini/gemini-2.5-flash", "hi"], {
      cwd: project,
      env: cleanEnv(home),
    });
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toContain("no API key for gemini: run yoi setup, or set GEMINI_API_KEY");
  });

  it("no prompt in print mode: exit 2", async () => {
    const { home, project } = await tempWorld();
    const r = await runYoi(["-p"], { cwd: project, env: cleanEnv(home, { ANTHROPIC_API_KEY: "k" }) });
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toContain("no prompt");
  });

  it("--base-url without a model: exit 2, suggesting the models the server offers", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "qwen3:8b" }, { id: "llama3.1:8b" }] }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const { home, project } = await tempWorld();
      const base = `http://127.0.0.1:${port}/v1`;
      const r = await runYoi(["-p", "--base-url", base, "hi"], { cwd: project, env: cleanEnv(home) });
      expect(r.code).toBe(2);
      expect(oneLine(r.stderr)).toBe(
        `yoi: --base-url needs a model to apply to: add --model, e.g. --model openai-chat/qwen3:8b --base-url ${base} (the server offers: qwen3:8b, llama3.1:8b)`,
      );
    } finally {
      server.close();
    }
  });
});
