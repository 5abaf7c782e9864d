/**
 * `yoi serve` keeps a session open between runs on the host that ran it:
 * the next run there continues the same pod (a background command started
 * by one run is still running for the next, which reads its output), an
 * idle session closes after YOI_SERVE_IDLE_MS and another host takes it
 * over with every record, a SIGKILLed holder's session goes to another host
 * once its lease expires, and a shutdown releases what the host held.
 */
import { mkdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import type { TestPostgres } from "@yoi/worker-persistence/postgres/testing";
import { describe, expect, it } from "vitest";
import { cleanEnv, tempWorld } from "./helpers.ts";
import { serveFixture, withPostgres } from "./serve-fixture.ts";
import { post, type ServeProcess, sseEvents, startServe } from "./serve-helpers.ts";

const MODEL = "openai-chat/gpt-4.1-mini";

const fx = serveFixture({ end: "stop" });

interface Message {
  role: string;
  content: unknown;
}

/**
 * The model, by the conversation's last message: "start" runs a command in
 * the background, "check" reads `bash_1`'s output, "recall" answers with
 * every user prompt it was sent; after a tool result it answers "noted".
 */
async function model(): Promise<ScriptedServer> {
  const server = await startScriptedServer({
    provider: "openai-chat",
    validate: true,
    script: (_index, body): ScriptStep => {
      const messages = (body as { messages: Message[] }).messages;
      const last = messages.at(-1);
      if (last?.role === "tool") return { type: "reply", text: "noted" };
      const text = typeof last?.content === "string" ? last.content : JSON.stringify(last?.content);
      if (text.includes("start"))
        return {
          type: "reply",
          toolCalls: [
            {
              id: `call_${messages.length}`,
              name: "bash",
              arguments: { command: "echo kept-alive-marker; sleep 30", run_in_background: true },
            },
          ],
        };
      if (text.includes("check"))
        return {
          type: "reply",
          toolCalls: [
            {
              id: `call_${messages.length}`,
              name: "bash_output",
              arguments: { id: "bash_1", wait_ms: 5000 },
            },
          ],
        };
      const prompts = messages
        .filter((m) => m.role === "user")
        .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
      return { type: "reply", text: `seen: ${prompts.join(" | ")}` };
    },
  });
  fx.models.push(server);
  return server;
}

/** What the model was sent as the result of its last tool call. */
function lastToolResult(server: ScriptedServer): string {
  const messages = (server.requests.at(-1) as { messages: Message[] }).messages;
  return String(messages.filter((m) => m.role === "tool").at(-1)?.content);
}

async function serve(args: string[], env: Record<string, string>, cwd: string): Promise<ServeProcess> {
  const host = await startServe(args, env, cwd);
  fx.hosts.push(host);
  return host;
}

async function createSession(host: ServeProcess, server: ScriptedServer): Promise<string> {
  const created = await post(`${host.url}/v1/sessions`, { model: MODEL, baseUrl: server.baseURL });
  expect(created.status).toBe(201);
  return ((await created.json()) as { id: string }).id;
}

/** Runs a prompt to its end, allowing every permission question; the stream's events. */
async function run(host: ServeProcess, id: string, prompt: string): Promise<Record<string, unknown>[]> {
  const response = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt });
  expect(response.status, await peekError(response)).toBe(200);
  const events: Record<string, unknown>[] = [];
  for await (const { data } of sseEvents(response)) {
    events.push(data);
    if (data.type === "permission_request") {
      const answer = await post(`${host.url}/v1/sessions/${id}/permissions/${data.request_id}`, {
        decision: "allow",
      });
      expect(answer.status).toBe(200);
    }
  }
  return events;
}

/** The body of an error answer, for a failed expectation's message (the stream itself is left unread). */
async function peekError(response: Response): Promise<string> {
  return response.status === 200 ? "" : await response.clone().text();
}

/** Sends runs until one is accepted (409 while another host holds the session); the 409 errors seen and the events. */
async function runWhenFree(
  host: ServeProcess,
  id: string,
  prompt: string,
): Promise<{ busy: { holder: string; message: string }[]; events: Record<string, unknown>[] }> {
  const busy: { holder: string; message: string }[] = [];
  // bounded, far past the short leases and idle times below even on a loaded machine
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    const response = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt });
    if (response.status === 409) {
      busy.push(((await response.json()) as { error: { holder: string; message: string } }).error);
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    expect(response.status, await peekError(response)).toBe(200);
    const events: Record<string, unknown>[] = [];
    for await (const { data } of sseEvents(response)) events.push(data);
    return { busy, events };
  }
  throw new Error(`session ${id} was still held after 90 s: ${JSON.stringify(busy.at(-1))}`);
}

