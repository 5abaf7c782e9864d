import { mkdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient, type Item } from "@yoi/llm-client";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { ConfigSchema } from "@yoi/manifest";
import { loadSession } from "@yoi/worker-persistence";
import { afterEach, describe, expect, it } from "vitest";
import { loadAgents } from "../src/agents/load-agents.ts";
import type { PodEvent } from "../src/events/pod-events.ts";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

const servers: ScriptedServer[] = [];
const pods: Pod[] = [];
afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.close().catch(() => {});
  for (const s of servers.splice(0)) await s.close();
});

interface AnthropicBody {
  system?: string | { text: string }[];
  messages: { role: string; content: string | { type: string; text?: string }[] }[];
  tools?: { name: string }[];
}

const systemOf = (b: AnthropicBody) =>
  typeof b.system === "string" ? b.system : (b.system ?? []).map((p) => p.text).join("");
const firstUserText = (b: AnthropicBody) => {
  const c = b.messages[0]?.content;
  return typeof c === "string" ? c : (c ?? []).map((p) => p.text ?? "").join("");
};
const isChild = (b: AnthropicBody) => systemOf(b).includes("You are a subagent");
/** Requests of one conversation so far (its messages count), to script multi-turn children. */
const turnOf = (b: AnthropicBody) => b.messages.filter((m) => m.role === "assistant").length;

async function setup(
  script: (index: number, body: AnthropicBody) => ScriptStep,
  options: { maxDepth?: number; agentFiles?: Record<string, string> } = {},
) {
  const base = await tempDir();
  const root = path.join(base, "project");
  await mkdir(path.join(root, "src"), { recursive: true });
  await writeFile(path.join(root, "src", "a.ts"), "export const a = 1;\n");
  await writeFile(path.join(root, "src", "b.ts"), "export const b = 2;\n");
  await writeFile(path.join(root, "AGENTS.md"), "Indent with tabs in this project.\n");
  const agentsDir = path.join(root, ".yoi", "agents");
  if (options.agentFiles) {
    await mkdir(agentsDir, { recursive: true });
    for (const [name, text] of Object.entries(options.agentFiles))
      await writeFile(path.join(agentsDir, name), text);
  }
  const s = await startScriptedServer({
    provider: "anthropic",
    validate: true,
    script: (index, body) => script(index, body as AnthropicBody),
  });
  servers.push(s);
  const client = createClient({
    provider: "anthropic",
    model: "claude-haiku-4-5",
    apiKey: "k",
    baseURL: s.baseURL,
    retry: { maxAttempts: 1 },
  });
  const dataDir = path.join(base, "data");
  const pod = await Pod.create({
    cwd: root,
    dataDir,
    fsync: "never",
    client,
    agentDirs: [agentsDir],
    config: ConfigSchema.parse({ task: { maxDepth: options.maxDepth ?? 1 } }),
  });
  pods.push(pod);
  const events: PodEvent[] = [];
  pod.subscribe((e) => events.push(e));
  return { s, pod, events, dataDir, root };
}

const reply = (text: string, usage = { inputTokens: 10, outputTokens: 5 }): ScriptStep => ({
  type: "reply",
  text,
  options: { usage },
});

