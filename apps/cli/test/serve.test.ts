import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import {
  findPostgresBinDir,
  startTestPostgres,
  type TestPostgres,
} from "@yoi/worker-persistence/postgres/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { cleanEnv, jsonLines, runYoi, tempWorld } from "./helpers.ts";
import { post, type ServeEvent, type ServeProcess, sseEvents, startServe } from "./serve-helpers.ts";

// Without PostgreSQL server binaries these tests skip, unless YOI_REQUIRE_POSTGRES=1 (CI sets it).
const withPostgres = findPostgresBinDir() !== undefined || process.env.YOI_REQUIRE_POSTGRES === "1";

let pg: TestPostgres;
const hosts: ServeProcess[] = [];
const models: ScriptedServer[] = [];
beforeAll(async () => {
  if (!withPostgres) return;
  pg = await startTestPostgres();
}, 120_000);
afterAll(async () => {
  await pg?.stop();
});
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.kill();
  for (const m of models.splice(0)) await m.close();
});

const MODEL = "openai-chat/gpt-4.1-mini";
const READ_SCRIPT: ScriptStep[] = [
  {
    type: "reply",
    text: "Let me look.",
    toolCalls: [{ id: "call_read", name: "read_file", arguments: { path: "notes/a.txt" } }],
  },
  { type: "reply", text: "The note says hello.", options: { usage: { inputTokens: 900, outputTokens: 12 } } },
];

async function world() {
  const { home, project } = await tempWorld({ "notes/a.txt": "hello from a\n" });
  return { home, project, env: cleanEnv(home, { YOI_TRUST_PROJECT: "1" }) };
}

async function model(script: ScriptStep[] | ((index: number, body: unknown) => ScriptStep)) {
  const server = await startScriptedServer({ provider: "openai-chat", script, validate: true });
  models.push(server);
  return server;
}

async function serve(args: string[], env: Record<string, string>, cwd?: string) {
  const host = await startServe(args, env, cwd);
  hosts.push(host);
  return host;
}

async function collect(response: Response): Promise<ServeEvent[]> {
  const events: ServeEvent[] = [];
  for await (const event of sseEvents(response)) events.push(event);
  return events;
}

/** Stream-json objects without what differs between two runs of the same script. */
function normalize(events: Record<string, unknown>[]): Record<string, unknown>[] {
  return events.map((e) => {
    const { session_id: _s, duration_ms: _d, batch_id: _b, resumed: _r, ...rest } = e;
    return rest;
  });
}

