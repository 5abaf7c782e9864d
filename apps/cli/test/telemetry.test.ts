/**
 * OpenTelemetry from the shipped `yoi`: with OTEL_EXPORTER_OTLP_ENDPOINT
 * pointing at a receiver on 127.0.0.1, a `yoi -p` run with tool calls
 * exports its span tree and metrics, in both OTLP encodings, with the GenAI
 * attributes and without the prompt's text; a collector that is down or
 * stuck costs the run nothing but one line at exit; invalid variables give
 * one line and the run goes on without telemetry.
 */

import { spawn } from "node:child_process";
import * as path from "node:path";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { CLI_DIR, cleanEnv, runYoi, selfSignedCertificate, tempWorld, yoiArgv } from "./helpers.ts";
import { type OtlpReceiver, startOtlpReceiver } from "./otlp-receiver.ts";
import { post, sseEvents, startServe } from "./serve-helpers.ts";

const PROMPT_WORD = "zanzibar-quokka";
const SECRET_HEADER = "collector-token-5b7e91";

const SCRIPT: ScriptStep[] = [
  {
    type: "reply",
    text: "Let me look.",
    toolCalls: [
      { id: "call_read", name: "read_file", arguments: { path: "notes/a.txt" } },
      { id: "call_list", name: "list_dir", arguments: { path: "." } },
    ],
    options: { usage: { inputTokens: 1200, outputTokens: 30 } },
  },
  {
    type: "reply",
    text: "The note says hello.",
    options: { usage: { inputTokens: 1400, outputTokens: 12 } },
  },
];

const servers: ScriptedServer[] = [];
const receivers: OtlpReceiver[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const r of receivers.splice(0)) await r.close();
});

async function printRun(otel: Record<string, string>) {
  const server = await startScriptedServer({ provider: "anthropic", script: SCRIPT, validate: true });
  servers.push(server);
  const { home, project } = await tempWorld({ "notes/a.txt": "hello from a\n" });
  const began = performance.now();
  const result = await runYoi(
    ["-p", "--model", "anthropic/claude-haiku-4-5", `read notes/a.txt for ${PROMPT_WORD}`],
    {
      cwd: project,
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.baseURL, ...otel }),
    },
  );
  return { result, elapsedMs: performance.now() - began };
}

