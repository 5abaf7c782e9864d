/** The line editor's parts, the Markdown stream, costs and once-only notes, without a terminal. */
import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { createStyle } from "../src/style.ts";
import { costOf, formatCost } from "../src/ui/cost.ts";
import { EditBuffer } from "../src/ui/edit-buffer.ts";
import { KeyDecoder } from "../src/ui/keys.ts";
import { LiveRegion } from "../src/ui/live-region.ts";
import { MarkdownStream } from "../src/ui/markdown/markdown-stream.ts";
import * as rich from "../src/ui/rich-output.ts";

describe("KeyDecoder", () => {
  const names = (chunks: string[]) => {
    const decoder = new KeyDecoder();
    return chunks
      .flatMap((c) => decoder.feed(c))
      .map(
        (k) =>
          `${k.ctrl ? "C-" : ""}${k.meta ? "M-" : ""}${k.shift ? "S-" : ""}${k.name}${k.text ? `(${k.text})` : ""}`,
      );
  };

  it("decodes text, control keys, arrows, Alt and the two Shift+Enter encodings", () => {
    expect(names(["ab\x1b[A\x01\r\x1b\r\x1b[13;2u\x1b[27;2;13~\x1bb\x7f"])).toEqual([
      "text(ab)",
      "up",
      "C-a",
      "enter",
      "M-enter",
      "S-enter",
      "S-enter",
      "M-b(b)",
      "backspace",
    ]);
  });

  it("keeps a bracketed paste whole, across chunks, newlines normalized", () => {
    expect(names(["\x1b[200~one\r\ntwo\x1b[2", "01~x"])).toEqual(["paste(one\ntwo)", "text(x)"]);
  });

  it("treats a lone ESC at the end of a chunk as the Escape key", () => {
    expect(names(["\x1b"])).toEqual(["escape"]);
  });
});

describe("EditBuffer", () => {
  it("moves by grapheme, so an emoji with a joiner is one step", () => {
    const b = new EditBuffer();
    b.insert("a👨‍👩‍👧b");
    b.left();
    b.left();
    expect(b.cursor).toBe(1);
    b.backspace();
    expect(b.text).toBe("👨‍👩‍👧b");
  });

  it("walks lines up and down keeping the column, and kills to the line's ends", () => {
    const b = new EditBuffer();
    b.set("first line\nsecond\nthird line");
    expect(b.onLastLine).toBe(true);
    b.lineUp();
    expect(b.text.slice(0, b.cursor)).toBe("first line\nsecond");
    b.lineUp();
    expect(b.text.slice(0, b.cursor)).toBe("first ");
    expect(b.onFirstLine).toBe(true);
    b.killToEnd();
    expect(b.text).toBe("first \nsecond\nthird line");
    b.killToStart();
    expect(b.text).toBe("\nsecond\nthird line");
  });
});

