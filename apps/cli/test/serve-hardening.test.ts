/**
 * The failures a fault campaign found in `yoi serve` (issue 36), each
 * checked over HTTP against a running server: runs whose client left,
 * reads outside the server's root, DNS rebinding and cross-site requests,
 * slow clients, bad encodings and out-of-range numbers.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { connect } from "node:net";
import * as path from "node:path";
import { openAIChatWire, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import type { TestPostgres } from "@yoi/worker-persistence/postgres/testing";
import { describe, expect, it } from "vitest";
import { cleanEnv, runYoi, tempWorld } from "./helpers.ts";
import { STORES, serveFixture, withPostgres } from "./serve-fixture.ts";
import { post, type ServeProcess, sseEvents, startServe } from "./serve-helpers.ts";

const MODEL = "openai-chat/gpt-4.1-mini";
/** A base URL nobody listens on: creating a session never calls the model. */
const NO_MODEL = "http://127.0.0.1:9/v1";

const fx = serveFixture();

async function world() {
  const { home, project } = await tempWorld({ "notes/a.txt": "hello\n" });
  return { home, project, env: cleanEnv(home, { YOI_TRUST_PROJECT: "1" }) };
}

async function serve(
  store: "files" | "postgres",
  env: Record<string, string>,
  cwd: string,
  args: string[] = [],
) {
  const storeArgs = store === "postgres" ? ["--store", await (fx.pg as TestPostgres).createDatabase()] : [];
  const host = await startServe([...storeArgs, ...args], env, cwd);
  fx.hosts.push(host);
  return host;
}

async function model(script: ScriptStep[] | ((index: number, body: unknown) => ScriptStep)) {
  const server = await startScriptedServer({ provider: "openai-chat", script, validate: true });
  fx.models.push(server);
  return server;
}

async function createSession(url: string, baseUrl = NO_MODEL): Promise<string> {
  const created = await post(`${url}/v1/sessions`, { model: MODEL, baseUrl });
  expect(created.status).toBe(201);
  return ((await created.json()) as { id: string }).id;
}

interface RawAnswer {
  status: number;
  body: string;
  error?: { code: string; message: string };
}

/** A request with exactly these headers (fetch would not send a foreign Host). */
function raw(
  base: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: options.method ?? "GET",
        path: options.path,
        headers: options.headers ?? {},
        agent: false,
        setHost: options.headers?.host === undefined,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (d: string) => (body += d));
        res.on("end", () => {
          let error: RawAnswer["error"];
          try {
            error = (JSON.parse(body) as { error?: RawAnswer["error"] }).error;
          } catch {
            error = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body, ...(error ? { error } : {}) });
        });
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

