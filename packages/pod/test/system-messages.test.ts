import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { ConfigSchema } from "@yoi/manifest";
import { afterEach, describe, expect, it } from "vitest";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

const servers: ScriptedServer[] = [];
const pods: Pod[] = [];
afterEach(async () => {
  for (const p of pods.splice(0)) await p.close();
  for (const s of servers.splice(0)) await s.close();
});

/** llama.cpp with a Qwen-style template: a system message that is not first is a 400. */
function llamaCppLike(_index: number, body: unknown): ScriptStep {
  const messages = (body as { messages: { role: string }[] }).messages;
  if (messages.some((m, i) => m.role === "system" && i > 0)) {
    return { type: "error", status: 400, message: "System message must be at the beginning." };
  }
  return { type: "reply", text: "read it" };
}

async function podOn(s: ScriptedServer, capabilities?: { systemMessagesAnywhere: boolean }) {
  const root = await tempDir();
  await writeFile(path.join(root, "notes.md"), "the notes\n");
  const config = ConfigSchema.parse({
    providers: { local: { kind: "openai-chat", baseURL: s.baseURL } },
    model: "local/qwen3-coder",
    models: {
      "qwen3-coder": {
        provider: "local",
        contextWindow: 32_000,
        maxOutputTokens: 4_096,
        ...(capabilities ? { capabilities } : {}),
      },
    },
  });
  const pod = await Pod.create({
    cwd: root,
    dataDir: path.join(root, ".data"),
    fsync: "never",
    config,
    env: {},
  });
  pods.push(pod);
  return pod;
}

describe("@path bodies on a compatible server that takes system messages only first", () => {
  it("are sent as marked user text, and the server accepts the request", async () => {
    const s = await startScriptedServer({ provider: "openai-chat", validate: true, script: llamaCppLike });
    servers.push(s);
    const pod = await podOn(s);
    const result = await pod.run("summarize @notes.md");
    expect(result.status).toBe("completed");
    const sent = JSON.stringify(s.requests[0]);
    expect(sent).toContain("<system-reminder>\\n[File: notes.md]\\nthe notes\\n");
  });

  it("a config model entry declaring systemMessagesAnywhere overrides the default (and this server then refuses)", async () => {
    const s = await startScriptedServer({ provider: "openai-chat", validate: true, script: llamaCppLike });
    servers.push(s);
    const pod = await podOn(s, { systemMessagesAnywhere: true });
    const result = await pod.run("summarize @notes.md");
    expect(result.status).toBe("failed");
    expect(result.error?.message).toContain("System message must be at the beginning.");
  });
});