/** Two hosts on one new database (`onA` only for the first), the model, and a session made on the first. */
async function twoHosts(env: Record<string, string>, onA: Record<string, string> = {}) {
  const { home, project } = await tempWorld();
  const url = await (fx.pg as TestPostgres).createDatabase();
  const server = await model();
  const hostA = await serve(
    ["--store", url],
    cleanEnv(home, { YOI_TRUST_PROJECT: "1", ...env, ...onA }),
    project,
  );
  const hostB = await serve(["--store", url], cleanEnv(home, { YOI_TRUST_PROJECT: "1", ...env }), project);
  return { server, hostA, hostB, id: await createSession(hostA, server) };
}

const stores = [
  { kind: "files", skip: false },
  { kind: "PostgreSQL", skip: !withPostgres },
];

describe.each(stores)("yoi serve keeps a session open between runs ($kind)", ({ kind, skip }) => {
  it.skipIf(skip)("a background command of one run is read by the next run on the same host", async () => {
    const { home, project } = await tempWorld();
    const env = cleanEnv(home, { YOI_TRUST_PROJECT: "1" });
    const server = await model();
    const store = kind === "files" ? `${home}/store` : await (fx.pg as TestPostgres).createDatabase();
    const host = await serve(["--store", store], env, project);
    const id = await createSession(host, server);

    const first = await run(host, id, "start the watcher");
    expect(first.at(-1)).toMatchObject({ type: "result", status: "completed", text: "noted" });
    expect(lastToolResult(server)).toContain("bash_1");

    // A reopened session would have no bash_1: the pod (and its command) lived on between the runs.
    const second = await run(host, id, "check on it");
    expect(second.at(-1)).toMatchObject({ type: "result", status: "completed", text: "noted" });
    expect(lastToolResult(server)).toContain("kept-alive-marker");
    expect(lastToolResult(server)).toMatch(/running/);

    // The view (read from the store) has both runs' records; kept open is not running.
    const view = (await (await fetch(`${host.url}/v1/sessions/${id}`)).json()) as {
      turns: number;
      runningOn?: string;
    };
    expect(view.turns).toBe(4); // two model turns a run
    expect(view.runningOn).toBeUndefined();
  });

  it.skipIf(skip)(
    "a project config edited between runs applies to the next run on the same host",
    async () => {
      const { home, project } = await tempWorld();
      const env = cleanEnv(home, { YOI_TRUST_PROJECT: "1" });
      const server = await model();
      const store = kind === "files" ? `${home}/store` : await (fx.pg as TestPostgres).createDatabase();
      const host = await serve(["--store", store], env, project);
      const id = await createSession(host, server);

      const first = await run(host, id, "start the watcher");
      expect(first.some((e) => e.type === "permission_request")).toBe(true);
      expect(lastToolResult(server)).toContain("bash_1");

      // The project now denies bash: the kept session must not go on with the settings it was opened with.
      await mkdir(path.join(project, ".yoi"), { recursive: true });
      await writeFile(
        path.join(project, ".yoi", "config.jsonc"),
        JSON.stringify({ permissions: { rules: [{ tool: "bash", action: "deny" }] } }),
      );
      const second = await run(host, id, "start another");
      expect(second.at(-1)).toMatchObject({ type: "result", status: "completed" });
      expect(second.some((e) => e.type === "permission_request")).toBe(false);
      expect(lastToolResult(server)).toMatch(/denied|deny/i);
      // the conversation went on: the reopened session has the first run's records
      const view = (await (await fetch(`${host.url}/v1/sessions/${id}`)).json()) as { turns: number };
      expect(view.turns).toBe(4);
    },
  );
});