/** Whether the session is free: a run there is not refused as busy. Polls up to `ms`. */
async function freeWithin(url: string, id: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    const view = (await (await fetch(`${url}/v1/sessions/${id}`)).json()) as { runningOn?: string };
    if (view.runningOn === undefined) {
      // on the file store runningOn shows this host's runs only; the lock file is the other half
      const cancel = await post(`${url}/v1/sessions/${id}/cancel`, {});
      const code = ((await cancel.json()) as { error?: { code: string } }).error?.code;
      if (code === "not_running") return true;
    }
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.each(STORES)("yoi serve on %s: a run whose client is gone", (store) => {
  it("is cancelled when the client closes the socket before the stream starts", async () => {
    const { project, env } = await world();
    let requests = 0;
    // The model never answers: a run left alone would hold the session for minutes.
    const server = await model(() => {
      requests++;
      return { type: "silence" };
    });
    const host = await serve(store, env, project);
    const id = await createSession(host.url, server.baseURL);
    const { port } = new URL(host.url);
    for (let i = 0; i < 3; i++) {
      const body = JSON.stringify({ prompt: `orphan ${i}` });
      await new Promise<void>((resolve, reject) => {
        const socket = connect(Number(port), "127.0.0.1", () => {
          socket.end(
            `POST /v1/sessions/${id}/runs HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          );
          socket.destroy();
          resolve();
        });
        socket.on("error", reject);
      });
      // the server may still be restoring the session when this looks: it must let go by itself
      expect(await freeWithin(host.url, id, 60_000), `run ${i}`).toBe(true);
    }
    // nothing is left waiting on the model
    const before = requests;
    await new Promise((r) => setTimeout(r, 500));
    expect(requests).toBe(before);
    expect(host.child.exitCode).toBeNull();
  }, 180_000);

  it("is cancelled when the client leaves during the stream, also while a permission question waits", async () => {
    const { project, env } = await world();
    const server = await model((_index, body) => {
      const messages = (body as { messages: { role: string; content: unknown }[] }).messages;
      const prompt = JSON.stringify(messages.filter((m) => m.role === "user").at(-1)?.content ?? "");
      if (prompt.includes("write")) {
        return {
          type: "reply",
          toolCalls: [{ id: "call_w", name: "write_file", arguments: { path: "x.txt", content: "x" } }],
        };
      }
      return { type: "silence" };
    });
    const host = await serve(store, env, project);
    const id = await createSession(host.url, server.baseURL);
    for (const [prompt, leaveAt] of [
      ["wait", "session"],
      ["write x.txt", "permission_request"],
    ] as const) {
      const abort = new AbortController();
      const run = await fetch(`${host.url}/v1/sessions/${id}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt }),
        signal: abort.signal,
      });
      expect(run.status).toBe(200);
      try {
        for await (const { data } of sseEvents(run)) if (data.type === leaveAt) break;
      } finally {
        abort.abort();
      }
      expect(await freeWithin(host.url, id, 60_000), prompt).toBe(true);
    }
    // the next run goes through
    const next = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "write x.txt" });
    expect(next.status).toBe(200);
    await next.body?.cancel();
  }, 180_000);
});

describe.each(STORES)("yoi serve on %s: input checks", (store) => {
  it("answers malformed percent-encodings and out-of-range numbers with 400 and what was wrong", async () => {
    const { project, env } = await world();
    const host = await serve(store, env, project);
    const id = await createSession(host.url);
    for (const [method, route] of [
      ["GET", "/v1/sessions/%ff"],
      ["GET", "/v1/sessions/%C0%AE"],
      ["POST", "/v1/sessions/%ff/runs"],
      ["POST", "/v1/sessions/%E0%A4%A/cancel"],
      ["POST", `/v1/sessions/${id}/permissions/%ff`],
    ] as const) {
      const res = await raw(host.url, {
        method,
        path: route,
        headers: { "content-type": "application/json" },
        ...(method === "POST" ? { body: "{}" } : {}),
      });
      expect(res.status, route).toBe(400);
      expect(res.error?.code, route).toBe("invalid_path");
      expect(res.error?.message, route).toMatch(/percent-encoding that is not UTF-8/);
    }
    for (const limit of [
      "1e20",
      "9223372036854775808",
      "99999999999999999999",
      "1001",
      "0",
      "-1",
      "2.5",
      "",
    ]) {
      const res = await fetch(`${host.url}/v1/sessions?limit=${encodeURIComponent(limit)}`);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(res.status, limit).toBe(400);
      expect(body.error.code, limit).toBe("invalid_query");
      expect(body.error.message, limit).toContain("limit: must be a whole number from 1 to 1000");
    }
    const ok = await fetch(`${host.url}/v1/sessions?limit=1000`);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { sessions: { id: string }[] }).sessions.map((s) => s.id)).toEqual([id]);
    expect(host.stderr()).not.toMatch(/URI malformed|out of range/);
  });

  it("caps bodies at 1 MiB however they are sent, reads any declared type as JSON, answers 405 with Allow", async () => {
    const { project, env } = await world();
    const host = await serve(store, env, project);
    const big = JSON.stringify({ model: MODEL, baseUrl: NO_MODEL, pad: "x".repeat(1024 * 1024) });
    for (const headers of [
      { "content-type": "application/json" } as Record<string, string>,
      { "content-type": "application/json", "transfer-encoding": "chunked" },
    ]) {
      const res = await raw(host.url, { method: "POST", path: "/v1/sessions", headers, body: big });
      expect(res.status, JSON.stringify(headers)).toBe(413);
      expect(res.error?.code).toBe("body_too_large");
    }
    // what `curl -d` sends: a form type, a JSON body
    const form = await raw(host.url, {
      method: "POST",
      path: "/v1/sessions",
      headers: { "content-type": "application/x-www-form-urlencoded", "transfer-encoding": "chunked" },
      body: JSON.stringify({ model: MODEL, baseUrl: NO_MODEL }),
    });
    expect(form.status, form.body).toBe(201);
    const notJson = await raw(host.url, { method: "POST", path: "/v1/sessions", body: "model=x" });
    expect(notJson.status).toBe(400);
    expect(notJson.error).toMatchObject({
      code: "invalid_body",
      message: expect.stringContaining("not JSON"),
    });
    const id = (JSON.parse(form.body) as { id: string }).id;
    const empty = await raw(host.url, { method: "POST", path: `/v1/sessions/${id}/runs`, body: "" });
    expect(empty.status).toBe(400);
    expect(empty.error?.message).toMatch(/^prompt: /);
    const del = await new Promise<{ status: number; allow: string | undefined }>((resolve, reject) => {
      const url = new URL(`${host.url}/v1/sessions/${id}`);
      request({ host: url.hostname, port: url.port, method: "DELETE", path: url.pathname }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, allow: res.headers.allow });
      })
        .on("error", reject)
        .end();
    });
    expect(del).toEqual({ status: 405, allow: "GET" });
  });
});

