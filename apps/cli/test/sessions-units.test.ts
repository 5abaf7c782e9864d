import { SUMMARY_HEADER } from "@yoi/compaction";
import { assistantMessage, type Item, userMessage } from "@yoi/llm-client";
import type { SessionSummary } from "@yoi/worker-persistence";
import { describe, expect, it } from "vitest";
import { formatSessionTable, sessionTree } from "../src/commands/sessions.ts";
import { conversationMarkdown } from "../src/sessions/export.ts";
import { pickerItems } from "../src/sessions/session-picker.ts";
import { shortIds } from "../src/sessions/short-ids.ts";
import { transcriptLines } from "../src/sessions/transcript.ts";
import { createStyle } from "../src/style.ts";
import { visibleWidth } from "../src/text-width.ts";

const row = (id: string, extra: Partial<SessionSummary> = {}): SessionSummary => ({
  id,
  path: `/x/${id}.jsonl`,
  updatedAt: "2026-01-01T00:00:00.000Z",
  sizeBytes: 10,
  failedBeforeOutput: false,
  ...extra,
});

describe("short ids", () => {
  it("are the shortest prefix that tells ids apart, at least 8 characters", () => {
    const ids = ["01a20a8c-686a-7033", "01a20a8c-6c11-7000", "01a20a8c-6c19-7000", "ffff0000-0000-0000"];
    const short = shortIds(ids);
    expect(short.get(ids[0]!)).toBe("01a20a8c-68");
    expect(short.get(ids[1]!)).toBe("01a20a8c-6c11");
    expect(short.get(ids[2]!)).toBe("01a20a8c-6c19");
    expect(short.get(ids[3]!)).toBe("ffff0000");
    const values = [...short.values()];
    for (const id of ids) expect(values.filter((v) => id.startsWith(v))).toHaveLength(1);
  });
});

describe("the sessions tree", () => {
  it("puts forks under their parent, newest-first order kept, a parent cycle still lists every session once", () => {
    const rows = [
      row("c", { parentSessionId: "a", title: "child" }),
      row("b", { title: "other" }),
      row("a", { title: "parent" }),
      row("d", { parentSessionId: "c", title: "grandchild" }),
      row("e", { parentSessionId: "missing", title: "orphan" }),
      row("x", { parentSessionId: "y" }),
      row("y", { parentSessionId: "x" }),
    ];
    expect(sessionTree(rows).map((r) => `${r.session.id}${r.depth}`)).toEqual([
      "b0",
      "a0",
      "c1",
      "d2",
      "e0",
      "x0",
      "y1",
    ]);
    const table = formatSessionTable(rows.slice(0, 4), { now: Date.parse("2026-01-01T00:00:05Z") });
    expect(table).toContain("└ child");
    expect(table).toContain("  └ grandchild");
  });
});

describe("the sessions table", () => {
  it("fits a terminal: the model and the size go first, then titles are cut; wide characters line up", () => {
    const now = Date.parse("2026-01-01T00:10:00Z");
    const rows = [
      row("01a2aaaa", {
        title: "type the add function and test it well",
        model: "claude-haiku-4-5",
        sizeBytes: 7000,
      }),
      row("01a2bbbb", { title: "日本語のタイトル", model: "claude-haiku-4-5" }),
    ];
    const whole = formatSessionTable(rows, { now }).split("\n");
    expect(whole[0]).toMatch(/^id +title +updated +model +size$/);
    expect(whole[1]).toContain("type the add function and test it well");
    const narrow = formatSessionTable(rows, { now, width: 40 }).split("\n");
    expect(narrow[0]).toMatch(/^id +title +updated$/);
    expect(narrow[1]).toMatch(/^01a2aaaa {2}type the add .*… {2}10m ago$/);
    for (const line of narrow) expect(visibleWidth(line)).toBeLessThanOrEqual(39);
    // The age starts in the same column on every row, whatever the title's characters.
    const ageAt = (line: string) => visibleWidth(line.slice(0, line.lastIndexOf("10m ago")));
    expect(ageAt(narrow[2]!)).toBe(ageAt(narrow[1]!));
    expect(ageAt(whole[2]!)).toBe(ageAt(whole[1]!));
  });
});