describe("MarkdownStream", () => {
  const stream = () => {
    let out = "";
    const md = new MarkdownStream(
      rich,
      () => ({ width: 40, style: createStyle(true) }),
      (t) => (out += t),
    );
    return { md, out: () => out };
  };

  it("renders a block only once it is complete, and the rest at the end", () => {
    const { md, out } = stream();
    md.push("# Title\n\nSome **bo");
    expect(out()).toContain("Title");
    expect(out()).not.toContain("Some");
    md.push("ld** text\n");
    expect(out()).not.toContain("Some");
    md.push("\n```js\nconst a = 1;\n");
    expect(out()).toContain("bold");
    expect(out()).not.toContain("const a");
    md.push("```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n");
    expect(out()).toContain("const a = 1;");
    md.end();
    expect(stripVTControlCharacters(out())).toMatch(/│ 1\s+│ 2\s+│/);
    expect(out()).not.toContain("**");
  });

  it("fits a wide table into the width by wrapping cells", () => {
    const { md, out } = stream();
    md.push(`| key | value |\n|---|---|\n| k | ${"word ".repeat(30)}|\n`);
    md.end();
    const lines = out()
      .split("\n")
      .filter((l) => l !== "");
    for (const line of lines) expect(line.replace(/\x1b\[[0-9;]*m/g, "").length).toBeLessThanOrEqual(40);
    expect(lines.length).toBeGreaterThan(6);
  });
});

describe("diffs", () => {
  it("shows changed lines with numbers and collapses past the limit", () => {
    const before = Array.from({ length: 50 }, (_, i) => `line ${i}`).join("\n");
    const after = before.replace("line 3", "LINE 3").replace("line 40", "LINE 40");
    const view = rich.renderDiff(before, after, createStyle(false), 6);
    expect(view.added).toBe(2);
    expect(view.removed).toBe(2);
    expect(view.lines).toContain(" 4 - line 3");
    expect(view.lines).toContain(" 4 + LINE 3");
    expect(view.hidden).toBeGreaterThan(0);
  });

  it("never snapshots a file outside the root", async () => {
    const { mkdtemp, writeFile, symlink, mkdir } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const path = await import("node:path");
    const base = await mkdtemp(path.join(tmpdir(), "yoi-snap-"));
    await mkdir(path.join(base, "root"));
    await writeFile(path.join(base, "secret.txt"), "secret");
    await writeFile(path.join(base, "root", "a.txt"), "inside");
    await symlink(path.join(base, "secret.txt"), path.join(base, "root", "link.txt"));
    const root = path.join(base, "root");
    expect(rich.snapshotFile(root, "a.txt")).toBe("inside");
    expect(rich.snapshotFile(root, "../secret.txt")).toBeUndefined();
    expect(rich.snapshotFile(root, "link.txt")).toBeUndefined();
    expect(rich.snapshotFile(root, "missing.txt")).toBeUndefined();
  });
});

describe("cost", () => {
  it("prices fresh input, cache reads and writes, and output separately", () => {
    const pricing = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
    const usage = { inputTokens: 10_000, cacheReadTokens: 6_000, cacheWriteTokens: 1_000, outputTokens: 500 };
    // 3000*3 + 6000*0.3 + 1000*3.75 + 500*15 = 9000 + 1800 + 3750 + 7500 = 22050 µ$
    expect(costOf(usage, pricing)).toBeCloseTo(0.02205, 8);
    expect(costOf(usage, undefined)).toBeUndefined();
    expect(formatCost(0.02205)).toBe("$0.022");
    expect(formatCost(0.0025)).toBe("$0.0025");
    expect(formatCost(undefined)).toBe("$?");
  });
});

describe("Renderer notes", () => {
  it("says each kind of warning once a session", async () => {
    const { Renderer } = await import("../src/ui/renderer.ts");
    let text = "";
    const renderer = new Renderer({
      out: { write: (chunk: string) => (text += chunk) },
      style: createStyle(false),
      animate: false,
      window: 0,
      provider: { provider: "openai" },
    });
    const warn = (n: number) =>
      renderer.handle({
        type: "warning",
        warning: { code: "dropped_reasoning", message: `${n} reasoning item(s) were not sent` },
      } as never);
    warn(1);
    warn(2);
    expect(text.match(/reasoning item/g)).toHaveLength(1);
    // A different note of the same code is still said.
    renderer.handle({
      type: "warning",
      warning: { code: "dropped_reasoning", message: "another kind of drop" },
    } as never);
    expect(text).toContain("another kind of drop");
  });
});

describe("Renderer status lines at 40 columns", () => {
  it("wraps a call's summary and its error at words, further rows indented", async () => {
    const { Renderer } = await import("../src/ui/renderer.ts");
    let text = "";
    const renderer = new Renderer({
      out: { write: (chunk: string) => (text += chunk), columns: 40, isTTY: true },
      style: createStyle(false),
      animate: false,
      window: 0,
      provider: { provider: "anthropic" },
    });
    const command = "ls -la && echo one two three four five six seven";
    renderer.handle({
      type: "tool_call_start",
      callId: "c1",
      name: "bash",
      args: { command },
      startedAt: Date.now(),
    } as never);
    renderer.handle({
      type: "tool_call_end",
      callId: "c1",
      name: "bash",
      isError: true,
      durationMs: 1,
      outputBytes: 193,
      preview:
        "Permission denied: the user declined bash; do not retry the same call, ask the user how to go on",
    } as never);
    renderer.handle({
      type: "item_committed",
      item: { type: "tool_result", callId: "c1", output: "denied", isError: true },
    } as never);
    const rows = text.split("\n").slice(1, -1);
    const summary = rows.filter((r) => !r.startsWith("• "));
    for (const row of summary) expect(row.length).toBeLessThan(40);
    expect(summary[0]).toMatch(/^✗ bash /);
    for (const row of summary.slice(1)) expect(row).toMatch(/^ {2}\S/);
    // Every word whole: joined again, the rows give the words in order.
    const words = summary.join(" ").split(/\s+/).filter(Boolean);
    for (const word of [...command.split(" "), "193", "B", "declined", "retry"])
      expect(words).toContain(word);
  });
});

describe("Renderer.hanging", () => {
  it("wraps the text after its head at spaces, further lines under the text's column, as wide as the terminal allows", async () => {
    const { Renderer } = await import("../src/ui/renderer.ts");
    const render = (columns: number | undefined) => {
      let text = "";
      const renderer = new Renderer({
        out: { write: (chunk: string) => (text += chunk), columns, isTTY: true },
        style: createStyle(false),
        animate: false,
        window: 0,
        provider: { provider: "anthropic" },
      });
      renderer.hanging("/init [focus]", "ask the model to write AGENTS.md (project instructions)", 15);
      renderer.hanging("", "a line without a head that is long", 0);
      return text;
    };
    expect(render(40)).toBe(
      "/init [focus]  ask the model to write\n               AGENTS.md (project\n               instructions)\na line without a head that is long\n",
    );
    // Wide enough, or no width known (not a terminal): one line each.
    expect(render(undefined)).toBe(
      "/init [focus]  ask the model to write AGENTS.md (project instructions)\na line without a head that is long\n",
    );
  });
});

describe("Renderer while Markdown streams", () => {
  it("shows a block the Markdown renderer fails on as its text, and says so once", async () => {
    const { Renderer } = await import("../src/ui/renderer.ts");
    let text = "";
    const renderer = new Renderer({
      out: {
        write: (chunk: string) => {
          text += chunk;
        },
        columns: 80,
        isTTY: true,
      },
      style: createStyle(false),
      animate: false,
      window: 0,
      provider: { provider: "anthropic" },
    });
    renderer.rich = {
      ...rich,
      renderTokens: () => {
        throw new Error("layout \x1b[31mbroke\nRequire stack:\n- /somewhere");
      },
    };
    const delta = (t: string) =>
      renderer.handle({ type: "text_delta", text: t, turnIndex: 0, blockIndex: 0 } as never);
    // The failure comes while "Thi" is still pending: the answer stays in order, and the note waits for its end.
    delta("First **block**.\n\nSecond block.\n\nThi");
    delta("rd.");
    renderer.handle({ type: "run_end", result: { status: "completed" } } as never);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const at = (part: string) => text.indexOf(part);
    expect(at("First **block**.")).toBeGreaterThanOrEqual(0);
    expect(at("Second block.")).toBeGreaterThan(at("First **block**."));
    expect(at("Third.")).toBeGreaterThan(at("Second block."));
    expect(at("Markdown could not be rendered")).toBeGreaterThan(at("Third."));
    expect(text.split("Markdown could not be rendered").length).toBe(2);
    expect(text).toContain("(layout ");
    expect(text).not.toContain("\x1b[31m");
    expect(text).not.toContain("Require stack");
  });

  it("previews a block still being written on live lines, rendered and wrapped, then prints it", async () => {
    const { Renderer } = await import("../src/ui/renderer.ts");
    let text = "";
    let writes = 0;
    const renderer = new Renderer({
      out: {
        write: (chunk: string) => {
          writes++;
          text += chunk;
        },
        columns: 80,
        isTTY: true,
      },
      style: createStyle(true),
      animate: true,
      window: 0,
      provider: { provider: "anthropic" },
    });
    renderer.rich = rich;
    const delta = (t: string) =>
      renderer.handle({ type: "text_delta", text: t, turnIndex: 0, blockIndex: 0 } as never);
    delta("A **long** para");
    // The preview is the block as it will be printed: rendered, not the Markdown source.
    expect(stripVTControlCharacters(text)).toContain("A long para");
    expect(text).not.toContain("**");
    const before = text.length;
    const writesBefore = writes;
    delta("graph.\n\nNext");
    delta(" more.\n\nAnd");
    // Finished blocks wait for the next frame (within 80 ms), which writes them rendered and the
    // preview of what is still pending under them, in one write.
    expect(text.length).toBe(before);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const after = stripVTControlCharacters(text.slice(before));
    expect(after).toMatch(/^A long paragraph\.\n\nNext more\.\n\nAnd\n$/);
    expect(after).not.toContain("**");
    expect(writes - writesBefore).toBe(1);
    // A paragraph longer than the line is previewed on several lines, wrapped at spaces.
    const start = text.length;
    delta(" and then a sentence that goes on and on, longer than the eighty columns of this terminal");
    // The live region's timer draws it (every 80 ms).
    await new Promise((resolve) => setTimeout(resolve, 250));
    const preview = stripVTControlCharacters(text.slice(start))
      .split("\n")
      .filter((l) => l.trim() !== "");
    expect(preview.length).toBeGreaterThanOrEqual(2);
    for (const line of preview) expect(line.length).toBeLessThan(80);
    expect(preview.join(" ")).toContain("the eighty columns of this terminal");
    renderer.dispose();
  });
});

describe("streamed text taken in once a frame", () => {
  it("filters and lays out the deltas of a frame together, masks a key split over them, and shows them before anything else", async () => {
    const { Renderer } = await import("../src/ui/renderer.ts");
    const { createStreamTextRedaction } = await import("@yoi/pod");
    let text = "";
    const filter = createStreamTextRedaction();
    const seen: string[] = [];
    const renderer = new Renderer({
      out: {
        write: (chunk: string) => {
          text += chunk;
        },
        columns: 80,
        rows: 24,
        isTTY: true,
      },
      style: createStyle(false),
      animate: true,
      window: 0,
      provider: { provider: "anthropic" },
      redact: (event) => {
        seen.push(event.type);
        return filter(event);
      },
    });
    renderer.rich = rich;
    const delta = (t: string) => renderer.handle({ type: "text_delta", text: t, turnIndex: 0 });
    // Nothing on the live lines, no frames: the first delta is shown at once (and starts the preview).
    delta("The key is ");
    expect(seen).toEqual(["text_delta"]);
    for (const piece of ["sk-ant-api03-", "abcdefghij", "klmnopqrstuvwxyz0123 and ", "more.\n\nNext"])
      delta(piece);
    // While frames are drawn, deltas wait for the next one.
    expect(seen).toEqual(["text_delta"]);
    await new Promise((resolve) => setTimeout(resolve, 250));
    // One pass through the filter for the four deltas.
    expect(seen).toEqual(["text_delta", "text_delta"]);
    const shown = stripVTControlCharacters(text);
    expect(shown).toContain("The key is");
    expect(shown).toContain("and more.");
    expect(shown).not.toMatch(/abcdefghij|klmnop/);
    // Text held for a frame goes out before a line printed in between, in order.
    delta(" after!");
    renderer.line("a line");
    await new Promise((resolve) => setTimeout(resolve, 250));
    const after = stripVTControlCharacters(text);
    expect(after.indexOf("Next after!")).toBeGreaterThan(-1);
    expect(after.indexOf("Next after!")).toBeLessThan(after.indexOf("a line"));
    // ... and before any other event.
    delta("Last words.");
    renderer.handle({
      type: "tool_call_start",
      callId: "c1",
      name: "read_file",
      args: { path: "a.ts" },
      startedAt: Date.now(),
      turnIndex: 0,
    } as never);
    expect(seen.slice(-2)).toEqual(["text_delta", "tool_call_start"]);
    renderer.dispose();
  });
});

describe("LiveRegion frames", () => {
  it("a frame after the terminal narrowed, before Node's resize event, clears the rows the terminal re-flowed", async () => {
    const written: string[] = [];
    // The terminal's width, and what Node last read of it (until it asks again, as on SIGWINCH).
    let terminal = 120;
    const out = {
      write: (t: string) => written.push(t),
      columns: 120,
      rows: 30,
      _refreshSize() {
        if (terminal === out.columns) return;
        out.columns = terminal;
        region.resized(); // the stream's resize event, as the interactive session handles it
      },
    };
    const region = new LiveRegion(out, true);
    // 18 columns: one row at 120, two once the terminal re-flows it at 16.
    region.set("bash", (frame) => `${frame} bash sleep 90 12s`);
    terminal = 16;
    const before = written.length;
    await new Promise((resolve) => setTimeout(resolve, 150));
    const after = written.slice(before).join("");
    // Both of its rows are cleared (up 2), never just the one the old width gives (up 1).
    expect(after).toContain("\x1b[2F\x1b[J");
    expect(after).not.toContain("\x1b[1F");
    expect(stripVTControlCharacters(after)).toMatch(/bash sleep 9…\n$/);
    region.dispose();
  });

  it("writes text printed while it is on screen with the next frame, and all of it before a question or at the end", async () => {
    const written: string[] = [];
    const region = new LiveRegion({ write: (t: string) => written.push(t), columns: 80, rows: 24 }, true);
    region.set("spinner", (frame) => `${frame} working`);
    const drawn = written.length;
    region.print("one\n");
    region.print("two\n");
    expect(written.length).toBe(drawn);
    await new Promise((resolve) => setTimeout(resolve, 150));
    // One write: the region cleared, both lines, the region again.
    const frame = written.slice(drawn);
    expect(frame.length).toBeGreaterThanOrEqual(1);
    expect(stripVTControlCharacters(frame[0] ?? "")).toMatch(/^one\ntwo\n\S working\n$/);
    // A question clears the region: what waits goes out first, and text printed then goes out at once.
    region.print("three\n");
    region.suspend();
    expect(stripVTControlCharacters(written.join(""))).toMatch(/three\n$/);
    region.print("asked\n");
    expect(written.at(-1)).toBe("asked\n");
    // While the question waits, the region stays off the screen: no frame draws it, nor a change.
    const asked = written.length;
    region.set("other", () => "another call");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(written.length).toBe(asked);
    region.resume();
    expect(stripVTControlCharacters(written.at(-1) ?? "")).toMatch(/working\nanother call\n$/);
    region.print("four\n");
    region.dispose();
    const all = stripVTControlCharacters(written.join(""));
    expect(all.indexOf("four\n")).toBeGreaterThan(all.indexOf("asked\n"));
    expect(all).toMatch(/four\n$/);
    // Disposed with nothing left to draw: text goes out at once.
    region.print("after\n");
    expect(written.at(-1)).toBe("after\n");
  });
});

describe("PromptHistory", () => {
  it("keeps prompts per project in one private file and skips a torn line", async () => {
    const { mkdtemp, readFile, stat, appendFile } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const path = await import("node:path");
    const { PromptHistory } = await import("../src/ui/prompt-history.ts");
    const dir = await mkdtemp(path.join(tmpdir(), "yoi-history-"));
    const file = path.join(dir, ".yoi", "history");
    const a = await PromptHistory.load(file, "/p/a");
    a.add("first\nsecond line");
    a.add("again");
    a.add("again"); // a repeat of the last one is not recorded twice
    await a.flush();
    const b = await PromptHistory.load(file, "/p/b");
    b.add("other project");
    await b.flush();
    await appendFile(file, '{"project":"/p/a","te'); // a crash mid-write
    const reloaded = await PromptHistory.load(file, "/p/a");
    expect(reloaded.entries).toEqual(["first\nsecond line", "again"]);
    // The next prompt after the torn line is not glued to it.
    reloaded.add("after the crash");
    await reloaded.flush();
    expect((await PromptHistory.load(file, "/p/a")).entries).toEqual([
      "first\nsecond line",
      "again",
      "after the crash",
    ]);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, "utf8")).split("\n").filter((l) => l.includes('"project"')).length).toBe(5);
  });

  it("writes a pasted key masked, as the session log does, and recalls it as typed in the same session", async () => {
    const { mkdtemp, readFile } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const path = await import("node:path");
    const { PromptHistory } = await import("../src/ui/prompt-history.ts");
    const file = path.join(await mkdtemp(path.join(tmpdir(), "yoi-history-")), "history");
    const history = await PromptHistory.load(file, "/p/a");
    const key = "sk-ant-api03-pastedKey4f1b2c3d";
    history.add(`set ANTHROPIC_API_KEY=${key} in the .env`);
    await history.flush();
    expect(history.entries).toEqual([`set ANTHROPIC_API_KEY=${key} in the .env`]);
    expect(await readFile(file, "utf8")).not.toContain(key);
    expect((await PromptHistory.load(file, "/p/a")).entries).toEqual([
      "set ANTHROPIC_API_KEY=<redacted> in the .env",
    ]);
  });
});

