import { describe, expect, it } from "vitest";
import { fileRefs, flattenSegments, parseSegments } from "../src/input/segments.ts";

describe("parseSegments", () => {
  it("splits text and @path refs", () => {
    expect(parseSegments("explain @src/a.ts please")).toEqual([
      { type: "text", text: "explain " },
      { type: "file_ref", path: "src/a.ts" },
      { type: "text", text: " please" },
    ]);
  });

  it("takes a ref at the start and the end of input", () => {
    expect(parseSegments("@a.ts")).toEqual([{ type: "file_ref", path: "a.ts" }]);
    expect(fileRefs(parseSegments("@a.ts and @b.ts"))).toEqual(["a.ts", "b.ts"]);
  });

  it("quoted paths keep spaces and escapes", () => {
    expect(parseSegments('read @"my docs/notes v2.md" now')).toEqual([
      { type: "text", text: "read " },
      { type: "file_ref", path: "my docs/notes v2.md" },
      { type: "text", text: " now" },
    ]);
    expect(fileRefs(parseSegments('@"a \\"q\\".txt"'))).toEqual(['a "q".txt']);
  });

  it("an unclosed quote is text", () => {
    expect(parseSegments('@"oops no close')).toEqual([{ type: "text", text: '@"oops no close' }]);
  });

  it("\\@ is a literal @", () => {
    expect(parseSegments("mention \\@team here")).toEqual([{ type: "text", text: "mention @team here" }]);
  });

  it("no ref inside an e-mail address or a word", () => {
    expect(parseSegments("mail a@b.com or user@host:path")).toEqual([
      { type: "text", text: "mail a@b.com or user@host:path" },
    ]);
  });

  it("trailing punctuation ends a sentence, not the path", () => {
    expect(fileRefs(parseSegments("see @src/a.ts."))).toEqual(["src/a.ts"]);
    expect(fileRefs(parseSegments("see @src/a.ts, @b.md; @c.txt: @d!"))).toEqual([
      "src/a.ts",
      "b.md",
      "c.txt",
      "d",
    ]);
    expect(fileRefs(parseSegments("(see @src/a.ts)"))).toEqual(["src/a.ts"]);
    expect(fileRefs(parseSegments("@app/(auth)/page.tsx"))).toEqual(["app/(auth)/page.tsx"]);
    expect(fileRefs(parseSegments("`@x.ts`"))).toEqual(["x.ts"]);
    expect(flattenSegments(parseSegments("see @src/a.ts."))).toBe("see [unresolved file ref: src/a.ts].");
  });

  it("a bare @ is text", () => {
    expect(parseSegments("a @ b @.")).toEqual([{ type: "text", text: "a @ b @." }]);
  });

  it("relative and dotted paths", () => {
    expect(fileRefs(parseSegments("@../x/y.ts @./z @.env"))).toEqual(["../x/y.ts", "./z", ".env"]);
  });
});

describe("flattenSegments", () => {
  it("writes each ref as the unresolved-ref placeholder", () => {
    const segments = parseSegments('compare @a.ts with @"b c.ts"');
    expect(flattenSegments(segments)).toBe(
      "compare [unresolved file ref: a.ts] with [unresolved file ref: b c.ts]",
    );
  });
});