describe.skipIf(!withPostgres)("yoi serve: another host takes over a session", () => {
  it("after the holder's idle time; the holder answers 409 until then and the taker sees every record", async () => {
    const { server, hostA, hostB, id } = await twoHosts({}, { YOI_SERVE_IDLE_MS: "2000" });
    expect((await run(hostA, id, "start the watcher")).at(-1)).toMatchObject({ status: "completed" });
    expect((await run(hostA, id, "remember apples")).at(-1)).toMatchObject({ status: "completed" });

    const taken = await runWhenFree(hostB, id, "recall everything");
    // held by A while idle: refused, naming A (unless the machine was so slow the idle time passed first)
    for (const busy of taken.busy) {
      expect(busy.holder).toMatch(new RegExp(`:${hostA.child.pid}$`));
      expect(busy.message).toContain(`is open on ${busy.holder}`);
    }
    expect(taken.events.at(-1)).toMatchObject({
      type: "result",
      status: "completed",
      text: "seen: start the watcher | remember apples | recall everything",
    });
    expect(hostA.stderr()).not.toContain("lost the lease");

    // B now holds it; A's own next run is refused naming B, and B's background commands are B's own.
    const refused = await post(`${hostA.url}/v1/sessions/${id}/runs`, { prompt: "mine again" });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { holder: string } }).error.holder).toMatch(
      new RegExp(`:${hostB.child.pid}$`),
    );
    const check = await run(hostB, id, "check on it");
    expect(check.at(-1)).toMatchObject({ status: "completed" });
    expect(lastToolResult(server)).toMatch(/bash_1/);
    expect(lastToolResult(server)).not.toContain("kept-alive-marker");
  }, 180_000);

  it("after a SIGKILL of the idle holder, once its lease expires, with every acknowledged record", async () => {
    const { hostA, hostB, id } = await twoHosts({ YOI_SERVE_LEASE_MS: "2000" });
    let acknowledged = -1;
    try {
      const first = await post(`${hostA.url}/v1/sessions/${id}/runs`, { prompt: "remember pears" });
      for await (const event of sseEvents(first)) if (event.id !== undefined) acknowledged = event.id;
      expect(acknowledged).toBeGreaterThan(0);
    } finally {
      await hostA.kill();
    }
    const taken = await runWhenFree(hostB, id, "recall everything");
    for (const busy of taken.busy) expect(busy.holder).toMatch(new RegExp(`:${hostA.child.pid}$`));
    expect(taken.events.at(-1)).toMatchObject({
      type: "result",
      status: "completed",
      text: "seen: remember pears | recall everything",
    });
    // the taker appended after every record A acknowledged
    const session = taken.events.find((e) => e.type === "session");
    expect(session).toMatchObject({ resumed: true });
    const view = (await (await fetch(`${hostB.url}/v1/sessions/${id}`)).json()) as {
      records: number;
      turns: number;
    };
    expect(view.records).toBeGreaterThan(acknowledged + 1);
    expect(view.turns).toBe(2);
  }, 180_000);

  it("an idle holder stopped past its lease (SIGSTOP, SIGCONT) drops the session and appends nothing", async () => {
    const { hostA, hostB, id } = await twoHosts({ YOI_SERVE_LEASE_MS: "1500" });
    expect((await run(hostA, id, "start the watcher")).at(-1)).toMatchObject({ status: "completed" });
    hostA.child.kill("SIGSTOP");
    let taken: Awaited<ReturnType<typeof runWhenFree>>;
    try {
      taken = await runWhenFree(hostB, id, "recall everything");
    } finally {
      hostA.child.kill("SIGCONT");
    }
    expect(taken.events.at(-1)).toMatchObject({ text: "seen: start the watcher | recall everything" });
    const records = async () =>
      ((await (await fetch(`${hostB.url}/v1/sessions/${id}`)).json()) as { records: number }).records;
    const before = await records();
    // A finds its lease gone (its heartbeat, or its next run's first append being refused) and lets go.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (hostA.stderr().includes(`lost the lease on session ${id}`)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(hostA.stderr()).toContain(`lost the lease on session ${id}`);
    const answer = await post(`${hostA.url}/v1/sessions/${id}/runs`, { prompt: "mine again" });
    expect(answer.status).toBe(409);
    expect(((await answer.json()) as { error: { holder: string } }).error.holder).toMatch(
      new RegExp(`:${hostB.child.pid}$`),
    );
    expect(await records()).toBe(before);
    // B goes on with the session
    expect((await run(hostB, id, "recall again")).at(-1)).toMatchObject({
      text: "seen: start the watcher | recall everything | recall again",
    });
  }, 180_000);

  it("a shutdown closes the sessions a host kept open: another host continues at once", async () => {
    // a lease far longer than the test: only a release lets B in
    const { hostA, hostB, id } = await twoHosts({ YOI_SERVE_LEASE_MS: "600000" });
    expect((await run(hostA, id, "remember plums")).at(-1)).toMatchObject({ status: "completed" });
    const busy = await post(`${hostB.url}/v1/sessions/${id}/runs`, { prompt: "too soon" });
    expect(busy.status).toBe(409);
    await busy.body?.cancel();
    expect(await hostA.stop()).toBe(0);
    const events = await run(hostB, id, "recall everything");
    expect(events.at(-1)).toMatchObject({ text: "seen: remember plums | recall everything" });
  }, 120_000);

  it("YOI_SERVE_IDLE_MS=0 closes a session after each run: any host takes the next one at once", async () => {
    const { server, hostA, hostB, id } = await twoHosts({
      YOI_SERVE_IDLE_MS: "0",
      YOI_SERVE_LEASE_MS: "600000",
    });
    expect((await run(hostA, id, "start the watcher")).at(-1)).toMatchObject({ status: "completed" });
    const check = await run(hostB, id, "check on it");
    expect(check.at(-1)).toMatchObject({ status: "completed" });
    // closed after its run: the command was stopped with it, and B's pod never had it
    expect(lastToolResult(server)).not.toContain("kept-alive-marker");
    const back = await run(hostA, id, "recall everything");
    expect(back.at(-1)).toMatchObject({
      text: "seen: start the watcher | check on it | recall everything",
    });
  }, 120_000);
});