describe("task (subagents)", () => {
  it("runs two children in parallel with fresh histories and returns their answers, usage rolled up", async () => {
    const { s, pod, events, dataDir } = await setup((_i, body) => {
      if (!isChild(body)) {
        if (turnOf(body) === 0)
          return {
            type: "reply",
            toolCalls: [
              {
                id: "toolu_t1",
                name: "task",
                arguments: { description: "look at a", prompt: "Read src/a.ts" },
              },
              {
                id: "toolu_t2",
                name: "task",
                arguments: { description: "look at b", prompt: "Read src/b.ts" },
              },
            ],
            options: { usage: { inputTokens: 100, outputTokens: 20 } },
          };
        return reply("a is 1 and b is 2", { inputTokens: 200, outputTokens: 10 });
      }
      const file = firstUserText(body).includes("a.ts") ? "src/a.ts" : "src/b.ts";
      if (turnOf(body) === 0)
        return {
          type: "reply",
          toolCalls: [{ id: `toolu_r_${file.at(-4)}`, name: "read_file", arguments: { path: file } }],
          options: { usage: { inputTokens: 30, outputTokens: 3 } },
        };
      return reply(`${file} exports ${file.includes("a") ? "a = 1" : "b = 2"}`, {
        inputTokens: 40,
        outputTokens: 7,
      });
    });
    const result = await pod.run("what do a and b export?");
    expect(result.status).toBe("completed");
    expect(s.rejections).toEqual([]);

    const bodies = s.requests as AnthropicBody[];
    const children = bodies.filter(isChild);
    expect(children).toHaveLength(4);
    for (const child of children) {
      // A fresh history: the prompt is the first message, nothing of the parent's conversation.
      expect(JSON.stringify(child.messages)).not.toContain("what do a and b export?");
      const names = (child.tools ?? []).map((t) => t.name);
      expect(names).toContain("read_file");
      expect(names).not.toContain("task");
      expect(names).not.toContain("todo_write");
    }
    const systems = children.filter((b) => turnOf(b) === 0).map(systemOf);
    expect(systems.some((t) => t.includes("task 1 of 2"))).toBe(true);
    expect(systems.some((t) => t.includes("task 2 of 2"))).toBe(true);

    const results = pod.history.filter(
      (i): i is Extract<Item, { type: "tool_result" }> => i.type === "tool_result",
    );
    expect(results.map((r) => r.output.split("\n")[0])).toEqual([
      "src/a.ts exports a = 1",
      "src/b.ts exports b = 2",
    ]);
    const blobId = /\[blob:([0-9a-f-]{36})\]/.exec(results[0]!.output)?.[1];
    expect(blobId).toBeDefined();
    expect(results[0]!.output).toContain("2 model calls, 1 tool call");

    // Usage: parent 300 in + children 2 × (30 + 40) in.
    expect(result.usage.inputTokens).toBe(300 + 140);
    expect(result.usage.outputTokens).toBe(30 + 20);

    const sub = events.filter((e) => e.type === "subagent");
    expect(new Set(sub.map((e) => e.type === "subagent" && e.callId))).toEqual(
      new Set(["toolu_t1", "toolu_t2"]),
    );
    expect(sub.some((e) => e.type === "subagent" && e.event.type === "tool_call_end")).toBe(true);

    // The transcript: a blob inspect can read, and a session log record.
    const inspect = pod.worker.tools.find((t) => t.name === "inspect")!;
    const shown = await inspect.execute({ blob_id: blobId, selector: "key:items" }, {
      callId: "x",
      batchId: "b",
      callIndex: 0,
      batchSize: 1,
      turnIndex: 0,
      signal: new AbortController().signal,
    } as never);
    expect(JSON.stringify(shown)).toContain("Read src/a.ts");
    await pod.flush();
    const loaded = await loadSession({ dir: dataDir, id: pod.id });
    const records = loaded.records.filter((r) => r.type === "subagent");
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({ status: "completed", turns: 2, model: "anthropic/claude-haiku-4-5" });
    expect(loaded.meta.usage.inputTokens).toBe(440);
  });

  it("a failing child becomes an error result; the parent goes on", async () => {
    const { s, pod } = await setup((_i, body) => {
      if (isChild(body)) return { type: "error", status: 400, message: "child request was malformed" };
      if (turnOf(body) === 0)
        return {
          type: "reply",
          toolCalls: [{ id: "toolu_t", name: "task", arguments: { description: "doomed", prompt: "do it" } }],
        };
      return reply("the subagent failed, sorry");
    });
    const result = await pod.run("go");
    expect(result.status).toBe("completed");
    const r = pod.history.find((i) => i.type === "tool_result");
    expect(r).toMatchObject({ isError: true });
    expect(r?.type === "tool_result" && r.output).toMatch(/Subagent "doomed" failed: .*malformed/);
    expect(s.rejections).toEqual([]);
  });

  it("cancel stops every child", async () => {
    let childrenStarted = 0;
    let resolveStarted: () => void = () => {};
    const bothStarted = new Promise<void>((r) => {
      resolveStarted = r;
    });
    const { pod } = await setup((_i, body) => {
      if (isChild(body)) {
        if (++childrenStarted === 2) resolveStarted();
        return { type: "silence" };
      }
      return {
        type: "reply",
        toolCalls: [
          { id: "toolu_c1", name: "task", arguments: { description: "one", prompt: "wait" } },
          { id: "toolu_c2", name: "task", arguments: { description: "two", prompt: "wait" } },
        ],
      };
    });
    const run = pod.run("start two");
    await bothStarted;
    const started = Date.now();
    pod.cancel();
    const result = await run;
    expect(result.status).toBe("cancelled");
    expect(Date.now() - started).toBeLessThan(10_000);
    const results = pod.history.filter((i) => i.type === "tool_result");
    expect(results).toHaveLength(2);
    for (const r of results) expect(r).toMatchObject({ isError: true });
  });

  it("named agents: tools, prompt and refusal of unknown names; bad files raise an alert", async () => {
    const { s, pod, dataDir, events } = await setup(
      (_i, body) => {
        if (isChild(body)) return reply("reviewed");
        if (turnOf(body) === 0)
          return {
            type: "reply",
            toolCalls: [
              {
                id: "toolu_n1",
                name: "task",
                arguments: { description: "review", prompt: "review src", agent: "reviewer" },
              },
              { id: "toolu_n2", name: "task", arguments: { description: "x", prompt: "y", agent: "nobody" } },
            ],
          };
        return reply("done");
      },
      {
        agentFiles: {
          "reviewer.md":
            "---\ndescription: Reviews code for bugs\ntools: read_file, grep\nmodel: inherit\n---\nYou review code. Be terse.\n",
          "broken.md": "no front matter here\n",
        },
      },
    );
    await pod.run("review please");
    const parent = (s.requests as AnthropicBody[])[0]!;
    const task = (parent.tools ?? []).find((t) => t.name === "task") as { description?: string } | undefined;
    expect(task?.description).toContain("- reviewer: Reviews code for bugs");
    const child = (s.requests as AnthropicBody[]).find(isChild)!;
    expect(systemOf(child)).toContain("You review code. Be terse.");
    // The project's instructions reach children too.
    expect(systemOf(child)).toContain("Indent with tabs in this project.");
    expect((child.tools ?? []).map((t) => t.name).sort()).toEqual(["grep", "inspect", "read_file"]);
    const results = pod.history.filter((i) => i.type === "tool_result");
    expect(results[1]).toMatchObject({ isError: true });
    expect(results[1]?.type === "tool_result" && results[1].output).toContain(
      'Unknown agent "nobody". Defined agents: reviewer',
    );
    // Raised while the pod was created, written to the log once the session began.
    await pod.flush();
    const loaded = await loadSession({ dir: dataDir, id: pod.id });
    const alerts = loaded.records.flatMap((r) => (r.type === "alert" ? [`${r.source}: ${r.message}`] : []));
    expect(alerts.some((m) => m.startsWith("agents: ") && m.includes("broken.md: no front matter"))).toBe(
      true,
    );
    // Said at the first run, so a UI that subscribed after creating the pod sees it.
    const seen = events.flatMap((e) => (e.type === "alert" ? [e.alert.message] : []));
    expect(seen.some((m) => m.includes("broken.md: no front matter"))).toBe(true);
  });

  it("children get `task` only below task.maxDepth", async () => {
    const { s, pod } = await setup(
      (_i, body) => {
        if (isChild(body)) return reply("ok");
        if (turnOf(body) === 0)
          return {
            type: "reply",
            toolCalls: [{ id: "toolu_d", name: "task", arguments: { description: "d", prompt: "p" } }],
          };
        return reply("done");
      },
      { maxDepth: 2 },
    );
    await pod.run("go");
    const child = (s.requests as AnthropicBody[]).find(isChild)!;
    expect((child.tools ?? []).map((t) => t.name)).toContain("task");
  });
});