describe("the todo checklist", () => {
  it("given a width, goes on over more lines under an item's text, its words whole", async () => {
    const { todoLines } = await import("../src/ui/todo-view.ts");
    const todos = [
      {
        content: "write a test for the add function that also covers negative numbers",
        status: "in_progress",
      },
      { content: "run it", status: "pending" },
    ] as const;
    const style = createStyle(false);
    expect(todoLines(todos, style, 39)).toEqual([
      "☰ todos 0/2",
      "  ▶ write a test for the add function\n    that also covers negative numbers",
      "  ○ run it",
    ]);
    // Without one (the live region cuts each line where it is shown), an item is one line.
    expect(todoLines(todos, style)[1]).toBe(`  ▶ ${todos[0].content}`);
  });
});

describe("the plan question", () => {
  it("lays the plan out as an answer is: rendered (without colour, as NO_COLOR shows it), words whole, two columns in", async () => {
    const { planQuestion } = await import("../src/ui/plan-question.ts");
    const plan =
      "## Plan\n\n1. Add **types** to the add function in src/math.ts so that callers get checked arguments\n2. Test it";
    const request = { args: { plan } } as unknown as Parameters<typeof planQuestion>[0];
    const style = createStyle(false);
    const { lines } = planQuestion(request, style, rich, { columns: 40, rows: 40 });
    expect(lines).toEqual([
      "? the plan (exit plan mode and carry it",
      "out?)",
      "  ## Plan",
      "",
      "  1. Add types to the add function in",
      "     src/math.ts so that callers get",
      "     checked arguments",
      "  2. Test it",
    ]);
    // Before the renderer is loaded: the text, its words wrapped.
    const plain = planQuestion(request, style, undefined, { columns: 40, rows: 40 }).lines;
    for (const line of plain) expect(line.length).toBeLessThanOrEqual(39);
    expect(plain).toContain("  1. Add **types** to the add function");
  });
});