describe("the picker", () => {
  it("shows each session's first prompt, age, branch, size and model, fitted to the width", () => {
    const now = Date.parse("2026-01-01T03:00:00Z");
    const rows = [
      {
        ...row("01a2aaaa"),
        firstPrompt: "fix the \x1b[31mflaky\x1b[0m test in the parser that fails on Tuesdays",
        gitBranch: "main",
        sizeBytes: 2048,
        model: "claude-haiku-4-5",
        updatedAt: "2026-01-01T01:00:00Z",
      },
      { ...row("01a2bbbb"), sizeBytes: 100, updatedAt: "2026-01-01T02:59:00Z" },
    ];
    const items = pickerItems(rows, 80, now);
    expect(items[0]).toMatch(
      /^fix the .*flaky.* test in.*… {2,}2h ago · ⎇ main · 2\.0 KB · claude-haiku-4-5$/,
    );
    expect(items[0]).not.toContain("\x1b");
    expect(items[1]).toMatch(/ {2}1m ago · 100 B$/);
    for (const item of items) expect(item.length).toBeLessThanOrEqual(80);
    // The facts start in one column, whether the prompt was cut or not.
    const at = (item: string) => item.search(/ {2}\d+[smhd] ago/);
    expect(at(items[0] ?? "")).toBe(at(items[1] ?? ""));
  });

  it("at 40 columns leaves out the facts that matter least, whole, and keeps the column", () => {
    const now = Date.parse("2026-01-01T03:00:00Z");
    const rows = [
      {
        ...row("01a2aaaa"),
        firstPrompt: "comment the add function in src/math.ts",
        gitBranch: "main",
        sizeBytes: 2048,
        model: "claude-haiku-4-5",
        updatedAt: "2026-01-01T02:15:00Z",
      },
      { ...row("01a2bbbb"), firstPrompt: "hi", sizeBytes: 100, updatedAt: "2026-01-01T02:59:55Z" },
    ];
    const items = pickerItems(rows, 40, now);
    // The marker (2 columns) goes in front: every row fits the terminal, no fact cut in the middle.
    for (const item of items) expect(visibleWidth(item) + 2).toBeLessThanOrEqual(40);
    expect(items[0]).toBe("comment the add fun…  45m ago");
    expect(items[1]).toBe(`hi${" ".repeat(20)}5s ago · 100 B`);
  });
});

describe("the resume transcript", () => {
  it("draws the last turns: prompt, answer, tool lines with their outcome", () => {
    const lines = transcriptLines(
      [
        { type: "message", role: "user", content: [{ type: "text", text: "first" }] },
        { type: "message", role: "assistant", content: [{ type: "text", text: "one" }] },
        { type: "message", role: "user", content: [{ type: "text", text: "second" }] },
        { type: "tool_call", callId: "c1", name: "read_file", arguments: '{"path":"a.txt"}' },
        { type: "tool_result", callId: "c1", output: "x", isError: true },
        { type: "message", role: "assistant", content: [{ type: "text", text: "two" }] },
      ],
      createStyle(false),
      { turns: 1 },
    );
    expect(lines).toEqual(["… 1 earlier turn(s)", "› second", "✗ read_file a.txt", "two"]);
  });

  it("lays the lines out at a width: the prompt wrapped under its mark, the answer by the caller, tool lines cut", () => {
    const answer = Array.from({ length: 13 }, (_, i) => `line ${i + 1}`).join("\n");
    const lines = transcriptLines(
      [
        {
          type: "message",
          role: "user",
          content: [{ type: "text", text: "a prompt long enough to wrap twice here" }],
        },
        {
          type: "tool_call",
          callId: "c1",
          name: "read_file",
          arguments: '{"path":"a/very/long/path/to/some/file.txt"}',
        },
        { type: "tool_result", callId: "c1", output: "x", isError: false },
        { type: "message", role: "assistant", content: [{ type: "text", text: answer }] },
        { type: "message", role: "assistant", content: [{ type: "text", text: `${answer}\nline 14` }] },
      ],
      createStyle(false),
      { width: 20, answer: (text) => text.split("\n").map((l) => `> ${l}`) },
    );
    expect(lines.slice(0, 2)).toEqual([
      "› a prompt long\n  enough to wrap\n  twice here",
      "✓ read_file a/very/…",
    ]);
    // One line more than the limit is shown; two more are said to be left out.
    expect(lines.slice(2, 15)).toEqual(answer.split("\n").map((l) => `> ${l}`));
    expect(lines.slice(15)).toEqual([
      ...answer
        .split("\n")
        .slice(0, 12)
        .map((l) => `> ${l}`),
      "… (2 more lines)",
    ]);
  });

  it("draws a web search the provider ran with its query and what it found", () => {
    const search = {
      type: "server_tool" as const,
      callId: "s1",
      name: "web_search",
      arguments: '{"query":"yoi\\u001b[2J release"}',
      status: "completed" as const,
      sources: [{ url: "https://a.example/" }, { url: "https://b.example/" }],
      provider: "anthropic",
    };
    const lines = transcriptLines(
      [
        { type: "message", role: "user", content: [{ type: "text", text: "news?" }] },
        search,
        { ...search, callId: "s2", status: "failed", error: "max_uses_exceeded", sources: [] },
        { type: "message", role: "assistant", content: [{ type: "text", text: "It shipped." }] },
      ],
      createStyle(false),
    );
    expect(lines).toEqual([
      "› news?",
      '✓ Searched the web: "yoi\\u001b[2J release" (2 results)',
      '✗ Web search failed: "yoi\\u001b[2J release" (max_uses_exceeded)',
      "It shipped.",
    ]);
  });
});

