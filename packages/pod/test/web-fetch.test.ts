import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo, LookupFunction } from "node:net";
import * as path from "node:path";
import { gzipSync } from "node:zlib";
import { createClient } from "@yoi/llm-client";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import type { ToolExecutionContext, ToolOutput, ToolReturn } from "@yoi/llm-worker";
import { ConfigSchema } from "@yoi/manifest";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PermissionPolicy, primaryArgument } from "../src/permissions/index.ts";
import { Pod } from "../src/pod.ts";
import type { PodOptions } from "../src/pod-options.ts";
import { webFetchTool } from "../src/tools/web-fetch.ts";
import { tempDir } from "./helpers.ts";

const TEN_MB = 10 * 1024 * 1024;
let site: Server;
let origin = "";
let port = 0;
/** The paths the site was asked for, in order. */
const requests: string[] = [];

beforeAll(async () => {
  site = createServer((req, res) => {
    const url = req.url ?? "/";
    requests.push(url);
    switch (url) {
      case "/page":
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(
          "<!doctype html><html><head><title>The  Guide</title><style>body{color:red}</style></head>" +
            "<body><h1>Install</h1><p>Run <code>npm i yoi</code> then read <a href='/docs'>the docs</a>.</p>" +
            "<script>alert('x')</script><ul><li>fast</li><li>small</li></ul></body></html>",
        );
        return;
      case "/big":
      case "/bigtext":
        res.writeHead(200, {
          "content-type": url === "/big" ? "text/html" : "text/plain",
          "content-length": String(TEN_MB),
          // The client stops reading halfway: this connection is not reused.
          connection: "close",
        });
        // 10 MB of paragraphs, written in 64 KiB pieces.
        {
          const piece = "<p>filler text about nothing in particular</p>\n".repeat(1400).slice(0, 65536);
          let sent = 0;
          const write = () => {
            while (sent < TEN_MB) {
              const chunk = piece.slice(0, Math.min(piece.length, TEN_MB - sent));
              sent += chunk.length;
              if (!res.write(chunk)) {
                res.once("drain", write);
                return;
              }
            }
            res.end();
          };
          res.on("error", () => {});
          write();
        }
        return;
      case "/long":
        res.writeHead(200, { "content-type": "text/plain" });
        res.end(
          Array.from({ length: 3000 }, (_, i) => (i === 2500 ? "the PASSWORD reset link" : `line ${i}`)).join(
            "\n",
          ),
        );
        return;
      case "/loop":
        res.writeHead(302, { location: "/loop" });
        res.end();
        return;
      case "/hop":
        res.writeHead(301, { location: "/page" });
        res.end();
        return;
      case "/elsewhere":
        res.writeHead(302, { location: `http://localhost:${port}/page` });
        res.end();
        return;
      case "/to-file":
        res.writeHead(302, { location: "file:///etc/passwd" });
        res.end();
        return;
      case "/slow":
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("start");
        return; // never ends
      case "/png":
        res.writeHead(200, { "content-type": "image/png" });
        res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
        return;
      case "/latin1":
        res.writeHead(200, { "content-type": "text/plain; charset=iso-8859-1" });
        res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9])); // "café"
        return;
      case "/json":
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"ok":true}');
        return;
      case "/gzipped":
        res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
        res.end(gzipSync("unpacked text"));
        return;
      default:
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("nope");
    }
  });
  // Longer than any pause in these tests, so a pooled connection is never closed under a request.
  site.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  port = (site.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  site.closeAllConnections();
  await new Promise((resolve) => site.close(resolve));
});

function ctx(signal = new AbortController().signal): ToolExecutionContext {
  return { callId: "c", batchId: "b", callIndex: 0, batchSize: 1, turnIndex: 0, signal };
}

function text(out: ToolReturn): string {
  if (typeof out === "string") return out;
  return out.kind === "inline" ? out.text : (out.summary ?? "");
}

const tool = webFetchTool({ timeoutMs: 2000 });
const run = (url: string, prompt?: string) => tool.execute({ url, ...(prompt ? { prompt } : {}) }, ctx());

