/**
 * `yoi serve` (file store): a plan approved through the permission answer
 * with the mode to go on in, a plan rejected with a reason, and a running
 * command's output as `tool_output_delta` events on the SSE stream.
 */
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, tempWorld } from "./helpers.ts";
import { post, type ServeProcess, sseEvents, startServe } from "./serve-helpers.ts";

const hosts: ServeProcess[] = [];
const models: ScriptedServer[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.kill();
  for (const m of models.splice(0)) await m.close();
});

const MODEL = "openai-chat/gpt-4.1-mini";

/** The tool messages of an OpenAI chat request after the last assistant message. */
function toolMessages(body: unknown): string[] {
  const messages = (body as { messages: { role: string; content: unknown }[] }).messages;
  return messages.filter((m) => m.role === "tool").map((m) => String(m.content));
}

describe("plan mode and live bash in yoi serve", () => {
  it("approves a plan in acceptEdits, rejects one with a reason, and streams bash output as tool_output_delta", async () => {
    const { home, project } = await tempWorld({
      ".yoi/config.jsonc": '{ "permissions": { "mode": "plan" } }',
    });
    const env = cleanEnv(home, { YOI_TRUST_PROJECT: "1" });
    const server = await startScriptedServer({
      provider: "openai-chat",
      validate: true,
      script: [
        {
          type: "reply",
          toolCalls: [{ id: "call_p1", name: "exit_plan_mode", arguments: { plan: "1. Guess" } }],
        },
        {
          type: "reply",
          toolCalls: [{ id: "call_p2", name: "exit_plan_mode", arguments: { plan: "1. Build" } }],
        },
        {
          type: "reply",
          toolCalls: [
            { id: "call_b", name: "bash", arguments: { command: "echo step one; sleep 0.3; echo step two" } },
          ],
        },
        { type: "reply", text: "Built." },
      ],
    });
    models.push(server);
    const host = await startServe(["--store", `${home}/store`], env, project);
    hosts.push(host);
    const { id } = (await (
      await post(`${host.url}/v1/sessions`, { model: MODEL, baseUrl: server.baseURL })
    ).json()) as {
      id: string;
    };
    const run = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "plan the build, then build" });
    const seen: Record<string, unknown>[] = [];
    for await (const { data } of sseEvents(run)) {
      seen.push(data);
      if (data.type !== "permission_request") continue;
      const answer = (body: unknown) =>
        post(`${host.url}/v1/sessions/${id}/permissions/${data.request_id}`, body);
      if (data.request_id === "call_p1") {
        expect(data).toMatchObject({ tool: "exit_plan_mode", args: { plan: "1. Guess" } });
        expect((await answer({ decision: "deny", reason: "build first" })).status).toBe(200);
      } else if (data.request_id === "call_p2") {
        const wrong = await answer({ decision: "allow", mode: "bypassPermissions" });
        expect(wrong.status).toBe(400);
        expect((await answer({ decision: "allow", mode: "acceptEdits" })).status).toBe(200);
      } else {
        expect(data).toMatchObject({ tool: "bash" });
        expect((await answer({ decision: "allow" })).status).toBe(200);
      }
    }
    expect(seen.at(-1)).toMatchObject({ type: "result", status: "completed", text: "Built." });
    expect(toolMessages(server.requests[1]).at(-1)).toMatch(
      /^(Error: )?The user rejected the plan and said: build first\n/,
    );
    expect(toolMessages(server.requests[2]).at(-1)).toMatch(
      /^The user approved the plan\. The session is now in acceptEdits mode/,
    );
    const deltas = seen.filter((e) => e.type === "tool_output_delta");
    expect(deltas.map((e) => e.text).join("")).toBe("step one\nstep two\n");
    expect(deltas.every((e) => e.id === "call_b" && e.name === "bash")).toBe(true);
    const end = seen.findIndex((e) => e.type === "tool_end" && e.id === "call_b");
    expect(seen.indexOf(deltas.at(-1)!)).toBeLessThan(end);
  });
});
