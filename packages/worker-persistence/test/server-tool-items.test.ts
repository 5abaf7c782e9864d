/**
 * A web search the provider ran (a `server_tool` item) and the citations on
 * the answer's text are logged and come back whole on resume, encrypted
 * replay data included; a damaged one is skipped with a warning naming its
 * line, like any other bad record.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Item, ServerToolItem } from "@yoi/llm-client";
import { afterEach, describe, expect, it } from "vitest";
import { createSession, itemProblem, openSession, sessionPath } from "../src/index.ts";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const search: ServerToolItem = {
  type: "server_tool",
  callId: "srvtoolu_1",
  name: "web_search",
  arguments: '{"query":"yoi release"}',
  status: "completed",
  sources: [{ url: "https://example.com/a", title: "A", pageAge: "1 day ago" }],
  provider: "anthropic",
  providerData: {
    resultType: "web_search_tool_result",
    content: [
      { type: "web_search_result", url: "https://example.com/a", title: "A", encrypted_content: "Enc==" },
    ],
  },
};
const answer: Item = {
  type: "message",
  role: "assistant",
  content: [
    { type: "text", text: "Per the notes, " },
    {
      type: "text",
      text: "it shipped.",
      citations: [
        {
          url: "https://example.com/a",
          title: "A",
          citedText: "it shipped",
          provider: "anthropic",
          providerData: { type: "web_search_result_location", encryptedIndex: "Idx==" },
        },
      ],
    },
  ],
};

async function logged(): Promise<{ dir: string; id: string; path: string }> {
  const dir = mkdtempSync(join(tmpdir(), "yoi-server-tool-"));
  dirs.push(dir);
  const log = await createSession({ dir, fsync: "never", model: "m", provider: "anthropic", cwd: "/p" });
  await log.userInput("did yoi ship?");
  await log.item(
    { type: "message", role: "user", content: [{ type: "text", text: "did yoi ship?" }] },
    "user",
  );
  await log.item(search, "assistant");
  await log.item(answer, "assistant");
  await log.turnEnd({ turn: 0, stopReason: "end_turn" });
  const id = log.id;
  await log.close();
  return { dir, id, path: sessionPath(dir, id) };
}

describe("server tool items in the session log", () => {
  it("come back whole on resume, in order", async () => {
    const { dir, id } = await logged();
    const opened = await openSession({ dir, id, fsync: "never" });
    await opened.log.close();
    expect(opened.warnings).toEqual([]);
    expect(opened.history.slice(1)).toEqual([search, answer]);
  });

  it("a damaged one is skipped with a warning naming what is wrong", async () => {
    const { dir, id, path } = await logged();
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    const at = lines.findIndex((l) => l.includes('"server_tool"'));
    const record = JSON.parse(lines[at]!) as { item: Record<string, unknown> };
    record.item.sources = ["https://example.com/a"];
    lines[at] = JSON.stringify(record);
    writeFileSync(path, `${lines.join("\n")}\n`);
    const opened = await openSession({ dir, id, fsync: "never" });
    await opened.log.close();
    expect(opened.warnings.find((w) => w.line === at + 1)?.message).toMatch(
      /server tool srvtoolu_1 whose `sources` are not objects with a `url`/,
    );
    expect(opened.history.some((item) => item.type === "server_tool")).toBe(false);
    expect(opened.history.at(-1)).toEqual(answer);
  });

  it("itemProblem names each broken field", () => {
    expect(itemProblem(search)).toBeUndefined();
    expect(itemProblem({ ...search, status: "done" })).toMatch(
      /status "done" \(expected running, completed or failed\)/,
    );
    expect(itemProblem({ ...search, arguments: { query: "x" } })).toMatch(/`arguments` is not a JSON string/);
    expect(itemProblem({ ...search, provider: "" })).toMatch(/without a `provider`/);
    expect(itemProblem({ ...search, callId: "" })).toMatch(/server tool without a `callId`/);
    expect(
      itemProblem({
        type: "message",
        role: "assistant",
        content: [{ type: "text", text: "x", citations: [{}] }],
      }),
    ).toMatch(/`citations` are not objects with a `url`/);
  });
});
