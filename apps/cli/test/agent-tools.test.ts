/**
 * `yoi -p --output stream-json` with the agent tools: a todo list and a
 * subagent, end to end through the real CLI against the scripted server.
 */
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, jsonLines, runYoi, tempWorld } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const isChild = (body: unknown) =>
  JSON.stringify((body as { system?: unknown }).system ?? "").includes("subagent");
const turns = (body: unknown) =>
  (body as { messages: { role: string }[] }).messages.filter((m) => m.role === "assistant").length;

describe("agent tools in stream-json", () => {
  it("prints the todo list and the subagent's events nested under its task call", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: (_index, body) => {
        if (isChild(body)) {
          return turns(body) === 0
            ? {
                type: "reply",
                toolCalls: [{ id: "toolu_c", name: "read_file", arguments: { path: "a.txt" } }],
              }
            : { type: "reply", text: "a.txt says hi" };
        }
        switch (turns(body)) {
          case 0:
            return {
              type: "reply",
              toolCalls: [
                {
                  id: "toolu_todo",
                  name: "todo_write",
                  arguments: { todos: [{ content: "Read a.txt", status: "in_progress" }] },
                },
              ],
            };
          case 1:
            return {
              type: "reply",
              toolCalls: [
                {
                  id: "toolu_task",
                  name: "task",
                  arguments: { description: "read a", prompt: "Read a.txt" },
                },
              ],
            };
          default:
            return { type: "reply", text: "It says hi." };
        }
      },
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "a.txt": "hi\n" });
    const result = await runYoi(
      ["-p", "--output", "stream-json", "--model", "anthropic/claude-haiku-4-5", "what does a.txt say?"],
      {
        cwd: project,
        env: cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.baseURL }),
      },
    );
    expect(result.code).toBe(0);
    expect(server.rejections).toEqual([]);
    const lines = jsonLines(result.stdout);
    expect(lines).toContainEqual({
      type: "todos",
      todos: [{ content: "Read a.txt", status: "in_progress" }],
    });
    const nested = lines.filter((l) => l.type === "subagent");
    expect(nested.length).toBeGreaterThan(0);
    expect(nested).toContainEqual(
      expect.objectContaining({
        id: "toolu_task",
        description: "read a",
        depth: 1,
        event: expect.objectContaining({ type: "tool_end", name: "read_file", is_error: false }),
      }),
    );
    const taskEnd = lines.find((l) => l.type === "tool_end" && l.id === "toolu_task");
    expect(taskEnd).toMatchObject({ is_error: false });
    expect(String(taskEnd?.preview)).toContain("a.txt says hi");
    expect(lines.at(-1)).toMatchObject({ type: "result", status: "completed", text: "It says hi." });
  }, 60_000);

  it("a damaged @image is a warning with the reason: the prompt goes without it", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [{ type: "reply", text: "I see no image." }],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "shot.png": "not really a png" });
    const result = await runYoi(["-p", "--model", "anthropic/claude-haiku-4-5", "what is in @shot.png ?"], {
      cwd: project,
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.baseURL }),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("warn: @shot.png was not attached: shot.png is not a valid PNG image");
    expect(server.requests).toHaveLength(1);
    expect(JSON.stringify(server.requests[0])).toContain("what is in [unresolved file ref: shot.png] ?");
    expect(server.rejections).toEqual([]);
  }, 60_000);
});
