/**
 * Trimmed tool results and the shaping of the summary input on the wire:
 * the real client and adapters (official SDKs) against the scripted fake
 * provider of @yoi/llm-client/testing, which validates tool-call pairing
 * like the real APIs do.
 */
import {
  type ClientWarning,
  createClient,
  type Item,
  MISSING_RESULT_TEXT,
  type ProviderKind,
} from "@yoi/llm-client";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import {
  compact,
  resolveCompactionConfig,
  summaryRequestFromItems,
  trimPlaceholder,
  trimToolOutputs,
} from "../src/index.ts";
import { assistant, call, ref, result, user } from "./support/items.ts";

const MODELS: Record<ProviderKind, string> = {
  anthropic: "claude-sonnet-4-5",
  "openai-chat": "gpt-4.1-mini",
  "openai-responses": "gpt-4.1-mini",
  gemini: "gemini-2.5-flash",
};
const PROVIDERS = Object.keys(MODELS) as ProviderKind[];
const config = resolveCompactionConfig();

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function setup(provider: ProviderKind, replies = 1) {
  const server = await startScriptedServer({
    provider,
    validate: true,
    script: Array.from({ length: replies }, () => ({
      type: "reply" as const,
      text: "<retain>ref list</retain><summary>The summary.</summary>",
    })),
  });
  servers.push(server);
  const warnings: ClientWarning[] = [];
  const client = createClient({
    provider,
    model: MODELS[provider],
    apiKey: "test-key-not-secret",
    baseURL: server.baseURL,
    retry: { maxAttempts: 1 },
    onWarning: (w) => warnings.push(w),
  });
  return { server, client, warnings };
}

/** A session caught right after a model call that asked for tools: the calls have no results yet. */
function pendingHistory(): Item[] {
  return [
    user("Find the failing test."),
    assistant("Running the tests."),
    call("call_run", "bash", { cmd: "pnpm test" }),
    result("call_run", "FAIL src/a.test.ts", ref(1), "bash"),
    assistant("One failure; reading it."),
    call("call_read", "read", { path: "src/a.test.ts" }),
    call("call_grep", "grep", { pattern: "expect" }),
  ];
}

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream) {
    // consume
  }
}

describe.each(PROVIDERS)("%s: trimmed outputs on the wire", (provider) => {
  it("sends the placeholder, not the trimmed output", async () => {
    const { server, client } = await setup(provider);
    const history: Item[] = [
      user("go"),
      call("call_1", "read"),
      result("call_1", `SECRET-OLD-OUTPUT ${"o".repeat(4000)}`, ref(1)),
      call("call_2", "read"),
      result("call_2", "recent output", ref(2)),
      user("continue"),
    ];
    const trimmed = trimToolOutputs(history, { budgetTokens: 200 });
    expect(trimmed.trimmed).toEqual([ref(1)]);
    await drain(client.stream({ items: [...trimmed.history] }));
    expect(server.rejections).toEqual([]);
    const body = JSON.stringify(server.requests[0]);
    expect(body).toContain(JSON.stringify(trimPlaceholder(ref(1))).slice(1, -1));
    expect(body).not.toContain("SECRET-OLD-OUTPUT");
    expect(body).toContain("recent output");
  });
});

describe.each(PROVIDERS)("%s: trailing tool calls in the summary request", (provider) => {
  it("without stripping, the request breaks pairing (the client has to invent results); with it, it is valid as is", async () => {
    const { server, client, warnings } = await setup(provider, 2);
    // Without the shaping: the client must repair the history, i.e. the request as built is invalid,
    // and the summary model would be told the tools were interrupted.
    await drain(client.stream(summaryRequestFromItems(pendingHistory(), config)));
    const repaired = warnings.filter((w) => w.code === "repaired_history");
    expect(repaired).toHaveLength(1);
    expect(repaired[0]!.message).toContain("missing_result call_read");
    expect(repaired[0]!.message).toContain("missing_result call_grep");
    expect(JSON.stringify(server.requests[0])).toContain(MISSING_RESULT_TEXT);

    // With it: nothing to repair, the server accepts it, and no tool call or invented result is sent.
    warnings.length = 0;
    const out = await compact(pendingHistory(), { client, config });
    expect(out.summary).toBe("The summary.");
    expect(warnings.filter((w) => w.code === "repaired_history")).toEqual([]);
    expect(server.rejections).toEqual([]);
    const sent = JSON.stringify(server.requests[1]);
    expect(sent).not.toContain("call_read");
    expect(sent).not.toContain(MISSING_RESULT_TEXT);
    expect(sent).toContain("One failure; reading it.");
    // The summary request carries no tools.
    const body = server.requests[1] as { tools?: unknown[] };
    expect(body.tools ?? []).toEqual([]);
  });
});

/**
 * The unrepaired body: what the real adapter produced for the unshaped
 * request, with the client's invented results taken out again.
 */
function withoutInventedResults(provider: ProviderKind, body: unknown): unknown {
  const copy = structuredClone(body) as { messages: Array<{ role: string; content: unknown }> };
  if (provider === "anthropic") {
    for (const message of copy.messages) {
      if (Array.isArray(message.content)) {
        message.content = message.content.filter(
          (block) => !JSON.stringify(block).includes(MISSING_RESULT_TEXT),
        );
      }
    }
    copy.messages = copy.messages.filter((m) => !Array.isArray(m.content) || m.content.length > 0);
  } else {
    copy.messages = copy.messages.filter(
      (m) => !(m.role === "tool" && JSON.stringify(m.content).includes(MISSING_RESULT_TEXT)),
    );
  }
  return copy;
}

describe.each(["anthropic", "openai-chat"] as const)(
  "%s: the API rejects the unshaped summary request",
  (provider) => {
    it("answers 400 for the real adapter's body when the trailing tool calls are left in", async () => {
      const { server, client } = await setup(provider, 3);
      await drain(client.stream(summaryRequestFromItems(pendingHistory(), config)));
      const raw = withoutInventedResults(provider, server.requests[0]);
      const origin = new URL(server.baseURL).origin;
      const path = provider === "anthropic" ? "/v1/messages" : "/v1/chat/completions";
      const response = await fetch(`${origin}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(raw),
      });
      expect(response.status).toBe(400);
      expect(server.rejections.at(-1)).toMatch(/call_read/);

      expect(server.rejections.at(-1)).toMatch(/without|tool_call_id|tool_result|respond/i);

      // The shaped request through the same adapter is accepted and answered.
      const out = await compact(pendingHistory(), { client, config });
      expect(out.summary).toBe("The summary.");
      expect(server.rejections).toHaveLength(1);
    });
  },
);
