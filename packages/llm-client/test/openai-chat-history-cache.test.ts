/**
 * The Chat Completions adapter keeps the messages (and their JSON) of the
 * history it sent last and converts only what was added since. A stale
 * prefix would send the model a history that is not the session's, so every
 * request built with the cache must equal the one built without it, through
 * whatever changes the history goes through: appends, compaction, trims,
 * rewinds, a /model switch, a new system prompt, a resumed session.
 */
import { describe, expect, it } from "vitest";
import type { OpenAIChatRequestOptions } from "../src/adapters/openai-chat/request.ts";
import { buildOpenAIChatRequest, ChatHistoryCache } from "../src/adapters/openai-chat/request.ts";
import type { Item, ToolResultItem } from "../src/item.ts";
import type { Request } from "../src/request.ts";

const text = (role: "user" | "assistant" | "system", body: string): Item => ({
  type: "message",
  role,
  content: [{ type: "text", text: body }],
});
const call = (id: string): Item => ({
  type: "tool_call",
  callId: id,
  name: "read_file",
  arguments: `{"path":"${id}.md"}`,
});
const result = (id: string, output = `contents of ${id}.md\n\t"quoted" \u00e9\u4e2d`): ToolResultItem => ({
  type: "tool_result",
  callId: id,
  name: "read_file",
  output,
  isError: false,
});

const OPTIONS: OpenAIChatRequestOptions[] = [
  { openai: true },
  { openai: false },
  { openai: true, systemMessagesAnywhere: false },
];

/** The request built with `cache`, checked against one built from scratch: same params, body their exact JSON. */
function expectSame(
  cache: ChatHistoryCache,
  model: string,
  request: Request,
  options: OpenAIChatRequestOptions,
): void {
  const cached = buildOpenAIChatRequest(model, request, options, cache);
  const fresh = buildOpenAIChatRequest(model, request, options);
  expect(cached.params).toEqual(fresh.params);
  expect(cached.warnings).toEqual(fresh.warnings);
  expect(cached.body).toBe(JSON.stringify(fresh.params));
  expect(fresh.body).toBe(JSON.stringify(fresh.params));
}