describe.each(["http/protobuf", "http/json"] as const)("OTLP %s", (protocol) => {
  it("a yoi -p run with tool calls exports its span tree and metrics", async () => {
    const receiver = await startOtlpReceiver();
    receivers.push(receiver);
    const { result } = await printRun({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${SECRET_HEADER},x-team=yoi`,
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("The note says hello.");

    const wanted = protocol === "http/json" ? "application/json" : "application/x-protobuf";
    expect(receiver.requests.map((r) => r.contentType)).toEqual(receiver.requests.map(() => wanted));
    expect(receiver.requests[0]!.headers.authorization).toBe(`Bearer ${SECRET_HEADER}`);
    expect(receiver.requests[0]!.headers["x-team"]).toBe("yoi");

    const spans = receiver.spans;
    const agent = spans.find((s) => s.name === "invoke_agent yoi");
    expect(agent).toBeDefined();
    expect(agent!.resource["service.name"]).toBe("yoi");
    expect(agent!.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "yoi",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-haiku-4-5",
      "yoi.run.status": "completed",
    });
    expect(typeof agent!.attributes["gen_ai.conversation.id"]).toBe("string");

    const chats = spans.filter((s) => s.name === "chat claude-haiku-4-5");
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(chat.parentSpanId).toBe(agent!.spanId);
      expect(chat.traceId).toBe(agent!.traceId);
      expect(chat.kind).toBe(3); // CLIENT
      expect(chat.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "claude-haiku-4-5",
        "gen_ai.response.model": expect.any(String),
      });
    }
    const first = chats.find((c) => c.attributes["gen_ai.usage.input_tokens"] === 1200);
    expect(first?.attributes["gen_ai.usage.output_tokens"]).toBe(30);
    expect(first?.attributes["gen_ai.response.finish_reasons"]).toEqual(["tool_use"]);

    const tools = spans.filter((s) => s.name.startsWith("execute_tool "));
    expect(tools.map((t) => t.name).sort()).toEqual(["execute_tool list_dir", "execute_tool read_file"]);
    const read = tools.find((t) => t.name === "execute_tool read_file")!;
    expect(read.parentSpanId).toBe(agent!.spanId);
    expect(read.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "read_file",
      "gen_ai.tool.call.id": "call_read",
      "yoi.tool.batch.index": 0,
      "yoi.tool.batch.size": 2,
      "yoi.tool.outcome": "ok",
    });
    expect(tools.find((t) => t.name === "execute_tool list_dir")!.attributes["yoi.tool.batch.index"]).toBe(1);
    expect(read.attributes["yoi.tool.batch.id"]).toBe(
      tools.find((t) => t.name === "execute_tool list_dir")!.attributes["yoi.tool.batch.id"],
    );

    // No prompt or completion text without the opt-in; the collector's token nowhere.
    const everything = JSON.stringify(spans);
    expect(everything).not.toContain(PROMPT_WORD);
    expect(everything).not.toContain("The note says hello");
    expect(everything).not.toContain("hello from a");
    expect(everything).not.toContain(SECRET_HEADER);

    const metric = (name: string) => receiver.metrics.find((m) => m.name === name);
    const tokens = metric("gen_ai.client.token.usage");
    expect(tokens?.unit).toBe("{token}");
    const input = tokens!.points.find((p) => p.attributes["gen_ai.token.type"] === "input");
    expect(input).toMatchObject({ count: 2, sum: 2600 });
    expect(input!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
    });
    expect(metric("gen_ai.client.operation.duration")?.points[0]?.count).toBe(2);
    expect(metric("yoi.tool.duration")?.points.reduce((n, p) => n + (p.count ?? 0), 0)).toBe(2);
    // claude-haiku-4-5 lists $1 / $5 per million: 2600 input and 42 output tokens.
    const cost = metric("yoi.cost")?.points.find((p) => p.attributes["yoi.agent"] === "main");
    expect(cost?.value).toBeCloseTo((2600 * 1 + 42 * 5) / 1e6, 9);
  }, 60_000);
});

describe("OTEL_EXPORTER_OTLP_COMPRESSION=gzip", () => {
  it("sends each batch gzipped, and the collector gets the same spans and metrics", async () => {
    const receiver = await startOtlpReceiver();
    receivers.push(receiver);
    const { result } = await printRun({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_COMPRESSION: "gzip",
      OTEL_EXPORTER_OTLP_METRICS_COMPRESSION: "none",
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe("");
    const encodings = receiver.requests.map((r) => [r.path, r.headers["content-encoding"]]);
    expect(encodings).toContainEqual(["/v1/traces", "gzip"]);
    expect(encodings).toContainEqual(["/v1/metrics", undefined]);
    expect(receiver.spans.map((s) => s.name)).toEqual(
      expect.arrayContaining(["invoke_agent yoi", "chat claude-haiku-4-5", "execute_tool read_file"]),
    );
    expect(receiver.metrics.map((m) => m.name)).toContain("gen_ai.client.token.usage");
  }, 60_000);
});

describe("a collector on https:// with its own certificate (OTEL_EXPORTER_OTLP_CERTIFICATE)", () => {
  it("trusts the collector with the named CA file, and without it says why nothing was delivered", async () => {
    const { certFile, tls } = await selfSignedCertificate();
    const receiver = await startOtlpReceiver({ tls });
    receivers.push(receiver);
    const trusted = await printRun({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_CERTIFICATE: certFile,
    });
    expect(trusted.result.code).toBe(0);
    expect(trusted.result.stderr).toBe("");
    expect(receiver.spans.map((s) => s.name)).toContain("invoke_agent yoi");
    expect(receiver.metrics.map((m) => m.name)).toContain("gen_ai.client.token.usage");

    const untrusted = await printRun({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
    expect(untrusted.result.code).toBe(0);
    expect(untrusted.result.stderr).toMatch(
      /^yoi: telemetry: \d+ spans to https:.* could not be delivered \(.*certificate.*\)\n$/,
    );
  }, 60_000);
});

describe("a collector that cannot take the telemetry", () => {
  it("down (connection refused): the run succeeds and says once how many spans were lost", async () => {
    const receiver = await startOtlpReceiver();
    const endpoint = receiver.endpoint;
    await receiver.close();
    const { result } = await printRun({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("The note says hello.");
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^yoi: telemetry: \\d+ spans to ${endpoint}/v1/traces and 1 metric export to ${endpoint}/v1/metrics could not be delivered \\(.+\\)$`,
      ),
    );
    expect(Number(/(\d+) spans/.exec(lines[0]!)![1])).toBeGreaterThanOrEqual(5);
  }, 60_000);

  it("refusing (HTTP 503): the run succeeds and the one line gives the collector's answer", async () => {
    const receiver = await startOtlpReceiver({ status: 503 });
    receivers.push(receiver);
    const { result } = await printRun({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("The note says hello.");
    expect(result.stderr).toMatch(
      /^yoi: telemetry: \d+ spans to .*\/v1\/traces and 1 metric export to .*\/v1\/metrics could not be delivered \(the collector answered HTTP 503\)\n$/,
    );
  }, 60_000);

  it("busy once (HTTP 503, then 200): each batch is tried again and delivered", async () => {
    const receiver = await startOtlpReceiver({ status: 503, statusTimes: 2 });
    receivers.push(receiver);
    const { result } = await printRun({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    expect(receiver.spans.map((s) => s.name)).toContain("invoke_agent yoi");
    expect(receiver.metrics.map((m) => m.name)).toContain("gen_ai.client.token.usage");
  }, 60_000);

  it("stuck (never answers): the exit waits no longer than the export limit", async () => {
    const receiver = await startOtlpReceiver({ hang: true });
    receivers.push(receiver);
    const quick = await printRun({});
    const { result, elapsedMs } = await printRun({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_TIMEOUT: "400",
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("The note says hello.");
    expect(result.stderr).toMatch(/^yoi: telemetry: \d+ spans to .* could not be delivered \(.+\)\n$/);
    // Generous: the bound is 400 ms plus a margin; a hang would be the exporters' default 10 s or more.
    expect(elapsedMs - quick.elapsedMs).toBeLessThan(8_000);
  }, 60_000);
});

describe("invalid OTEL variables: one line, the run goes on without telemetry", () => {
  const cases: [string, Record<string, string>, RegExp][] = [
    ["a bad URL", { OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" }, /OTEL_EXPORTER_OTLP_ENDPOINT is not a URL/],
    [
      "a non-HTTP URL",
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "ftp://127.0.0.1/x" },
      /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http:\/\/ or https:\/\/ URL/,
    ],
    [
      "an unknown protocol",
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
      /OTEL_EXPORTER_OTLP_PROTOCOL="grpc" is not supported; use http\/protobuf or http\/json/,
    ],
    [
      "malformed headers",
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
        OTEL_EXPORTER_OTLP_HEADERS: `api-key ${SECRET_HEADER}`,
      },
      /OTEL_EXPORTER_OTLP_HEADERS is malformed at entry 1; write it as key1=value1,key2=value2/,
    ],
    [
      "a bad timeout",
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_EXPORTER_OTLP_TIMEOUT: "soon" },
      /OTEL_EXPORTER_OTLP_TIMEOUT must be a positive whole number of milliseconds/,
    ],
  ];
  it.each(cases)(
    "%s",
    async (_name, env, line) => {
      const { result } = await printRun(env);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("The note says hello.");
      const lines = result.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^yoi: telemetry is off: /);
      expect(lines[0]).toMatch(line);
      expect(result.stderr).not.toContain(SECRET_HEADER);
    },
    60_000,
  );
});

describe("the flush on other ways out", () => {
  it("SIGTERM in the middle of a run: what has ended is still delivered, and the exit code is 143", async () => {
    const receiver = await startOtlpReceiver();
    receivers.push(receiver);
    const server = await startScriptedServer({
      provider: "anthropic",
      // The first answer asks for a tool; the second request is never answered.
      script: [SCRIPT[0]!, { type: "silence" }],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "notes/a.txt": "hello from a\n" });
    const [node, ...argv] = yoiArgv();
    const child = spawn(node!, [...argv, "-p", "--model", "anthropic/claude-haiku-4-5", "read notes/a.txt"], {
      cwd: project,
      env: cleanEnv(home, {
        ANTHROPIC_API_KEY: "test-key",
        ANTHROPIC_BASE_URL: server.baseURL,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const code = new Promise<number | null>((resolve) => child.on("close", resolve));
    // Wait until the hanging second request has arrived: the first call and both tools have ended.
    while (server.requests.length < 2) await new Promise((r) => setTimeout(r, 20));
    child.kill("SIGTERM");
    expect(await code).toBe(143);
    const names = receiver.spans
      .filter((s) => s.scope.startsWith("@yoi/"))
      .map((s) => s.name)
      .sort();
    expect(names).toEqual(["chat claude-haiku-4-5", "execute_tool list_dir", "execute_tool read_file"]);
  }, 60_000);

  it("a crash report (the terminal guard) flushes before it exits 1", async () => {
    const receiver = await startOtlpReceiver();
    receivers.push(receiver);
    const src = (file: string) => JSON.stringify(path.join(CLI_DIR, "src", file));
    const script = `
      const { setupTelemetry } = await import(${src("telemetry/index.ts")});
      const { installTerminalGuard } = await import(${src("ui/terminal-guard.ts")});
      const { trace } = await import("@opentelemetry/api");
      await setupTelemetry(process.env);
      installTerminalGuard();
      trace.getTracer("crash-test").startSpan("before the crash").end();
      setTimeout(() => { throw new Error("boom"); });
    `;
    const child = spawn(process.execPath, ["--conditions=@yoi/source", "--input-type=module", "-e", script], {
      cwd: CLI_DIR,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).toContain("yoi: internal error: Error: boom");
    expect(code).toBe(1);
    expect(receiver.spans.map((s) => s.name)).toEqual(["before the crash"]);
  }, 60_000);

  it("yoi serve exports each run's spans and flushes when it stops", async () => {
    const receiver = await startOtlpReceiver();
    receivers.push(receiver);
    const server = await startScriptedServer({
      provider: "openai-chat",
      script: () => ({ type: "reply", text: "Done: the answer is 42." }),
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "a.txt": "alpha\n" });
    const host = await startServe(
      [],
      cleanEnv(home, {
        YOI_TRUST_PROJECT: "1",
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      }),
      project,
    );
    const created = await post(`${host.url}/v1/sessions`, {
      model: "openai-chat/gpt-4.1-mini",
      baseUrl: server.baseURL,
    });
    const { id } = (await created.json()) as { id: string };
    let status = "";
    for await (const { data } of sseEvents(
      await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "hi" }),
    ))
      if (data.type === "result") status = String(data.status);
    expect(status).toBe("completed");
    expect(await host.stop()).toBe(0);
    const agent = receiver.spans.find((s) => s.name === "invoke_agent yoi");
    expect(agent?.attributes["gen_ai.conversation.id"]).toBe(id);
    expect(agent?.attributes["gen_ai.provider.name"]).toBe("openai");
    expect(receiver.spans.find((s) => s.name === "chat gpt-4.1-mini")?.parentSpanId).toBe(agent!.spanId);
    expect(receiver.metrics.some((m) => m.name === "gen_ai.client.token.usage")).toBe(true);
    expect(host.stderr()).not.toMatch(/telemetry/);
  }, 60_000);
});
