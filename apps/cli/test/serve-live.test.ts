/**
 * Live shared sessions (`GET /v1/sessions/{id}/events`), black-box against
 * the shipped bundle, on the files and on PostgreSQL: two users on two
 * hosts of one store; a member attached on the other host sees a run as it
 * happens; `Last-Event-ID` resumes; presence; a queued run runs after the
 * one in progress; a member answers a permission question; a run whose
 * client left goes on while a member watches; a non-member gets 404.
 */
import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { openAIChatWire, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import type { TestPostgres } from "@yoi/worker-persistence/postgres/testing";
import { describe, expect, it } from "vitest";
import { cleanEnv, tempWorld } from "./helpers.ts";
import { STORES, serveFixture } from "./serve-fixture.ts";
import { type ServeEvent, type ServeProcess, sseEvents, startServe } from "./serve-helpers.ts";

const MODEL = "openai-chat/gpt-4.1-mini";
const ANN = "ann-secret-0123456789abcdef";
const BOB = "bob-secret-0123456789abcdef";
const CY = "cy-secret-0123456789abcdef0";

const fx = serveFixture();

function call(
  url: string,
  token: string | undefined,
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(url, {
    method,
    headers: {
      "content-type": "application/json",
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    ...(signal ? { signal } : {}),
  });
}

/** An event stream read in the background: what came so far, and a wait for what must come. */
class Stream {
  readonly events: ServeEvent[] = [];
  readonly done: Promise<void>;
  #wake: (() => void)[] = [];

  constructor(response: Response) {
    this.done = (async () => {
      try {
        for await (const event of sseEvents(response)) {
          this.events.push(event);
          for (const wake of this.#wake.splice(0)) wake();
        }
      } catch {
        // aborted by the test
      }
      for (const wake of this.#wake.splice(0)) wake();
    })();
  }

  /** The first event (after `after` events) that matches; fails after 60 s (a loaded machine). */
  async next(match: (data: Record<string, unknown>) => boolean, after = 0): Promise<ServeEvent> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const found = this.events.slice(after).find((e) => match(e.data));
      if (found) return found;
      if (Date.now() > deadline) {
        throw new Error(`no such event; got ${JSON.stringify(this.events.map((e) => e.data))}`);
      }
      await new Promise<void>((r) => {
        this.#wake.push(r);
        setTimeout(r, 1000).unref();
      });
    }
  }
}

/** Attaches `token`'s user to a session's events on `host`. */
async function attach(
  host: ServeProcess,
  id: string,
  token: string,
  lastEventId?: string,
  signal?: AbortSignal,
): Promise<Stream> {
  const response = await call(
    `${host.url}/v1/sessions/${id}/events`,
    token,
    "GET",
    undefined,
    lastEventId !== undefined ? { "last-event-id": lastEventId } : {},
    signal,
  );
  if (response.status !== 200) throw new Error(`events: ${response.status} ${await response.text()}`);
  return new Stream(response);
}

/** A model step that answers once `release` is called. */
function gated(text: string) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const lines = openAIChatWire.response(text, [], { chunkSize: 8 });
  const step: ScriptStep = {
    type: "generate",
    async *lines() {
      await gate;
      yield* lines;
    },
  };
  return { step, release };
}

/** Two hosts on one store (files: one data directory; PostgreSQL: one database), ann, bob and cy as users. */
async function setUp(
  store: "files" | "postgres",
  script: (index: number) => ScriptStep,
  flags: string[] = [],
) {
  const { home, project } = await tempWorld({ "a.txt": "hello\n" });
  const tokens = path.join(home, "tokens");
  await writeFile(tokens, `ann ${ANN}\nbob ${BOB}\ncy ${CY}\n`, { mode: 0o600 });
  const env = cleanEnv(home, { YOI_TRUST_PROJECT: "1" });
  const model = await startScriptedServer({ provider: "openai-chat", script, validate: true });
  fx.models.push(model);
  const where =
    store === "postgres" ? await (fx.pg as TestPostgres).createDatabase() : path.join(home, "store");
  const start = async () => {
    const host = await startServe(
      ["--store", where, "--token-file", tokens, "--no-sandbox", ...flags],
      env,
      project,
    );
    fx.hosts.push(host);
    return host;
  };
  const [a, b] = [await start(), await start()];
  const created = await call(`${a.url}/v1/sessions`, ANN, "POST", { model: MODEL, baseUrl: model.baseURL });
  expect(created.status).toBe(201);
  const id = ((await created.json()) as { id: string }).id;
  expect((await call(`${a.url}/v1/sessions/${id}/members`, ANN, "POST", { user: "bob" })).status).toBe(200);
  return { a, b, id, model };
}

const result = (d: Record<string, unknown>) => d.type === "result";

describe.each(STORES)("yoi serve live sessions on %s", (store) => {
  it("a member attached on the other host sees a run as it happens, and resumes with Last-Event-ID", async () => {
    const answer = gated("all done");
    const { a, b, id } = await setUp(
      store,
      (index) =>
        index === 0
          ? {
              type: "reply",
              toolCalls: [{ id: "call_1", name: "bash", arguments: { command: "echo from-bash" } }],
            }
          : answer.step,
      ["--allow-tool", "bash"],
    );
    // not a member, no token, a malformed place: refused before any stream
    expect((await call(`${b.url}/v1/sessions/${id}/events`, CY, "GET")).status).toBe(404);
    expect((await call(`${b.url}/v1/sessions/${id}/events`, undefined, "GET")).status).toBe(401);
    const bad = await call(`${b.url}/v1/sessions/${id}/events`, BOB, "GET", undefined, {
      "last-event-id": "x1",
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/Last-Event-ID/);

    const bob = await attach(b, id, BOB);
    await bob.next((d) => d.type === "presence" && (d.users as string[]).includes("bob"));

    const run = new Stream(await call(`${a.url}/v1/sessions/${id}/runs`, ANN, "POST", { prompt: "list it" }));
    // while the model is held back, bob on the other host has seen the prompt and the tool's run
    const prompt = await bob.next((d) => d.type === "prompt");
    expect(prompt.data).toMatchObject({ text: "list it", author: "ann" });
    await bob.next((d) => d.type === "tool_start" && d.name === "bash");
    const toolEnd = await bob.next((d) => d.type === "tool_end");
    expect(String(toolEnd.data.preview)).toContain("from-bash");
    expect(run.events.some((e) => result(e.data))).toBe(false);
    answer.release();
    await bob.next((d) => d.type === "text" && String(d.text).includes("all done"));
    await run.done;
    expect(run.events.find((e) => result(e.data))?.data).toMatchObject({
      status: "completed",
      text: "all done",
    });
    // on PostgreSQL the running host also signals what the log does not keep: the result
    if (store === "postgres") expect((await bob.next(result)).data).toMatchObject({ status: "completed" });

    // ids only grow
    const ids = bob.events.map((e) => e.rawId).filter((x): x is string => x !== undefined);
    const order = ids.map((x) => x.split(".").map(Number) as [number, number?]);
    for (let i = 1; i < order.length; i++) {
      const [s0, n0 = 0] = order[i - 1] as [number, number?];
      const [s1, n1 = 0] = order[i] as [number, number?];
      expect(s1 > s0 || (s1 === s0 && n1 > n0), `${ids[i - 1]} then ${ids[i]}`).toBe(true);
    }

    // resumed after the prompt (on either host): every stored event after it, none before
    for (const host of [a, b]) {
      const again = await attach(host, id, BOB, prompt.rawId);
      await again.next((d) => d.type === "text" && String(d.text).includes("all done"));
      const types = again.events.map((e) => e.data.type);
      expect(types).not.toContain("prompt");
      expect(types).toEqual(expect.arrayContaining(["tool_start", "tool_end", "text"]));
    }
  }, 180_000);

  it("a client of the running host resumes mid-run without losing a stored record", async () => {
    const { a, id } = await setUp(store, (index) =>
      index === 0
        ? {
            type: "reply",
            toolCalls: [
              { id: "call_a", name: "bash", arguments: { command: "echo first" } },
              { id: "call_b", name: "bash", arguments: { command: "echo second" } },
            ],
          }
        : { type: "reply", text: "both ran" },
    );
    const leave = new AbortController();
    const watcher = await attach(a, id, ANN, undefined, leave.signal);
    await watcher.next((d) => d.type === "presence");
    const run = new Stream(
      await call(`${a.url}/v1/sessions/${id}/runs`, ANN, "POST", { prompt: "two calls" }),
    );
    // both calls are stored before the first question is asked; the client leaves after it
    const first = await watcher.next((d) => d.type === "permission_request");
    leave.abort();
    const allow = (requestId: unknown) =>
      call(`${a.url}/v1/sessions/${id}/permissions/${requestId}`, ANN, "POST", { decision: "allow" });
    expect((await allow(first.data.request_id)).status).toBe(200);
    const second = await run.next(
      (d) => d.type === "permission_request" && d.request_id !== first.data.request_id,
    );
    expect((await allow(second.data.request_id)).status).toBe(200);
    await run.done;
    // back with the id of the last event it had: nothing stored after that is missing
    const again = await attach(a, id, ANN, first.rawId);
    await again.next((d) => d.type === "text" && d.text === "both ran");
    const told = again.events.map((e) => `${e.data.type}:${e.data.id ?? ""}`);
    expect(told).toEqual(
      expect.arrayContaining([
        "tool_start:call_a",
        "tool_start:call_b",
        "tool_end:call_a",
        "tool_end:call_b",
      ]),
    );
  }, 180_000);

  it("says who is attached, to everyone attached (on PostgreSQL, on every host)", async () => {
    const { a, b, id } = await setUp(store, () => ({ type: "reply", text: "hi" }));
    const bob = await attach(b, id, BOB);
    await bob.next((d) => d.type === "presence" && d.joined === "bob");
    const leave = new AbortController();
    // files share no presence between hosts: ann attaches where bob is
    const annHost = store === "postgres" ? a : b;
    const ann = await attach(annHost, id, ANN, undefined, leave.signal);
    const both = (d: Record<string, unknown>) =>
      d.type === "presence" && (d.users as string[]).join() === "ann,bob";
    const seen = await bob.next(both);
    if (store === "files") expect(seen.data.joined).toBe("ann");
    await ann.next(both);
    leave.abort();
    const after = bob.events.indexOf(seen);
    const left = await bob.next(
      (d) => d.type === "presence" && (d.users as string[]).join() === "bob",
      after + 1,
    );
    if (store === "files") expect(left.data.left).toBe("ann");
    // no token ever appears in what members are shown
    expect(JSON.stringify(bob.events)).not.toMatch(/secret-0123/);
  }, 120_000);

  it("queues a member's message behind the run in progress and runs it next", async () => {
    const first = gated("first answer");
    const { a, id, model } = await setUp(store, (index) =>
      index === 0 ? first.step : { type: "reply", text: "second answer" },
    );
    const watcher = await attach(a, id, ANN);
    const one = new Stream(await call(`${a.url}/v1/sessions/${id}/runs`, ANN, "POST", { prompt: "one" }));
    await expect.poll(() => model.requests.length, { timeout: 60_000 }).toBe(1);
    // without asking to queue: refused as before
    const busy = await call(`${a.url}/v1/sessions/${id}/runs`, BOB, "POST", { prompt: "two" });
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "session_busy",
      message: expect.stringContaining('"queue": true'),
    });
    const two = new Stream(
      await call(`${a.url}/v1/sessions/${id}/runs`, BOB, "POST", { prompt: "two", queue: true }),
    );
    const queued = await two.next((d) => d.type === "queued");
    expect(queued.data).toMatchObject({ prompt: "two", author: "bob", position: 1 });
    await watcher.next((d) => d.type === "queued" && d.author === "bob");
    first.release();
    await one.done;
    await two.done;
    expect(one.events.find((e) => result(e.data))?.data).toMatchObject({ text: "first answer" });
    expect(two.events.find((e) => result(e.data))?.data).toMatchObject({
      status: "completed",
      text: "second answer",
    });
    // in order: the second request carried the first run's answer
    expect(JSON.stringify(model.requests[1])).toContain("first answer");
    await watcher.next((d) => d.type === "unqueued" && d.reason === "started");
    await watcher.next((d) => d.type === "prompt" && d.text === "two" && d.author === "bob");
  }, 180_000);

  it("a member answers a permission question shown on the events stream (on PostgreSQL, from the other host)", async () => {
    const { a, b, id } = await setUp(store, (index) =>
      index === 0
        ? {
            type: "reply",
            toolCalls: [{ id: "call_ask", name: "bash", arguments: { command: "echo asked" } }],
          }
        : { type: "reply", text: "ran it" },
    );
    // the file store cannot tell another host of a question: bob watches where it runs
    const bobHost = store === "postgres" ? b : a;
    const bob = await attach(bobHost, id, BOB);
    await bob.next((d) => d.type === "presence");
    const run = new Stream(await call(`${a.url}/v1/sessions/${id}/runs`, ANN, "POST", { prompt: "run it" }));
    const question = await bob.next((d) => d.type === "permission_request");
    expect(question.data).toMatchObject({ tool: "bash" });
    // a member attaching while the question waits is shown it too
    const late = await attach(bobHost, id, ANN);
    const shown = await late.next((d) => d.type === "permission_request");
    expect(shown.data.request_id).toBe(question.data.request_id);
    // cy is not a member: as for a session that does not exist
    const answer = `${bobHost.url}/v1/sessions/${id}/permissions/${question.data.request_id}`;
    expect((await call(answer, CY, "POST", { decision: "allow" })).status).toBe(404);
    const answered = await call(answer, BOB, "POST", { decision: "allow" });
    expect(answered.status).toBe(store === "postgres" ? 202 : 200);
    expect(await answered.json()).toEqual({ status: store === "postgres" ? "forwarded" : "answered" });
    await run.done;
    expect(run.events.find((e) => result(e.data))?.data).toMatchObject({
      status: "completed",
      text: "ran it",
    });
    const end = await bob.next((d) => d.type === "tool_end");
    expect(end.data).toMatchObject({ is_error: false });
  }, 180_000);

  it("a run whose client left goes on while a member is attached", async () => {
    const answer = gated("finished for the watchers");
    const { a, id } = await setUp(store, () => answer.step);
    const bob = await attach(a, id, BOB);
    const leave = new AbortController();
    const response = await call(
      `${a.url}/v1/sessions/${id}/runs`,
      ANN,
      "POST",
      { prompt: "go" },
      {},
      leave.signal,
    );
    const run = new Stream(response);
    await run.next((d) => d.type === "session");
    leave.abort();
    await run.done;
    answer.release();
    const end = await bob.next(result);
    expect(end.data).toMatchObject({ status: "completed", text: "finished for the watchers" });
  }, 180_000);

  it("a run kept for a member is cancelled when the last member leaves", async () => {
    const answer = gated("never sent");
    const { a, id, model } = await setUp(store, (index) =>
      index === 0 ? answer.step : { type: "reply", text: "the next one" },
    );
    const runs = `${a.url}/v1/sessions/${id}/runs`;
    const bobLeaves = new AbortController();
    const bob = await attach(a, id, BOB, undefined, bobLeaves.signal);
    await bob.next((d) => d.type === "presence");
    const annLeaves = new AbortController();
    const run = new Stream(await call(runs, ANN, "POST", { prompt: "go" }, {}, annLeaves.signal));
    await run.next((d) => d.type === "session");
    await expect.poll(() => model.requests.length, { timeout: 60_000 }).toBe(1);
    annLeaves.abort();
    await run.done;
    // kept for bob: the session is still busy
    const busy = await call(runs, ANN, "POST", { prompt: "again" });
    expect(busy.status).toBe(409);
    await busy.body?.cancel();
    bobLeaves.abort();
    // nobody is left to see it: it is cancelled and the session takes the next run
    const deadline = Date.now() + 60_000;
    let next: Stream | undefined;
    while (next === undefined && Date.now() < deadline) {
      const response = await call(runs, ANN, "POST", { prompt: "again" });
      if (response.status === 409) {
        await response.body?.cancel();
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      expect(response.status).toBe(200);
      next = new Stream(response);
    }
    expect(next, "the kept run was not cancelled within 60 s").toBeDefined();
    expect((await (next as Stream).next(result)).data).toMatchObject({
      status: "completed",
      text: "the next one",
    });
    // the model's second request is the new run's (not a retry of the kept one, giving up on its own)
    expect(JSON.stringify(model.requests[1])).toContain("again");
  }, 180_000);
});