describe("conversationMarkdown (/export)", () => {
  it("quotes each prompt, heads each answer once, lists tool calls together, and keeps the refs as typed", () => {
    const history: Item[] = [
      userMessage("compare [unresolved file ref: a.ts] and [unresolved file ref: b.ts]\n\n# not a heading"),
      { type: "message", role: "system", content: [{ type: "text", text: "[File: a.ts]\nsecret body" }] },
      { type: "tool_call", callId: "1", name: "read_file", arguments: '{"path":"a.ts"}' },
      { type: "tool_call", callId: "2", name: "grep", arguments: "not json" },
      { type: "tool_result", callId: "1", isError: false, output: "x" } as Item,
      { type: "tool_result", callId: "2", isError: true, output: "y" } as Item,
      assistantMessage("They differ."),
      userMessage("news?"),
      {
        type: "server_tool",
        callId: "s",
        name: "web_search",
        arguments: '{"query":"yoi"}',
        status: "failed",
        sources: [],
        provider: "anthropic",
      } as Item,
      assistantMessage(""),
      assistantMessage("None found."),
    ];
    const { markdown, turns } = conversationMarkdown(history, {
      sessionId: "01a2",
      model: "anthropic/claude-haiku-4-5",
      cwd: "/p",
      at: new Date("2026-11-28T00:00:00Z"),
    });
    expect(turns).toBe(2);
    expect(markdown).not.toContain("secret body");
    const body = markdown.slice(markdown.indexOf("## You"));
    expect(body.split("\n").slice(0, 12)).toEqual([
      "## You",
      "",
      "> compare @a.ts and @b.ts",
      ">",
      "> # not a heading",
      "",
      "## yoi",
      "",
      "- `read_file` a.ts",
      "- `grep` (failed)",
      "",
      "They differ.",
    ]);
    expect(body).toMatch(/## You\n\n> news\?\n\n## yoi\n\n- Web search failed: "yoi".*\n\nNone found\.\n$/);
    expect(
      markdown.startsWith(
        "# yoi session 01a2\n\n- model: anthropic/claude-haiku-4-5\n- directory: /p\n- exported: 2026-11-28T00:00:00.000Z\n",
      ),
    ).toBe(true);
  });
});

describe("an export of a conversation that holds a key", () => {
  it("masks it, in the prompt and in the answer", () => {
    const key = "sk-ant-api03-pastedKey4f1b2c3d";
    const { markdown } = conversationMarkdown(
      [userMessage(`use ${key} for now`), assistantMessage(`Set ANTHROPIC_API_KEY=${key}.`)],
      { sessionId: "01a2", model: "anthropic/claude-haiku-4-5", cwd: "/p", at: new Date(0) },
    );
    expect(markdown).not.toContain(key);
    expect(markdown).toContain("> use <redacted> for now");
    expect(markdown).toContain("Set ANTHROPIC_API_KEY=<redacted>");
  });
});

describe("a compacted session, exported and resumed", () => {
  const history: Item[] = [
    userMessage(`${SUMMARY_HEADER}\n\n<summary>\nWe set retries to 3.\n</summary>`),
    userMessage("and now?"),
    assistantMessage("Now we test."),
  ];

  it("/export puts the summary under its own heading, not as a prompt", () => {
    const { markdown, turns } = conversationMarkdown(history, {
      sessionId: "s",
      model: "m",
      cwd: "/p",
      at: new Date(0),
    });
    expect(turns).toBe(1);
    expect(markdown).toContain(
      "## Earlier, compacted\n\nWe set retries to 3.\n\n## You\n\n> and now?\n\n## yoi\n\nNow we test.\n",
    );
  });

  it("the resume transcript says the earlier turns were compacted instead of showing the summary as typed", () => {
    const lines = transcriptLines(history, createStyle(false));
    expect(lines).toEqual(["⟳ earlier turns were compacted into a summary", "› and now?", "Now we test."]);
  });
});
