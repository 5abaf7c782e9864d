/**
 * The docs check bites: each case builds a small repository in a temporary
 * directory (a docs page, a package with sources, tests and a README),
 * plants one violation and runs the real check over it. The word the check
 * looks for is built at run time, so this file does not trip it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkDocs, headingAnchor, markdownAnchors } from "./check-docs.ts";

const word = "seed";
/** The page the planted repository has, and one it lacks. */
const page = ["docs", "design", "context-management.md"].join("/");
const missing = ["docs", "design", "compaction.md"].join("/");
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

const PAGE = `# Context management

## The tool output cache

### Trimming

\`\`\`
## not a heading (inside a fence)
\`\`\`

## \`@path\` refs, alerts and \`continue_with\`
`;

/** A clean repository plus `files` (path -> content); returns the check's violations. */
function check(files: Record<string, string> = {}): string[] {
  const root = mkdtempSync(join(tmpdir(), "check-docs-"));
  roots.push(root);
  const all: Record<string, string> = {
    [page]: PAGE,
    "docs/README.md": "See [the page](design/context-management.md#trimming).\n",
    "packages/p/src/trim.ts": `/** Trims (${page}#trimming). */\nexport const x = 1;\n`,
    "packages/p/README.md": "[design](../../docs/design/context-management.md#the-tool-output-cache)\n",
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return checkDocs(["packages", "docs"], root).violations;
}

describe("check-docs", () => {
  it("passes on the repository as it is", () => {
    expect(checkDocs().violations).toEqual([]);
  });

  it("passes on the clean planted repository", () => {
    expect(check()).toEqual([]);
  });

  it.each([
    ["a comment", "packages/p/src/a.ts", `// see ${word} 001\nexport {};\n`],
    ["a bracketed citation", "packages/p/src/a.ts", `/** Runs a batch (${word} 003). */\nexport {};\n`],
    ["a hyphenated one", "packages/p/test/a.test.ts", `it("uses the ${word}-000 layout", () => {});\n`],
    ["a capitalised one with a section", "packages/p/src/a.ts", `// ${word.toUpperCase()} 004 2.4: strict\n`],
    ["a plural with two numbers", "packages/p/README.md", `Defaults of ${word}s 000/001.\n`],
    [
      "one split by a comment's line break",
      "packages/p/src/a.ts",
      `/**\n * whole (${word}\n * 000) unless\n */\n`,
    ],
    ["a possessive", "packages/p/src/a.ts", `/** Items (${word} 001's stash). */\n`],
  ])("fails on %s", (_, path, text) => {
    const violations = check({ [path]: text });
    expect(violations).toHaveLength(1);
    expect(violations[0]).toContain(`${path}:`);
    expect(violations[0]).toContain("outside document's number");
  });

  it("fails on a test named after a number", () => {
    const violations = check({ [`packages/p/test/${word}-001.test.ts`]: "export {};\n" });
    expect(violations.join("\n")).toMatch(/the file name cites/);
  });

  it("leaves other uses of the word alone", () => {
    expect(
      check({
        "packages/p/src/a.ts": [
          `export function signature(${word}: string) { return ${word}; }`,
          `const rng = { ${word}: 0 };`,
          `// a random ${word} 42 and ${word} 0005`,
          `const text = "${word}"; // stored first`,
        ].join("\n"),
      }),
    ).toEqual([]);
  });

  it("fails on a code pointer to a page that does not exist", () => {
    const violations = check({ "packages/p/src/a.ts": `// ${missing}#trimming\n` });
    expect(violations.join("\n")).toContain(`${missing}#trimming leads nowhere`);
  });

  it("fails on a code pointer to a section the page does not have, and names the sections it has", () => {
    const violations = check({ "packages/p/src/a.ts": `// ${page}#budget\n` });
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatch(/has no section "#budget"/);
    expect(violations[0]).toContain("#trimming");
  });

  it("fails on a README link with the wrong number of ../", () => {
    const violations = check({ "packages/p/README.md": "[design](../docs/design/context-management.md)\n" });
    expect(violations.join("\n")).toMatch(
      /README\.md:1: \.\.\/docs\/design\/context-management\.md leads nowhere/,
    );
  });

  it("fails on a link between docs pages to a missing section, and on a missing same-page section", () => {
    const violations = check({
      "docs/README.md": "[a](design/context-management.md#gc)\n\n## Here\n\n[b](#there) [c](#here)\n",
    });
    expect(violations).toHaveLength(2);
    expect(violations.join("\n")).toMatch(/#gc/);
    expect(violations.join("\n")).toMatch(/#there/);
  });

  it("does not follow URLs", () => {
    expect(check({ "docs/README.md": "[x](https://example.com/docs/nowhere.md#x)\n" })).toEqual([]);
  });
});

describe("heading anchors", () => {
  it("are made the way GitHub makes them", () => {
    expect(headingAnchor("The strict context limit")).toBe("the-strict-context-limit");
    expect(headingAnchor("`@path` refs, alerts and `continue_with`")).toBe(
      "path-refs-alerts-and-continue_with",
    );
    expect(headingAnchor("Kinds, handlers and scopes")).toBe("kinds-handlers-and-scopes");
  });

  it("skip fenced code and number repeats", () => {
    expect([...markdownAnchors("# A\n```\n# B\n```\n# A\n")]).toEqual(["a", "a-1"]);
  });
});
