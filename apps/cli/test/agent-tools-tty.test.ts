/**
 * The todo checklist and a subagent's group in a real terminal (tmux): the
 * checklist is redrawn in place while the run goes and left once in the
 * scrollback; the child's steps collapse into one summary line.
 */
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { tempWorld, yoiArgv } from "./helpers.ts";
import { TmuxSession } from "./tmux.ts";

const sessions: TmuxSession[] = [];
const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  for (const s of servers.splice(0)) await s.close();
});

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
const isChild = (body: unknown) =>
  JSON.stringify((body as { system?: unknown }).system ?? "").includes("subagent");
const turns = (body: unknown) =>
  (body as { messages: { role: string }[] }).messages.filter((m) => m.role === "assistant").length;

describe.skipIf(!TmuxSession.available())("agent tools in a real terminal (tmux)", () => {
  it("the todo checklist updates in place; a subagent collapses to a summary", async () => {
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
        const todos = (first: string, second: string) => ({
          type: "reply" as const,
          toolCalls: [
            {
              id: `toolu_todo_${first}`,
              name: "todo_write",
              arguments: {
                todos: [
                  { content: "Read a.txt", status: first },
                  { content: "Answer", status: second },
                ],
              },
            },
          ],
        });
        switch (turns(body)) {
          case 0:
            return todos("in_progress", "pending");
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
          case 2:
            return todos("completed", "completed");
          default:
            return { type: "reply", text: "It says hi." };
        }
      },
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "a.txt": "hi\n" });
    const env = [
      `HOME=${quote(home)}`,
      `PATH=${quote(process.env.PATH ?? "/usr/bin:/bin")}`,
      "TERM=xterm-256color",
      "LANG=C.UTF-8",
      "ANTHROPIC_API_KEY=test-key",
      `ANTHROPIC_BASE_URL=${quote(server.baseURL)}`,
    ].join(" ");
    const yoi = [...yoiArgv(), "-m", "anthropic/claude-haiku-4-5"].map(quote).join(" ");
    const tty = TmuxSession.start(`cd ${quote(project)} && env -i ${env} ${yoi}; sleep 30`);
    sessions.push(tty);
    await tty.waitFor(/^›\s*$/m);
    tty.type("what does a.txt say?");
    tty.keys("Enter");
    const screen = await tty.waitFor("─ 4 calls");
    expect(screen).toContain("It says hi.");
    // Drawn in place: the first list (0/2) was replaced, and the last one is printed once.
    expect(screen).not.toContain("☰ todos 0/2");
    expect(screen.match(/☰ todos 2\/2/g)).toHaveLength(1);
    expect(screen).toMatch(/✔ Read a\.txt\n\s+✔ Answer/);
    // The subagent: its task line, then one summary line instead of its steps.
    expect(screen).toMatch(/✓ task read a .*\n\s+└ 1 tool call · 2 model calls/);
    expect(screen).not.toMatch(/│ ✓ read_file a\.txt/);
    expect(server.rejections).toEqual([]);
  }, 120_000);
});