describe.skipIf(!withPostgres)("yoi serve on PostgreSQL", () => {
  it("creates a session, streams a run as the stream-json objects of print mode, and shows the session", async () => {
    const { project, env } = await world();
    const server = await model(READ_SCRIPT);
    const host = await serve(["--store", await pg.createDatabase()], env, project);
    const created = await post(`${host.url}/v1/sessions`, { model: MODEL, baseUrl: server.baseURL });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    const run = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "summarize @notes/a.txt" });
    expect(run.status).toBe(200);
    expect(run.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = await collect(run);
    const data = events.map((e) => e.data);
    expect(data[0]).toMatchObject({
      type: "session",
      session_id: id,
      model: "gpt-4.1-mini",
      provider: "openai-chat",
    });
    expect(data.at(-1)).toMatchObject({
      type: "result",
      status: "completed",
      session_id: id,
      text: "The note says hello.",
      turns: 2,
      cost_usd: expect.any(Number),
      models: { [MODEL]: expect.objectContaining({ calls: 2, cost_usd: expect.any(Number) }) },
    });
    // ids are stored seqs: never decreasing
    const ids = events.map((e) => e.id ?? -1);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));

    // the same script through `yoi -p --output stream-json` gives the same objects
    const again = await model(READ_SCRIPT);
    const printed = await runYoi(
      [
        "-p",
        "--output",
        "stream-json",
        "--model",
        MODEL,
        "--base-url",
        again.baseURL,
        "summarize @notes/a.txt",
      ],
      {
        cwd: project,
        env,
      },
    );
    expect(printed.code).toBe(0);
    expect(normalize(data)).toEqual(normalize(jsonLines(printed.stdout)));

    const view = await fetch(`${host.url}/v1/sessions/${id}`);
    expect(view.status).toBe(200);
    const session = (await view.json()) as {
      id: string;
      items: { type: string }[];
      turns: number;
      title: string;
      cwd: string;
    };
    expect(session).toMatchObject({ id, turns: 2, title: "summarize @notes/a.txt", cwd: project });
    expect(session.items.map((i) => i.type)).toEqual([
      "message",
      "message",
      "message",
      "tool_call",
      "tool_result",
      "message",
    ]);
    const list = (await (await fetch(`${host.url}/v1/sessions`)).json()) as { sessions: { id: string }[] };
    expect(list.sessions.map((s) => s.id)).toContain(id);
  });

  it("asks permission questions as stream events, answered by POST .../permissions/{requestId}", async () => {
    const { project, env } = await world();
    const server = await model([
      {
        type: "reply",
        toolCalls: [
          { id: "call_w", name: "write_file", arguments: { path: "out.txt", content: "written\n" } },
        ],
      },
      { type: "reply", text: "Wrote it." },
    ]);
    const host = await serve(["--store", await pg.createDatabase()], env, project);
    const { id } = (await (
      await post(`${host.url}/v1/sessions`, { model: MODEL, baseUrl: server.baseURL })
    ).json()) as { id: string };
    const run = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "write out.txt" });
    const seen: Record<string, unknown>[] = [];
    for await (const { data } of sseEvents(run)) {
      seen.push(data);
      if (data.type === "permission_request") {
        expect(data).toMatchObject({ request_id: "call_w", tool: "write_file", subject: "out.txt" });
        const wrong = await post(`${host.url}/v1/sessions/${id}/permissions/call_w`, { decision: "maybe" });
        expect(wrong.status).toBe(400);
        const unknown = await post(`${host.url}/v1/sessions/${id}/permissions/nope`, { decision: "allow" });
        expect(unknown.status).toBe(404);
        const answer = await post(`${host.url}/v1/sessions/${id}/permissions/call_w`, { decision: "allow" });
        expect(answer.status).toBe(200);
      }
    }
    expect(seen.map((e) => e.type)).toContain("permission_request");
    expect(seen.find((e) => e.type === "permission")).toMatchObject({
      tool: "write_file",
      action: "allow",
      by: "user",
    });
    expect(seen.at(-1)).toMatchObject({ type: "result", status: "completed", text: "Wrote it." });
    expect(await readFile(path.join(project, "out.txt"), "utf8")).toBe("written\n");
  });

  it("answers bad input with 400 and the zod issue, unknown sessions with 404", async () => {
    const { project, env } = await world();
    const host = await serve(["--store", await pg.createDatabase()], env, project);
    const notJson = await post(`${host.url}/v1/sessions`, "{oops");
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ error: { code: "invalid_body" } });
    const badModel = await post(`${host.url}/v1/sessions`, { model: 42 });
    expect(badModel.status).toBe(400);
    const body = (await badModel.json()) as { error: { message: string; issues: { path: string[] }[] } };
    expect(body.error.message).toMatch(/^model: /);
    expect(body.error.issues[0]?.path).toEqual(["model"]);
    const extra = await post(`${host.url}/v1/sessions`, { model: MODEL, colour: "red" });
    expect(extra.status).toBe(400);
    const outside = await post(`${host.url}/v1/sessions`, {
      cwd: "/etc",
      model: MODEL,
      baseUrl: "http://127.0.0.1:9/v1",
    });
    expect(outside.status).toBe(400);
    expect(((await outside.json()) as { error: { message: string } }).error.message).toContain(
      "outside the server's root",
    );
    const unknownModel = await post(`${host.url}/v1/sessions`, { model: "anthropic/claude-haiku-4-5" });
    expect(unknownModel.status).toBe(400);
    expect(((await unknownModel.json()) as { error: { code: string; message: string } }).error).toMatchObject(
      {
        code: "invalid_session",
        message: expect.stringContaining("ANTHROPIC_API_KEY"),
      },
    );
    for (const [method, route] of [
      ["GET", "/v1/sessions/0190a0a0-0000-7000-8000-000000000000"],
      ["POST", "/v1/sessions/0190a0a0-0000-7000-8000-000000000000/cancel"],
      ["GET", "/v1/sessions/..%2F..%2Fetc"],
      ["GET", "/v1/nothing"],
    ] as const) {
      const res = await fetch(`${host.url}${route}`, { method });
      expect(res.status, route).toBe(404);
    }
    const run404 = await post(`${host.url}/v1/sessions/0190a0a0-0000-7000-8000-000000000000/runs`, {
      prompt: "hi",
    });
    expect(run404.status).toBe(404);
    // The client is told the id it sent, not where or how the server keeps its sessions.
    expect(await run404.json()).toEqual({
      error: { code: "not_found", message: 'no session "0190a0a0-0000-7000-8000-000000000000"' },
    });
    // A model the config cannot take is named as the body names it, not as the CLI's flag.
    const noProvider = await post(`${host.url}/v1/sessions`, { model: "nosuch/model-1" });
    expect(noProvider.status).toBe(400);
    expect(((await noProvider.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "invalid_session",
      message: expect.stringMatching(/^model: expected a provider declared in `providers`/),
    });
    const { id } = (await (
      await post(`${host.url}/v1/sessions`, { model: MODEL, baseUrl: "http://127.0.0.1:9/v1" })
    ).json()) as {
      id: string;
    };
    const empty = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "   " });
    expect(empty.status).toBe(400);
    const limit = await fetch(`${host.url}/v1/sessions?limit=zero`);
    expect(limit.status).toBe(400);
    const method = await fetch(`${host.url}/v1/sessions/${id}`, { method: "DELETE" });
    expect(method.status).toBe(405);
  });

  it("publishes an OpenAPI document generated from the zod schemas", async () => {
    const { project, env } = await world();
    const host = await serve(["--store", await pg.createDatabase()], env, project);
    const doc = (await (await fetch(`${host.url}/v1/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, unknown>;
      components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/v1/sessions",
        "/v1/sessions/{id}",
        "/v1/sessions/{id}/runs",
        "/v1/sessions/{id}/cancel",
      ]),
    );
    expect(Object.keys(doc.components.schemas.CreateSessionBody?.properties ?? {})).toEqual([
      "cwd",
      "model",
      "baseUrl",
    ]);
    expect(doc.components.schemas.RunBody?.required).toEqual(["prompt"]);
  });

  it("two hosts on one database: a run leased elsewhere gets 409 naming the holder", async () => {
    const { project, env } = await world();
    const server = await model([{ type: "silence" }]);
    const url = await pg.createDatabase();
    const hostA = await serve(["--store", url], env, project);
    const hostB = await serve(["--store", url], env, project);
    const { id } = (await (
      await post(`${hostA.url}/v1/sessions`, { model: MODEL, baseUrl: server.baseURL })
    ).json()) as {
      id: string;
    };
    const run = await post(`${hostA.url}/v1/sessions/${id}/runs`, { prompt: "go" });
    const events = sseEvents(run);
    await events.next(); // the session event: host A holds the lease, waiting on the model
    const pidA = String(hostA.child.pid);
    const busy = await post(`${hostB.url}/v1/sessions/${id}/runs`, { prompt: "me too" });
    expect(busy.status).toBe(409);
    const error = ((await busy.json()) as { error: { code: string; holder: string; message: string } }).error;
    expect(error.code).toBe("session_busy");
    expect(error.holder).toMatch(new RegExp(`:${pidA}$`));
    expect(error.message).toContain(error.holder);
    const sameHost = await post(`${hostA.url}/v1/sessions/${id}/runs`, { prompt: "again" });
    expect(sameHost.status).toBe(409);
    const view = (await (await fetch(`${hostB.url}/v1/sessions/${id}`)).json()) as { runningOn: string };
    expect(view.runningOn).toBe(error.holder);
    const cancelElsewhere = await post(`${hostB.url}/v1/sessions/${id}/cancel`, {});
    expect(cancelElsewhere.status).toBe(409);
    const cancel = await post(`${hostA.url}/v1/sessions/${id}/cancel`, {});
    expect(cancel.status).toBe(202);
    const rest: Record<string, unknown>[] = [];
    for await (const { data } of { [Symbol.asyncIterator]: () => events }) rest.push(data);
    expect(rest.at(-1)).toMatchObject({ type: "result", status: "cancelled" });
    // host A keeps the session open for its next run: not running, but still A's
    const notRunning = await post(`${hostA.url}/v1/sessions/${id}/cancel`, {});
    expect(notRunning.status).toBe(409);
    expect(((await notRunning.json()) as { error: { code: string } }).error.code).toBe("not_running");
    const kept = await post(`${hostB.url}/v1/sessions/${id}/runs`, { prompt: "my turn" });
    expect(kept.status).toBe(409);
    const keptError = ((await kept.json()) as { error: { holder: string; message: string } }).error;
    expect(keptError.holder).toBe(error.holder);
    expect(keptError.message).toContain(`is open on ${error.holder}`);
  });

  it("a database lost mid-run fails that run with a clear event; the host stays up", async () => {
    const { project, env } = await world();
    const server = await model([
      {
        type: "reply",
        toolCalls: [{ id: "call_w", name: "write_file", arguments: { path: "x.txt", content: "x" } }],
      },
      { type: "reply", text: "done" },
    ]);
    // the default 30 s lease: the run after the outage must not wait for it
    const host = await serve(["--store", await pg.createDatabase()], env, project);
    const { id } = (await (
      await post(`${host.url}/v1/sessions`, { model: MODEL, baseUrl: server.baseURL })
    ).json()) as { id: string };
    const run = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "write x.txt" });
    const seen: Record<string, unknown>[] = [];
    try {
      for await (const { data } of sseEvents(run)) {
        seen.push(data);
        if (data.type === "permission_request") {
          await pg.kill();
          await post(`${host.url}/v1/sessions/${id}/permissions/call_w`, { decision: "allow" });
        }
      }
      expect(seen.at(-1)).toMatchObject({
        type: "result",
        status: "failed",
        error: { code: "store_unavailable", message: expect.stringContaining("session store failed") },
      });
      expect(seen.some((e) => e.type === "alert" && e.level === "error" && e.source === "session_log")).toBe(
        true,
      );
      const down = await fetch(`${host.url}/v1/sessions`);
      expect(down.status).toBe(503);
    } finally {
      await pg.restart();
    }
    expect((await fetch(`${host.url}/v1/sessions`)).status).toBe(200);
    expect(host.child.exitCode).toBeNull();
    // The lease this host could not release while the database was down does not lock it out.
    const next = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "try again" });
    expect(next.status).toBe(200);
    const after: Record<string, unknown>[] = [];
    for await (const { data } of sseEvents(next)) after.push(data);
    expect(after.at(-1)).toMatchObject({ type: "result" });
  });
});

describe("yoi serve start-up", () => {
  it("an unreachable database is one clear line and exit 1", async () => {
    const { home } = await tempWorld();
    const result = await runYoi(
      ["serve", "--port", "0", "--store", "postgres://yoi:pw-secret@127.0.0.1:1/db"],
      { env: cleanEnv(home) },
    );
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^yoi: cannot reach the PostgreSQL database 127\.0\.0\.1:1\/db: .*ECONNREFUSED/);
    expect(result.stderr).not.toContain("pw-secret");
  });

  it("bad flags and settings are usage errors (exit 2) naming what to fix", async () => {
    const { home } = await tempWorld();
    const cases: [string[], Record<string, string>, RegExp][] = [
      [["serve", "--port", "http"], {}, /--port must be a port number/],
      [["serve", "--port", "70000"], {}, /--port must be a port number/],
      [["serve", "now"], {}, /unexpected argument "now"/],
      [["serve", "--all"], {}, /--all does not apply to yoi serve/],
      [
        ["serve", "--port", "0", "--store", "mysql://x@y/z"],
        {},
        /--store must be a postgres:\/\/ URL or a directory; got a mysql:\/\/ URL/,
      ],
      [["serve", "--port", "0"], { YOI_SERVE_LEASE_MS: "soon" }, /YOI_SERVE_LEASE_MS must be/],
      [["serve", "--port", "0"], { YOI_SERVE_IDLE_MS: "-5" }, /YOI_SERVE_IDLE_MS must be a whole number/],
      [["serve", "--port", "0"], { YOI_SERVE_IDLE_MS: "10m" }, /YOI_SERVE_IDLE_MS must be a whole number/],
    ];
    for (const [args, extra, message] of cases) {
      const result = await runYoi(args, { env: cleanEnv(home, extra) });
      expect(result.stderr, args.join(" ")).toMatch(message);
      expect(result.code, args.join(" ")).toBe(2);
    }
  });

  it("refuses to listen beyond loopback without YOI_SERVE_TOKEN, and checks the token when set", async () => {
    const { home, project } = await tempWorld();
    const refused = await runYoi(["serve", "--host", "0.0.0.0", "--port", "0"], { env: cleanEnv(home) });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("YOI_SERVE_TOKEN");
    const host = await serve(["--host", "0.0.0.0"], cleanEnv(home, { YOI_SERVE_TOKEN: "tok-123" }), project);
    const port = new URL(host.url).port;
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/v1/sessions`)).status).toBe(401);
    expect((await fetch(`${base}/v1/sessions`, { headers: { authorization: "Bearer nope" } })).status).toBe(
      401,
    );
    expect(
      (await fetch(`${base}/v1/sessions`, { headers: { authorization: "Bearer tok-123" } })).status,
    ).toBe(200);
    expect((await fetch(`${base}/v1/openapi.json`)).status).toBe(200);
  });

  it("keeps sessions in the local files without a store URL", async () => {
    const { home, project, env } = await world();
    const server = await model(READ_SCRIPT);
    const host = await serve([], env, project);
    expect(host.stderr()).toContain(path.join(home, ".yoi"));
    const { id } = (await (
      await post(`${host.url}/v1/sessions`, { model: MODEL, baseUrl: server.baseURL })
    ).json()) as { id: string };
    const events = await collect(
      await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "summarize @notes/a.txt" }),
    );
    expect(events.at(-1)?.data).toMatchObject({ type: "result", status: "completed" });
    const log = await readFile(path.join(home, ".yoi", "sessions", `${id}.jsonl`), "utf8");
    expect(log.split("\n").filter(Boolean).length).toBeGreaterThan(5);
  });
});
