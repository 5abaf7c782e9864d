import { describe, expect, it } from "vitest";
import { createInspectTool } from "../src/inspect-tool.ts";
import { createMemoryBlobStore } from "../src/testing/memory-blob-store.ts";
import { ToolError, type ToolExecutionContext } from "../src/tool.ts";

const ctx: ToolExecutionContext = {
  callId: "c1",
  batchId: "b1",
  callIndex: 0,
  batchSize: 1,
  turnIndex: 0,
  signal: new AbortController().signal,
};

async function setup() {
  const store = createMemoryBlobStore();
  const tool = createInspectTool(store, { maxOutputBytes: 16 * 1024 });
  const text = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join("\n");
  const textId = await store.store({ kind: "text", text });
  const arrayId = await store.store({
    kind: "structured",
    value: Array.from({ length: 30 }, (_, i) => ({ i })),
  });
  const objectId = await store.store({ kind: "structured", value: { results: [1, 2], name: "x", total: 2 } });
  const call = async (blob_id: string, selector?: string) => {
    const input = tool.inputSchema.parse(selector === undefined ? { blob_id } : { blob_id, selector });
    return tool.execute(input, ctx) as Promise<string>;
  };
  const fails = async (blob_id: string, selector?: string) => {
    try {
      await call(blob_id, selector);
    } catch (error) {
      expect(error).toBeInstanceOf(ToolError);
      return (error as Error).message;
    }
    throw new Error("expected inspect to fail");
  };
  return { store, tool, textId, arrayId, objectId, call, fails };
}

describe("inspect", () => {
  it("without a selector gives meta information and the first part", async () => {
    const { call, textId, arrayId, objectId } = await setup();
    const text = await call(textId);
    expect(text).toMatch(
      new RegExp(`^blob ${textId}: text, 100 lines, \\d+ bytes\\n── lines 1-40 ──\\nline 1\\n`),
    );
    expect(text).toContain("line 40\n(use selector lines:41-80 to read on; 100 lines in all)");
    expect(text).not.toContain("line 41\n");
    const array = await call(arrayId);
    expect(array).toContain(`blob ${arrayId}: json_array, 30 entries`);
    expect(array).toContain('[0] {"i":0}');
    expect(array).toContain("slice:5..25");
    const object = await call(objectId);
    expect(object).toBe(
      `blob ${objectId}: json_object, 3 keys\n── keys ──\nresults: array(2 entries)\nname: string(1 bytes)\ntotal: number\n(use selector key:<name> to read one value)`,
    );
  });

  it("lines:A-B is 1-based and inclusive", async () => {
    const { call, textId } = await setup();
    expect(await call(textId, "lines:20-22")).toBe(
      `blob ${textId}: lines 20-22 of 100\nline 20\nline 21\nline 22`,
    );
    expect(await call(textId, "lines:100-100")).toBe(`blob ${textId}: lines 100-100 of 100\nline 100`);
  });

  it("slice:A..B is 0-based with B exclusive", async () => {
    const { call, arrayId } = await setup();
    expect(await call(arrayId, "slice:3..5")).toBe(
      `blob ${arrayId}: entries 3..5 of 30\n[3] {"i":3}\n[4] {"i":4}`,
    );
  });

  it("key:name returns the value", async () => {
    const { call, objectId } = await setup();
    expect(await call(objectId, "key:results")).toBe(
      `blob ${objectId}: key results (array(2 entries))\n[\n  1,\n  2\n]`,
    );
  });

  it("accepts the id as copied from the [blob:<id>] marker", async () => {
    const { call, textId } = await setup();
    expect(await call(`[blob:${textId}]`, "lines:1-1")).toContain("line 1");
  });

  it("a selector of the wrong kind says which one applies", async () => {
    const { fails, textId, arrayId, objectId } = await setup();
    expect(await fails(textId, "slice:0..2")).toMatch(
      /does not apply .* it is text with 100 lines; use lines:1-40/,
    );
    expect(await fails(textId, "key:a")).toMatch(/use lines:/);
    expect(await fails(arrayId, "lines:1-2")).toMatch(/it is a json_array with 30 entries; use slice:0..10/);
    expect(await fails(objectId, "slice:0..1")).toMatch(
      /json_object; use key:<name> with one of: results, name, total/,
    );
  });

  it("out-of-bounds ranges say what the bounds are", async () => {
    const { fails, textId, arrayId } = await setup();
    expect(await fails(textId, "lines:101-120")).toMatch(/has 100 lines\. Use a range within 1-100/);
    expect(await fails(textId, "lines:90-120")).toMatch(/Use lines:90-100/);
    expect(await fails(textId, "lines:0-5")).toMatch(/numbered from 1/);
    expect(await fails(textId, "lines:9-3")).toMatch(/must not exceed/);
    expect(await fails(arrayId, "slice:25..40")).toMatch(/has 30 entries .* within 0..30/);
    expect(await fails(arrayId, "slice:5..5")).toMatch(/B is exclusive/);
  });

  it("a missing key lists the available keys", async () => {
    const { fails, objectId } = await setup();
    expect(await fails(objectId, "key:resluts")).toBe(
      `Blob ${objectId} has no key "resluts". Available keys: results, name, total.`,
    );
  });

  it("malformed and unknown selectors show the syntax", async () => {
    const { fails, textId, arrayId } = await setup();
    expect(await fails(textId, "lines:a-b")).toMatch(/Write lines:A-B/);
    expect(await fails(arrayId, "slice:1-3")).toMatch(/Write slice:A\.\.B/);
    expect(await fails(textId, "grep:foo")).toMatch(
      /Unknown selector "grep:foo"\. Use lines:A-B .* slice:A\.\.B .* key:NAME/,
    );
  });

  it("an unknown or malformed id tells the model where ids come from", async () => {
    const { fails } = await setup();
    expect(await fails("0190a5b2-0000-7000-8000-000000000000")).toMatch(
      /No stored output has id .* \[blob:<id>\]/,
    );
    expect(await fails("not-an-id")).toMatch(/is not a blob id.*\[blob:<id>\]/);
  });

  it("caps a large selection with a note to narrow it", async () => {
    const store = createMemoryBlobStore();
    const tool = createInspectTool(store, { maxOutputBytes: 500 });
    const id = await store.store({
      kind: "text",
      text: Array.from({ length: 1000 }, (_, i) => `line ${i}`).join("\n"),
    });
    const out = (await tool.execute({ blob_id: id, selector: "lines:1-1000" }, ctx)) as string;
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(500);
    expect(out).toMatch(/truncated at 500 of \d+ bytes; select a smaller range/);
  });
});