describe("yoi serve: reads are confined to the server's root", () => {
  it("on the file store, lists and shows only sessions inside the root; a CLI session elsewhere is 404", async () => {
    const { home, project, env } = await world();
    const elsewhere = path.join(path.dirname(project), "elsewhere");
    await mkdir(elsewhere);
    const server = await model(() => ({ type: "reply", text: "hi" }));
    const ids: Record<string, string> = {};
    for (const [name, cwd] of [
      ["outside", elsewhere],
      ["inside", project],
    ] as const) {
      const printed = await runYoi(
        ["-p", "--output", "json", "--model", MODEL, "--base-url", server.baseURL, `secret prompt ${name}`],
        { cwd, env },
      );
      expect(printed.code, printed.stderr).toBe(0);
      ids[name] = (JSON.parse(printed.stdout) as { session_id: string }).session_id;
    }
    const host = await serve("files", env, project);
    expect(host.stderr()).toContain(path.join(home, ".yoi"));
    const listed = (await (await fetch(`${host.url}/v1/sessions`)).json()) as { sessions: { id: string }[] };
    expect(listed.sessions.map((s) => s.id)).toEqual([ids.inside]);
    const limited = (await (await fetch(`${host.url}/v1/sessions?limit=1`)).json()) as {
      sessions: { id: string }[];
    };
    expect(limited.sessions.map((s) => s.id)).toEqual([ids.inside]);
    expect((await fetch(`${host.url}/v1/sessions/${ids.inside}`)).status).toBe(200);
    const view = await fetch(`${host.url}/v1/sessions/${ids.outside}`);
    expect(view.status).toBe(404);
    const text = await view.text();
    expect(text).not.toContain("secret prompt");
    expect(text).not.toContain(elsewhere);
    const run = await post(`${host.url}/v1/sessions/${ids.outside}/runs`, { prompt: "go on" });
    expect(run.status).toBe(404);
    expect((await post(`${host.url}/v1/sessions/${ids.outside}/cancel`, {})).status).toBe(404);
  });

  it.skipIf(!withPostgres)(
    "on PostgreSQL, a host does not list or show sessions of another root",
    async () => {
      const { project, env } = await world();
      const other = path.join(path.dirname(project), "other");
      await mkdir(other);
      const url = await (fx.pg as TestPostgres).createDatabase();
      const hostA = await startServe(["--store", url], env, project);
      fx.hosts.push(hostA);
      const hostB = await startServe(["--store", url], env, other);
      fx.hosts.push(hostB);
      const idA = await createSession(hostA.url);
      const idB = await createSession(hostB.url);
      const list = async (host: ServeProcess) =>
        (
          (await (await fetch(`${host.url}/v1/sessions`)).json()) as { sessions: { id: string }[] }
        ).sessions.map((s) => s.id);
      expect(await list(hostA)).toEqual([idA]);
      expect(await list(hostB)).toEqual([idB]);
      expect((await fetch(`${hostB.url}/v1/sessions/${idA}`)).status).toBe(404);
      expect((await fetch(`${hostA.url}/v1/sessions/${idA}`)).status).toBe(200);
    },
  );
});

