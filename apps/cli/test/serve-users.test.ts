/**
 * `yoi serve --token-file`: each user sees, runs, cancels and answers only the
 * sessions they created or were granted; the administrator's YOI_SERVE_TOKEN
 * sees all; tokens never reach the log or the model's tools.
 */
import { readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { startScriptedServer } from "@yoi/llm-client/testing";
import type { TestPostgres } from "@yoi/worker-persistence/postgres/testing";
import { describe, expect, it } from "vitest";
import { cleanEnv, runYoi, tempWorld } from "./helpers.ts";
import { STORES, serveFixture } from "./serve-fixture.ts";
import { sseEvents, startServe } from "./serve-helpers.ts";

const MODEL = "openai-chat/gpt-4.1-mini";
const ADMIN = "admin-token-0123456789abcdef";
const ANN = "ann-secret-0123456789abcdef";
const BOB = "bob-secret-0123456789abcdef";
const CY = "cy-secret-0123456789abcdef0";

const fx = serveFixture();

/** A request as `token`'s holder. */
function call(url: string, token: string | undefined, method: string, body?: unknown): Promise<Response> {
  return fetch(url, {
    method,
    headers: {
      "content-type": "application/json",
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

async function setUp(store: "files" | "postgres") {
  const { home, project } = await tempWorld({ "a.txt": "hello\n" });
  const tokens = path.join(home, "tokens");
  await writeFile(tokens, `# users of this server\nann ${ANN}\n\nbob   ${BOB}\n`, { mode: 0o600 });
  const env = cleanEnv(home, { YOI_TRUST_PROJECT: "1", YOI_SERVE_TOKEN: ADMIN });
  const model = await startScriptedServer({
    provider: "openai-chat",
    script: (index) =>
      index === 0
        ? { type: "reply", toolCalls: [{ id: "call_env", name: "bash", arguments: { command: "env" } }] }
        : { type: "reply", text: "done" },
  });
  fx.models.push(model);
  const storeArgs = store === "postgres" ? ["--store", await (fx.pg as TestPostgres).createDatabase()] : [];
  const host = await startServe(
    [...storeArgs, "--token-file", tokens, "--allow-tool", "bash", "--no-sandbox"],
    env,
    project,
  );
  fx.hosts.push(host);
  const create = async (token: string) => {
    const res = await call(`${host.url}/v1/sessions`, token, "POST", {
      model: MODEL,
      baseUrl: model.baseURL,
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };
  return { home, project, tokens, env, model, host, create };
}

describe.each(STORES)("yoi serve --token-file on %s", (store) => {
  it("a user sees and acts only on their own sessions and those granted to them", async () => {
    const { host, create } = await setUp(store);
    const u = host.url;
    const annSession = await create(ANN);
    const bobSession = await create(BOB);
    const adminSession = await create(ADMIN);

    const ids = async (token: string) =>
      (
        (await (await call(`${u}/v1/sessions`, token, "GET")).json()) as { sessions: { id: string }[] }
      ).sessions
        .map((s) => s.id)
        .sort();
    expect(await ids(ANN)).toEqual([annSession]);
    expect(await ids(BOB)).toEqual([bobSession]);
    expect(await ids(ADMIN)).toEqual([annSession, bobSession, adminSession].sort());

    // bob cannot reach ann's session at all: 404, as for one that does not exist
    for (const [method, route, body] of [
      ["GET", `/v1/sessions/${annSession}`, undefined],
      ["POST", `/v1/sessions/${annSession}/runs`, { prompt: "hi" }],
      ["POST", `/v1/sessions/${annSession}/cancel`, undefined],
      ["POST", `/v1/sessions/${annSession}/permissions/x`, { decision: "allow" }],
      ["POST", `/v1/sessions/${annSession}/members`, { user: "bob" }],
    ] as const) {
      const res = await call(`${u}${route}`, BOB, method, body);
      expect(res.status, `${method} ${route}`).toBe(404);
    }
    for (const token of [undefined, "wrong-token-0123456789abcdef"]) {
      expect((await call(`${u}/v1/sessions`, token, "GET")).status).toBe(401);
    }

    // ann grants it to bob; bob (a member, not the owner) may not grant it further
    const unknown = await call(`${u}/v1/sessions/${annSession}/members`, ANN, "POST", { user: "zed" });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toContain("zed");
    const granted = await call(`${u}/v1/sessions/${annSession}/members`, ANN, "POST", { user: "bob" });
    expect(granted.status).toBe(200);
    expect(await granted.json()).toEqual({ owner: "ann", members: ["bob"] });
    expect(await ids(BOB)).toEqual([annSession, bobSession].sort());
    const further = await call(`${u}/v1/sessions/${annSession}/members`, BOB, "POST", { user: "bob" });
    expect(further.status).toBe(403);
    const view = (await (await call(`${u}/v1/sessions/${annSession}`, BOB, "GET")).json()) as Record<
      string,
      unknown
    >;
    expect(view).toMatchObject({ owner: "ann", members: ["bob"] });

    // bob runs it: the model's tools never see a token
    const run = await call(`${u}/v1/sessions/${annSession}/runs`, BOB, "POST", { prompt: "show the env" });
    expect(run.status).toBe(200);
    let result: Record<string, unknown> | undefined;
    for await (const { data } of sseEvents(run)) if (data.type === "result") result = data;
    expect(result).toMatchObject({ status: "completed", text: "done" });
    const log = host.stderr();
    for (const secret of [ADMIN, ANN, BOB]) expect(log).not.toContain(secret);
  });
});

describe("yoi serve --token-file: who ran each turn, tokens kept from tools, reloads", () => {
  it("records the author of each turn, keeps tokens from the model's tools, and reloads on SIGHUP", async () => {
    const { home, host, create, tokens, model } = await setUp("files");
    const id = await create(ANN);
    const run = await call(`${host.url}/v1/sessions/${id}/runs`, ANN, "POST", { prompt: "show the env" });
    for await (const _ of sseEvents(run));
    // what bash printed reached the model without any token
    const sent = JSON.stringify(model.requests[1]);
    expect(sent).toContain("PATH=");
    for (const secret of [ADMIN, ANN, BOB]) expect(sent).not.toContain(secret);
    const records = (await readFile(path.join(home, ".yoi", "sessions", `${id}.jsonl`), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.find((r) => r.type === "user_input")).toMatchObject({ author: "ann" });

    expect((await call(`${host.url}/v1/sessions`, CY, "GET")).status).toBe(401);
    await writeFile(tokens, `ann ${ANN}\nbob ${BOB}\ncy ${CY}\n`);
    host.child.kill("SIGHUP");
    await expect.poll(() => host.stderr(), { timeout: 20_000 }).toContain("reloaded 3 users");
    expect((await call(`${host.url}/v1/sessions`, CY, "GET")).status).toBe(200);
    // a file that no longer parses keeps the users read before, and says why without the secret
    await writeFile(tokens, `ann ${ANN}\ncy short\n`);
    host.child.kill("SIGHUP");
    await expect.poll(() => host.stderr(), { timeout: 20_000 }).toContain("keeping the 3 users read before");
    expect(host.stderr()).toContain(`${tokens}:2: the secret of cy is shorter than 16 characters`);
    expect(host.stderr()).not.toContain("short\n");
    expect((await call(`${host.url}/v1/sessions`, CY, "GET")).status).toBe(200);
  });

  it("a token file that is wrong at start is a usage error naming the line", async () => {
    const { home, project } = await tempWorld({});
    const env = cleanEnv(home);
    const file = path.join(home, "tokens");
    for (const [text, message] of [
      [`ann ${ANN}\nann ${BOB}\n`, `${file}:2: ann is named twice`],
      [`ann ${ANN}\nbob ${ANN}\n`, `${file}:2: the secret of bob is another user's too`],
      ["ann\n", `${file}:1: a line is "<name> <secret>"`],
      [`a/b ${ANN}\n`, `${file}:1: the name must be`],
    ] as const) {
      await writeFile(file, text);
      const result = await runYoi(["serve", "--port", "0", "--token-file", file], { env, cwd: project });
      expect(result.code, text).toBe(2);
      expect(result.stderr, text).toContain(message);
      expect(result.stderr).not.toContain(ANN);
    }
    const missing = await runYoi(["serve", "--port", "0", "--token-file", path.join(home, "none")], {
      env,
      cwd: project,
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("cannot read the token file");
  });
});

describe("yoi serve whose root holds its session store (started in the home directory)", () => {
  it("one user's tools cannot read another's session log, by read_file, grep or sandboxed bash", async () => {
    const { home } = await tempWorld();
    const tokens = path.join(home, "tokens");
    await writeFile(tokens, `ann ${ANN}\nbob ${BOB}\n`, { mode: 0o600 });
    const marker = "bob-private-plan-7d3e1f";
    let bobSession = "";
    const model = await startScriptedServer({
      provider: "openai-chat",
      script: (index) =>
        index === 0
          ? { type: "reply", text: "noted" }
          : index === 1
            ? {
                type: "reply",
                toolCalls: [
                  { id: "r", name: "read_file", arguments: { path: `.yoi/sessions/${bobSession}.jsonl` } },
                  { id: "g", name: "grep", arguments: { pattern: "bob-private", path: "." } },
                  {
                    id: "b",
                    name: "bash",
                    arguments: { command: "cat .yoi/sessions/*; grep -r bob-private ." },
                  },
                ],
              }
            : { type: "reply", text: "done" },
    });
    fx.models.push(model);
    const env = cleanEnv(home, { YOI_SERVE_TOKEN: ADMIN });
    const host = await startServe(["--token-file", tokens, "--allow-tool", "bash"], env, home);
    fx.hosts.push(host);
    const session = async (token: string, prompt: string) => {
      const res = await call(`${host.url}/v1/sessions`, token, "POST", {
        model: MODEL,
        baseUrl: model.baseURL,
      });
      const { id } = (await res.json()) as { id: string };
      for await (const _ of sseEvents(
        await call(`${host.url}/v1/sessions/${id}/runs`, token, "POST", { prompt }),
      ));
      return id;
    };
    bobSession = await session(BOB, `remember ${marker}`);
    // bob's prompt is on disk, in the store the server's root holds
    expect(await readFile(path.join(home, ".yoi", "sessions", `${bobSession}.jsonl`), "utf8")).toContain(
      marker,
    );
    await session(ANN, "look around");
    expect(model.requests).toHaveLength(3);
    const sent = JSON.stringify((model.requests[2] as { messages: unknown }).messages);
    expect(sent).toContain("is inside .yoi/sessions, which is private");
    expect(sent).not.toContain(marker);
  });
});