describe("agent files", () => {
  it("reads description, tools (list or comma string), model; says what is wrong otherwise", async () => {
    const dir = await tempDir();
    await writeFile(
      path.join(dir, "ok.md"),
      "---\ndescription: Finds things\ntools: [read_file, glob]\nmodel: anthropic/claude-haiku-4-5\n---\nFind.\n",
    );
    await writeFile(path.join(dir, "nodesc.md"), "---\ntools: read_file\n---\nbody\n");
    await writeFile(path.join(dir, "badyaml.md"), "---\ndescription: [unclosed\n---\n");
    await writeFile(path.join(dir, "badmodel.md"), "---\ndescription: d\nmodel: haiku\n---\n");
    await writeFile(path.join(dir, "bad name.md"), "---\ndescription: d\n---\n");
    await writeFile(path.join(dir, "notes.txt"), "ignored");
    const { agents, problems } = await loadAgents([dir, path.join(dir, "missing")]);
    expect([...agents.keys()]).toEqual(["ok"]);
    expect(agents.get("ok")).toMatchObject({
      description: "Finds things",
      tools: ["read_file", "glob"],
      model: "anthropic/claude-haiku-4-5",
      prompt: "Find.",
    });
    const messages = problems.map((p) => p.message).join("\n");
    expect(messages).toMatch(/nodesc\.md: description: /);
    expect(messages).toMatch(/badyaml\.md: front matter is not valid YAML/);
    expect(messages).toMatch(/badmodel\.md: model: .*provider/);
    expect(messages).toMatch(/bad name\.md: the agent name "bad name"/);
  });
});