describe("yoi serve without a token: only loopback names, only its own origin", () => {
  it("refuses a foreign Host (DNS rebinding) and a foreign Origin (cross-site POST), saying why", async () => {
    const { project, env } = await world();
    const host = await serve("files", env, project);
    const { port } = new URL(host.url);
    const create = (headers: Record<string, string>) =>
      raw(host.url, {
        method: "POST",
        path: "/v1/sessions",
        headers: { "content-type": "text/plain", ...headers },
        body: JSON.stringify({ model: MODEL, baseUrl: NO_MODEL }),
      });

    const rebound = await create({
      host: `attacker.example:${port}`,
      origin: `http://attacker.example:${port}`,
    });
    expect(rebound.status).toBe(403);
    expect(rebound.error?.code).toBe("forbidden_host");
    expect(rebound.error?.message).toContain('"attacker.example:');
    expect(rebound.error?.message).toMatch(/localhost, 127\.0\.0\.1 or \[::1\]/);
    expect(rebound.error?.message).toContain("YOI_SERVE_TOKEN");
    for (const bad of [
      "127.0.0.1.attacker.example",
      "localhost.attacker.example",
      "[::1",
      "evil@localhost",
    ]) {
      expect((await create({ host: bad })).status, bad).toBe(403);
    }
    expect(
      (await raw(host.url, { path: "/v1/openapi.json", headers: { host: "attacker.example" } })).status,
    ).toBe(403);

    for (const origin of [
      "http://attacker.example",
      `http://localhost:${Number(port) + 1}`,
      `https://127.0.0.1:${port}`,
      "null",
    ]) {
      const crossSite = await create({ host: `127.0.0.1:${port}`, origin });
      expect(crossSite.status, origin).toBe(403);
      expect(crossSite.error?.code, origin).toBe("forbidden_origin");
      expect(crossSite.error?.message, origin).toContain(JSON.stringify(origin));
    }
    // nothing of that was created
    const listed = (await (await fetch(`${host.url}/v1/sessions`)).json()) as { sessions: unknown[] };
    expect(listed.sessions).toEqual([]);

    // loopback names with any port, and this server's own origin, pass
    for (const [hostHeader, origin] of [
      [`127.0.0.1:${port}`, undefined],
      [`localhost:${port}`, `http://localhost:${port}`],
      ["localhost", `http://127.0.0.1:${port}`],
      ["[::1]:8080", `http://[::1]:${port}`],
    ] as const) {
      const res = await create({ host: hostHeader, ...(origin ? { origin } : {}) });
      expect(res.status, `${hostHeader} ${origin}`).toBe(201);
    }
  });

  it("with a token, reads it from the Authorization header only, never a cookie", async () => {
    const { project, env } = await world();
    const host = await serve("files", { ...env, YOI_SERVE_TOKEN: "tok-abc" }, project);
    const cookie = await raw(host.url, {
      path: "/v1/sessions",
      headers: { cookie: "token=tok-abc; YOI_SERVE_TOKEN=tok-abc" },
    });
    expect(cookie.status).toBe(401);
    expect(cookie.error?.message).toMatch(/cookies are never read/);
    expect(cookie.error?.message).toContain("Authorization: Bearer");
    const basic = await raw(host.url, {
      path: "/v1/sessions",
      headers: { authorization: "Basic dG9rLWFiYw==" },
    });
    expect(basic.status).toBe(401);
    expect(basic.error?.message).toMatch(/not a bearer token/);
    // a token server may sit behind a proxy under any name
    const proxied = await raw(host.url, {
      path: "/v1/sessions",
      headers: { host: "yoi.example.com", authorization: "Bearer tok-abc" },
    });
    expect(proxied.status).toBe(200);
  });
});