describe("web_fetch", () => {
  it("turns HTML into Markdown without scripts or styles", async () => {
    const out = text(await run(`${origin}/page`));
    expect(out).toContain(`URL: ${origin}/page`);
    expect(out).toContain("Title: The Guide");
    expect(out).toContain("# Install");
    expect(out).toContain("Run `npm i yoi` then read [the docs](/docs).");
    expect(out).toMatch(/-\s+fast\n-\s+small/);
    expect(out).not.toContain("alert(");
    expect(out).not.toContain("color:red");
  });

  it("passes text and JSON through, decoding the declared charset", async () => {
    expect(text(await run(`${origin}/latin1`))).toContain("café");
    expect(text(await run(`${origin}/json`))).toContain('{"ok":true}');
  });

  it("refuses file:, data: and other schemes, bad URLs and credentials", async () => {
    await expect(run("file:///etc/passwd")).rejects.toThrow(
      /only fetches http:\/\/ and https:\/\/ URLs; file: is refused/,
    );
    await expect(run("data:text/plain,hi")).rejects.toThrow(/data: is refused/);
    await expect(run("ftp://example.com/x")).rejects.toThrow(/ftp: is refused/);
    await expect(run("not a url")).rejects.toThrow(/not an absolute URL/);
    await expect(run(`http://user:pw@127.0.0.1:${port}/page`)).rejects.toThrow(/credentials/);
    await expect(run(`${origin}/to-file`)).rejects.toThrow(/redirected to file: URL/);
  });

  it("never fetches a link-local or cloud metadata address, however it is written", async () => {
    for (const url of [
      "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
      "http://0xa9fea9fe/latest/meta-data/",
      "http://2852039166/computeMetadata/v1/",
      "http://[fd00:ec2::254]/latest/meta-data/",
      "http://[::ffff:169.254.169.254]/",
      "http://[fe80::1]/",
      "http://100.100.100.200/latest/meta-data/",
    ])
      await expect(run(url), url).rejects.toThrow(
        /link-local and cloud metadata addresses serve the machine's credentials/,
      );
    // Loopback stays fetchable (a dev server the user asks about).
    expect(text(await run(`http://localhost:${port}/json`))).toContain('{"ok":true}');
  });

  it("connects only to the address it checked: a name that answers differently the second time (DNS rebinding) is refused", async () => {
    // The first answer (the check before anyone is asked) is loopback, the next ones the metadata address.
    let asked = 0;
    const rebinding: LookupFunction = (_host, options, callback) => {
      asked++;
      const address = asked === 1 ? "127.0.0.1" : "169.254.169.254";
      if (options.all) callback(null, [{ address, family: 4 }]);
      else callback(null, address, 4);
    };
    const tool = webFetchTool({ timeoutMs: 2000, lookup: rebinding });
    await expect(tool.check?.({ url: `http://rebind.test:${port}/json` }, ctx())).resolves.toBeUndefined();
    await expect(tool.execute({ url: `http://rebind.test:${port}/json` }, ctx())).rejects.toThrow(
      /does not fetch rebind\.test \(169\.254\.169\.254\): link-local and cloud metadata addresses/,
    );
    // A name with several addresses is refused when any of them is one.
    const mixed: LookupFunction = (_host, _options, callback) =>
      callback(null, [
        { address: "127.0.0.1", family: 4 },
        { address: "fd00:ec2::254", family: 6 },
      ]);
    await expect(
      webFetchTool({ lookup: mixed }).execute({ url: `http://mixed.test:${port}/json` }, ctx()),
    ).rejects.toThrow(/does not fetch mixed\.test \(fd00:ec2::254\)/);
    // A resolver that gives one address though all were asked for is checked too.
    const single = ((_host: string, _options: unknown, callback: (e: null, a: string, f: number) => void) =>
      callback(null, "169.254.169.254", 4)) as unknown as LookupFunction;
    await expect(
      webFetchTool({ lookup: single }).execute({ url: `http://single.test:${port}/json` }, ctx()),
    ).rejects.toThrow(/does not fetch single\.test \(169\.254\.169\.254\)/);
    // A name that resolves where it may goes where the resolver said: the site answers.
    const before = requests.length;
    const here: LookupFunction = (_host, options, callback) =>
      options.all ? callback(null, [{ address: "127.0.0.1", family: 4 }]) : callback(null, "127.0.0.1", 4);
    expect(
      text(await webFetchTool({ lookup: here }).execute({ url: `http://site.test:${port}/json` }, ctx())),
    ).toContain('{"ok":true}');
    expect(requests.slice(before)).toEqual(["/json"]);
  });

  it("goes through HTTP_PROXY when NODE_USE_ENV_PROXY=1, as Node's fetch does", async () => {
    // Node reads the proxy variables at start-up: the tool runs in a node of its own.
    const proxied: string[] = [];
    const proxy = createServer((req, res) => {
      proxied.push(req.url ?? "");
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("through the proxy");
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      const script = `import { webFetchTool } from ${JSON.stringify(new URL("../src/tools/web-fetch.ts", import.meta.url).href)};
const out = await webFetchTool().execute({ url: "http://proxied.test/page" }, { signal: new AbortController().signal });
process.stdout.write(typeof out === "string" ? out : out.text);`;
      const out = await new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          ["--conditions=@yoi/source", "--input-type=module", "-e", script],
          {
            env: {
              ...process.env,
              NODE_USE_ENV_PROXY: "1",
              HTTP_PROXY: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
            },
          },
          (error, stdout, stderr) =>
            error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
        ),
      );
      expect(out).toContain("through the proxy");
      expect(proxied).toEqual(["http://proxied.test/page"]);
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it("reads a compressed page as its text", async () => {
    expect(text(await run(`${origin}/gzipped`))).toContain("unpacked text");
  });

  it("follows same-host redirects, stops a loop, and hands back a redirect to another host", async () => {
    expect(text(await run(`${origin}/hop`))).toContain(`URL: ${origin}/page`);
    await expect(run(`${origin}/loop`)).rejects.toThrow(/redirected more than 5 times/);
    const other = text(await run(`${origin}/elsewhere`));
    expect(other).toContain(`redirects to another host: http://localhost:${port}/page`);
    expect(other).toContain("It was not followed");
  });

  it("says clearly when the host is unreachable, slow, answers an error or is not text", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(run(`http://127.0.0.1:${deadPort}/`)).rejects.toThrow(
      /Could not fetch .*connection was refused/,
    );
    const quick = webFetchTool({ timeoutMs: 300 });
    await expect(quick.execute({ url: `${origin}/slow` }, ctx())).rejects.toThrow(/timed out/);
    await expect(run(`${origin}/missing`)).rejects.toThrow(/answered HTTP 404 Not Found/);
    await expect(run(`${origin}/png`)).rejects.toThrow(/image\/png, not a text page/);
  });

  it("reads at most maxBytes of a 10 MB page and stores a large page as a blob with a summary", async () => {
    const raw = (await run(`${origin}/bigtext`)) as ToolOutput;
    expect(text(raw)).toContain("[truncated: only the first 5.0 MiB of 10.0 MiB were read]");
    expect(raw.kind === "stored" && raw.content.kind === "text" && raw.content.text.length).toBeLessThan(
      5 * 1024 * 1024 + 1024,
    );
    const out = (await run(`${origin}/big`)) as ToolOutput;
    expect(out.kind).toBe("stored");
    const summary = text(out);
    expect(summary).toContain("[truncated: only the first 1.0 MiB of 10.0 MiB were converted]");
    expect(summary).toContain("read it with inspect");
    if (out.kind === "stored" && out.content.kind === "text") {
      expect(out.content.text.length).toBeLessThan(1024 * 1024);
      expect(out.content.text).toContain("filler text about nothing");
    }
  }, 60_000);

  it("quotes the lines that mention the prompt's words in a large page's summary", async () => {
    const long = text(await run(`${origin}/long`, "how do I reset my password?"));
    expect(long).toContain("Lines mentioning your prompt:\nthe PASSWORD reset link");
  });

  it("is cancelled by the call's signal", async () => {
    const controller = new AbortController();
    const pending = tool.execute({ url: `${origin}/slow` }, ctx(controller.signal));
    setTimeout(() => controller.abort(new Error("cancelled")), 50);
    await expect(pending).rejects.toThrow();
  });
});

describe("web_fetch permissions", () => {
  it("the subject is the host; rules match it; allow_always grants one host", async () => {
    expect(primaryArgument("web_fetch", { url: "https://docs.example.com/a?b" })).toBe("docs.example.com");
    expect(primaryArgument("web_fetch", { url: "file:///etc/passwd" })).toBeUndefined();
    const policy = new PermissionPolicy({
      rules: [
        { tool: "web_fetch", match: "*.example.com", action: "allow" },
        { tool: "web_fetch", match: "evil.test", action: "deny" },
      ],
    });
    expect(await policy.evaluate("web_fetch", { url: "https://docs.example.com/x" })).toMatchObject({
      action: "allow",
    });
    expect(await policy.evaluate("web_fetch", { url: "http://evil.test/" })).toMatchObject({
      action: "deny",
    });
    expect((await policy.evaluate("web_fetch", { url: "https://other.org/" })).action).toBe("ask");

    const asked: string[] = [];
    const interactive = new PermissionPolicy(
      {},
      {
        ask: async (request) => {
          asked.push(request.subject ?? "");
          return "allow_always";
        },
      },
    );
    const call = (url: string) => interactive.check({ callId: "c", name: "web_fetch", args: { url } });
    await call("https://a.example/1");
    expect((await call("https://a.example/2")).by).toBe("session");
    await call("https://b.example/");
    expect(asked).toEqual(["a.example", "b.example"]);
  });
});

describe("web_fetch in a pod", () => {
  const servers: ScriptedServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });

  /** The result of one web_fetch call of `url` in a pod with these rules (and this UI, when given). */
  async function fetchInPod(
    url: string,
    rules: { tool: string; match?: string; action: "allow" | "deny" | "ask" }[] = [],
    ask?: PodOptions["ask"],
  ) {
    const base = await tempDir();
    const s = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        { type: "reply", toolCalls: [{ id: "toolu_w", name: "web_fetch", arguments: { url } }] },
        { type: "reply", text: "done" },
      ],
    });
    servers.push(s);
    const pod = await Pod.create({
      cwd: base,
      dataDir: path.join(base, ".data"),
      fsync: "never",
      config: ConfigSchema.parse({ permissions: { rules } }),
      client: createClient({
        provider: "anthropic",
        model: "claude-haiku-4-5",
        apiKey: "k",
        baseURL: s.baseURL,
        retry: { maxAttempts: 1 },
      }),
      ...(ask !== undefined ? { ask } : {}),
    });
    await pod.run("fetch it");
    const result = pod.history.find((i) => i.type === "tool_result");
    await pod.close();
    return result?.type === "tool_result" ? result : undefined;
  }

  it("asks by default (denied without a UI) and runs once a rule allows the host", async () => {
    const denied = await fetchInPod(`${origin}/page`);
    expect(denied?.isError).toBe(true);
    expect(denied?.output).toContain("Permission denied: web_fetch (127.0.0.1)");
    const allowed = await fetchInPod(`${origin}/page`, [
      { tool: "web_fetch", match: "127.0.0.1", action: "allow" },
    ]);
    expect(allowed?.isError).toBe(false);
    expect(allowed?.output).toContain("# Install");
  });

  it("refuses a metadata address without asking anyone", async () => {
    const asked: string[] = [];
    const result = await fetchInPod("http://169.254.169.254/latest/", [], async (request) => {
      asked.push(`${request.tool} ${request.subject}`);
      return "allow";
    });
    expect(asked).toEqual([]);
    expect(result?.isError).toBe(true);
    expect(result?.output).toMatch(/cloud metadata addresses/);
  });
});