describe("the Chat Completions history cache", () => {
  for (const options of OPTIONS) {
    const label = JSON.stringify(options);

    it(`sends the whole history as it grows, one turn at a time (${label})`, () => {
      const cache = new ChatHistoryCache();
      const items: Item[] = [text("user", "read the notes")];
      const system = "You are a test.";
      for (let turn = 0; turn < 30; turn++) {
        expectSame(cache, "m", { system, items: items.slice() }, options);
        const id = `c${turn}`;
        if (turn % 7 === 3) items.push(text("assistant", `thinking about ${id}`));
        if (turn % 5 === 4) items.push({ type: "reasoning", text: "hmm", provider: "openai-chat" });
        items.push(call(id));
        if (turn % 4 === 1) items.push(call(`${id}b`), result(`${id}b`));
        items.push(result(id));
        if (turn % 6 === 5) items.push(text("system", `reminder ${turn}`));
        if (turn % 9 === 8) items.push(text("assistant", "a pause"), text("user", "go on"));
      }
      expectSame(cache, "m", { system, items: items.slice() }, options);
    });

    it(`starts over after a compaction, a trim, a rewind and a resume (${label})`, () => {
      const cache = new ChatHistoryCache();
      const items: Item[] = [text("user", "start")];
      for (let i = 0; i < 10; i++) items.push(call(`c${i}`), result(`c${i}`));
      expectSame(cache, "m", { items: items.slice() }, options);

      // A trim: an old result replaced by a new item (its placeholder), the rest the same objects.
      const trimmed = items.slice();
      trimmed[4] = result("c1", "[tool output trimmed; ref=0190]");
      expectSame(cache, "m", { items: trimmed.slice() }, options);
      trimmed.push(call("t1"), result("t1"));
      expectSame(cache, "m", { items: trimmed.slice() }, options);

      // A rewind: the history cut back to an earlier turn, then a different continuation.
      const rewound = trimmed.slice(0, 5);
      expectSame(cache, "m", { items: rewound.slice() }, options);
      rewound.push(text("user", "no, the other file"), call("r1"), result("r1"));
      expectSame(cache, "m", { items: rewound.slice() }, options);

      // A compaction: a summary and the kept tail, new objects at the front.
      const compacted = [text("user", "[summary] read ten files"), ...rewound.slice(-2)];
      expectSame(cache, "m", { items: compacted.slice() }, options);
      compacted.push(call("p1"), result("p1"));
      expectSame(cache, "m", { items: compacted.slice() }, options);

      // A resumed session: the same history read back from the log (equal items, other objects), a new cache.
      const resumed = structuredClone(compacted);
      expectSame(cache, "m", { items: resumed }, options);
      expectSame(new ChatHistoryCache(), "m", { items: resumed }, options);
    });

    it(`starts over for another model, system prompt or server (${label})`, () => {
      const cache = new ChatHistoryCache();
      // A tool result with an image: its message names the model.
      const items: Item[] = [
        text("user", "look"),
        call("c1"),
        {
          ...result("c1", "[Image: a.png]"),
          images: [{ type: "image", mediaType: "image/png", data: "iVBO" }],
        },
      ];
      expectSame(cache, "gpt-a", { system: "one", items: items.slice() }, options);
      expectSame(cache, "gpt-b", { system: "one", items: items.slice() }, options);
      expectSame(cache, "gpt-b", { system: "two", items: items.slice() }, options);
      expectSame(cache, "gpt-b", { items: items.slice() }, options);
      const other = OPTIONS.find((o) => o !== options)!;
      expectSame(cache, "gpt-b", { items: items.slice() }, other);
      expectSame(cache, "gpt-b", { items: items.slice() }, options);
    });
  }

  it("joins system items that open the history into the one leading system message, however they arrive", () => {
    const cache = new ChatHistoryCache();
    const options = { openai: false };
    const items: Item[] = [text("system", "[File: a.md] one")];
    expectSame(cache, "m", { system: "prompt", items: items.slice() }, options);
    items.push(text("system", "[File: b.md] two"));
    expectSame(cache, "m", { system: "prompt", items: items.slice() }, options);
    items.push(text("user", "hello"), text("system", "later"), text("assistant", "hi"));
    expectSame(cache, "m", { system: "prompt", items: items.slice() }, options);
    items.push(text("system", "after the answer"), text("user", "and now"), text("system", "after the user"));
    expectSame(cache, "m", { system: "prompt", items: items.slice() }, options);
  });

  it("continues an assistant run that the last request ended with", () => {
    const cache = new ChatHistoryCache();
    const options = { openai: true };
    const items: Item[] = [text("user", "go"), text("assistant", "first part")];
    expectSame(cache, "m", { items: items.slice() }, options);
    // The same run grows: the kept messages must not hold its earlier, shorter message.
    items.push(text("assistant", " and more"), call("c1"));
    expectSame(cache, "m", { items: items.slice() }, options);
    items.push(result("c1"));
    expectSame(cache, "m", { items: items.slice() }, options);
    const { params } = buildOpenAIChatRequest("m", { items: items.slice() }, options, cache);
    expect(params.messages[1]).toMatchObject({ role: "assistant", content: "first part and more" });
  });

  it("never changes a message an earlier request was built with", () => {
    const cache = new ChatHistoryCache();
    const options = { openai: false };
    const items: Item[] = [text("user", "hello")];
    const first = buildOpenAIChatRequest("m", { items: items.slice() }, options, cache);
    const before = JSON.stringify(first.params);
    items.push(text("system", "a reminder for the user message"));
    const second = buildOpenAIChatRequest("m", { items: items.slice() }, options, cache);
    expect(JSON.stringify(first.params)).toBe(before);
    expect(second.params.messages.at(-1)).toEqual({
      role: "user",
      content: "hello\n\n<system-reminder>\na reminder for the user message\n</system-reminder>",
    });
    expect(second.body).toBe(JSON.stringify(second.params));
  });

  it("does not follow an items array changed in place after the request", () => {
    const cache = new ChatHistoryCache();
    const options = { openai: true };
    const items: Item[] = [text("user", "hello"), call("c1"), result("c1")];
    expectSame(cache, "m", { items }, options);
    items[2] = result("c1", "another output");
    items.push(call("c2"), result("c2"));
    expectSame(cache, "m", { items }, options);
  });
});