describe("yoi serve: slow clients", () => {
  it("times out a request whose body or headers trickle in, and still streams long runs", async () => {
    const { project, env } = await world();
    const server = await model([
      {
        type: "reply",
        toolCalls: [{ id: "call_w", name: "write_file", arguments: { path: "x.txt", content: "x" } }],
      },
      { type: "reply", text: "done" },
    ]);
    const host = await serve("files", { ...env, YOI_SERVE_REQUEST_TIMEOUT_MS: "1500" }, project);
    const { port } = new URL(host.url);
    const id = await createSession(host.url, server.baseURL);
    const trickle = (head: string, tick: string) =>
      new Promise<{ answer: string; closed: boolean }>((resolve, reject) => {
        let answer = "";
        const socket = connect(Number(port), "127.0.0.1", () => {
          socket.write(head);
          const timer = setInterval(() => socket.write(tick), 200);
          // far past the timeout: the server must close first
          const giveUp = setTimeout(() => {
            clearInterval(timer);
            socket.destroy();
            resolve({ answer, closed: false });
          }, 60_000);
          socket.on("close", () => {
            clearInterval(timer);
            clearTimeout(giveUp);
            resolve({ answer, closed: true });
          });
        });
        socket.setEncoding("utf8").on("data", (d: string) => (answer += d));
        socket.on("error", (error) =>
          (error as { code?: string }).code === "ECONNRESET" ? undefined : reject(error),
        );
      });
    const slowBody = await trickle(
      `POST /v1/sessions/${id}/runs HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"prompt":"`,
      "a",
    );
    expect(slowBody.closed).toBe(true);
    expect(slowBody.answer).toMatch(/^HTTP\/1\.1 408/);
    const slowHeaders = await trickle(
      `GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`,
      "X-Slow: 1\r\n",
    );
    expect(slowHeaders.closed).toBe(true);
    expect(slowHeaders.answer).toMatch(/^HTTP\/1\.1 408/);
    // the timeout covers receiving the request, not the answer: a run longer than it streams to its end
    const run = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "write x.txt" });
    const events: Record<string, unknown>[] = [];
    for await (const { data } of sseEvents(run)) {
      events.push(data);
      if (data.type === "permission_request") {
        await new Promise((r) => setTimeout(r, 2500));
        await post(`${host.url}/v1/sessions/${id}/permissions/call_w`, { decision: "allow" });
      }
    }
    expect(events.at(-1)).toMatchObject({ type: "result", status: "completed", text: "done" });
  }, 180_000);

  it("refuses a request timeout that is not a number of milliseconds", async () => {
    const { home } = await tempWorld();
    const result = await runYoi(["serve", "--port", "0"], {
      env: cleanEnv(home, { YOI_SERVE_REQUEST_TIMEOUT_MS: "soon" }),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/YOI_SERVE_REQUEST_TIMEOUT_MS must be a whole number of milliseconds/);
  });
});

describe.each(STORES)("yoi serve on %s: graceful shutdown", (store) => {
  /** A model answer that stops halfway until `release` is called. */
  function gatedAnswer() {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const lines = openAIChatWire.response("the first half and the second half of the answer", [], {
      chunkSize: 8,
    });
    const step: ScriptStep = {
      type: "generate",
      async *lines() {
        yield* lines.slice(0, 2);
        await gate;
        yield* lines.slice(2);
      },
    };
    return { step, release };
  }

  it("on SIGTERM stops taking runs, lets a running one finish, then exits 0", async () => {
    const { project, env } = await world();
    const answer = gatedAnswer();
    const server = await model([answer.step]);
    const host = await serve(store, env, project);
    const id = await createSession(host.url, server.baseURL);
    const other = await createSession(host.url, server.baseURL);
    const run = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "hi" });
    expect(run.status).toBe(200);
    const events = sseEvents(run);
    // the model has started answering
    await expect.poll(() => server.requests.length, { timeout: 20_000 }).toBe(1);
    // a kept-alive connection is still open: a new run on it is refused with a reason
    const exited = host.stop();
    await expect
      .poll(() => host.stderr(), { timeout: 20_000 })
      .toMatch(/waiting up to 30 s for 1 running run/);
    const refused = await post(`${host.url}/v1/sessions/${other}/runs`, { prompt: "hi" }).catch(
      (error: unknown) => error as Error,
    );
    if (refused instanceof Response) {
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("shutting_down");
    }
    answer.release();
    let result: Record<string, unknown> | undefined;
    for await (const event of events) if (event.data.type === "result") result = event.data;
    expect(result).toMatchObject({
      type: "result",
      status: "completed",
      text: expect.stringContaining("second half"),
    });
    expect(await exited).toBe(0);
  });

  it("a second signal cancels the running run at once; what it stored stays and another host continues", async () => {
    const { project, env } = await world();
    const answer = gatedAnswer();
    const server = await model([answer.step, { type: "reply", text: "continued" }]);
    // both hosts on one store
    const storeArgs = store === "postgres" ? ["--store", await (fx.pg as TestPostgres).createDatabase()] : [];
    const start = async () => {
      const started = await startServe(storeArgs, env, project);
      fx.hosts.push(started);
      return started;
    };
    const host = await start();
    const id = await createSession(host.url, server.baseURL);
    const run = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "first" });
    const events = sseEvents(run);
    await expect.poll(() => server.requests.length, { timeout: 20_000 }).toBe(1);
    const exited = new Promise<number | null>((resolve) => host.child.once("close", (code) => resolve(code)));
    host.child.kill("SIGTERM");
    await expect.poll(() => host.stderr(), { timeout: 20_000 }).toMatch(/signal again to cancel/);
    host.child.kill("SIGTERM");
    let result: Record<string, unknown> | undefined;
    for await (const event of events) if (event.data.type === "result") result = event.data;
    expect(result?.status).toBe("cancelled");
    expect(await exited).toBe(0);
    answer.release();

    const next = await start();
    const again = await post(`${next.url}/v1/sessions/${id}/runs`, { prompt: "second" });
    expect(again.status).toBe(200);
    let final: Record<string, unknown> | undefined;
    for await (const event of sseEvents(again)) if (event.data.type === "result") final = event.data;
    expect(final).toMatchObject({ status: "completed", text: "continued" });
    const view = (await (await fetch(`${next.url}/v1/sessions/${id}`)).json()) as { items: unknown[] };
    expect(JSON.stringify(view.items)).toContain("continued");
  });
});

describe("yoi serve: as safe as the CLI, and as usable", () => {
  /** Runs `prompt` in a new session and collects its events; permission questions are denied. */
  async function runAll(url: string, baseUrl: string, prompt: string, cwd?: string) {
    const created = await post(`${url}/v1/sessions`, { model: MODEL, baseUrl, ...(cwd ? { cwd } : {}) });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const events: Record<string, unknown>[] = [];
    for await (const { data } of sseEvents(await post(`${url}/v1/sessions/${id}/runs`, { prompt }))) {
      events.push(data);
      if (data.type === "permission_request") {
        await post(`${url}/v1/sessions/${id}/permissions/${String(data.request_id)}`, { decision: "deny" });
      }
    }
    return events;
  }

  const writeCall = (id: string): ScriptStep => ({
    type: "reply",
    toolCalls: [{ id, name: "write_file", arguments: { path: `${id}.txt`, content: "x\n" } }],
  });

  it("takes the permission flags: --allow-tool and --deny-tool hold for every session", async () => {
    const { project, env } = await world();
    const server = await model([
      writeCall("w1"),
      { type: "reply", text: "ok" },
      writeCall("w2"),
      { type: "reply", text: "ok" },
    ]);
    const allowing = await serve("files", env, project, ["--allow-tool", "write_file"]);
    const allowed = await runAll(allowing.url, server.baseURL, "write");
    expect(allowed.map((e) => e.type)).not.toContain("permission_request");
    expect(allowed.find((e) => e.type === "permission")).toMatchObject({
      tool: "write_file",
      action: "allow",
    });
    await allowing.kill();
    const denying = await serve("files", env, project, ["--deny-tool", "write_file"]);
    const denied = await runAll(denying.url, server.baseURL, "write");
    expect(denied.find((e) => e.type === "permission")).toMatchObject({ tool: "write_file", action: "deny" });
    await expect(readFile(path.join(project, "w2.txt"), "utf8")).rejects.toThrow();
    const bad = await runYoi(["serve", "--port", "0", "--permission-mode", "sometimes"], {
      env,
      cwd: project,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--permission-mode must be one of");
  });

  it("says when a project's own settings are ignored (event and log, once), and --trust-project applies them", async () => {
    const { home, project } = await world();
    const env = cleanEnv(home);
    await mkdir(path.join(project, ".yoi"), { recursive: true });
    await writeFile(
      path.join(project, ".yoi", "config.jsonc"),
      JSON.stringify({ permissions: { rules: [{ tool: "write_file", action: "allow" }] } }),
    );
    const server = await model((index) =>
      index % 2 === 0 ? writeCall(`t${index}`) : { type: "reply", text: "ok" },
    );
    const untrusted = await serve("files", env, project);
    for (const _ of [1, 2]) {
      const events = await runAll(untrusted.url, server.baseURL, "write");
      expect(events[0]).toMatchObject({ type: "alert", level: "warn", source: "project_trust" });
      expect(String(events[0]?.message)).toContain("--trust-project");
      // the project's own allow rule did not apply: the write was asked (and denied)
      expect(events.map((e) => e.type)).toContain("permission_request");
    }
    expect(untrusted.stderr().match(/not trusted by this server/g)?.length).toBe(1);
    await untrusted.kill();

    const trusting = await serve("files", env, project, ["--trust-project", "."]);
    const events = await runAll(trusting.url, server.baseURL, "write");
    expect(events.map((e) => e.type)).not.toContain("alert");
    expect(events.map((e) => e.type)).not.toContain("permission_request");
    expect(trusting.stderr()).not.toMatch(/not trusted/);
    const missing = await runYoi(["serve", "--port", "0", "--trust-project", "nowhere"], {
      env,
      cwd: project,
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--trust-project nowhere");
  });

  it("--root (repeatable) confines sessions to those directories", async () => {
    const { project, env } = await world();
    const a = path.join(project, "a");
    const b = path.join(path.dirname(project), "b");
    await mkdir(a);
    await mkdir(b);
    const host = await serve("files", env, project, ["--root", a, "--root", b]);
    for (const cwd of [a, b, "."]) {
      const res = await post(`${host.url}/v1/sessions`, { model: MODEL, baseUrl: NO_MODEL, cwd });
      expect(res.status, cwd).toBe(201);
    }
    const outside = await post(`${host.url}/v1/sessions`, { model: MODEL, baseUrl: NO_MODEL, cwd: project });
    expect(outside.status).toBe(400);
    expect(((await outside.json()) as { error: { message: string } }).error.message).toContain(
      `outside the server's roots ${a}, ${b}`,
    );
    const listed = (await (await fetch(`${host.url}/v1/sessions`)).json()) as { sessions: unknown[] };
    expect(listed.sessions).toHaveLength(3);
  });
});
