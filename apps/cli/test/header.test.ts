import { describe, expect, it } from "vitest";
import { createStyle } from "../src/style.ts";
import { visibleWidth } from "../src/text-width.ts";
import { headerLine } from "../src/ui/header.ts";

const plain = createStyle(false);
const facts = {
  version: "1.2.3",
  model: "anthropic/claude-haiku-4-5",
  dir: "/home/someone/projects/a-rather-long-project-name",
  branch: "feature/env",
};

describe("the interactive header", () => {
  it("is whole when it fits, and whole when the width is not known", () => {
    const whole =
      "yoi 1.2.3 · anthropic/claude-haiku-4-5 · /home/someone/projects/a-rather-long-project-name · feature/env";
    expect(headerLine(facts, plain, 200)).toBe(whole);
    expect(headerLine(facts, plain, undefined)).toBe(whole);
  });

  it("has no branch part outside a repository", () => {
    expect(headerLine({ ...facts, branch: undefined }, plain, 200)).toBe(
      "yoi 1.2.3 · anthropic/claude-haiku-4-5 · /home/someone/projects/a-rather-long-project-name",
    );
  });

  it("cuts the directory's start first, keeping the folder and the branch", () => {
    const line = headerLine(facts, plain, 80);
    expect(visibleWidth(line)).toBe(80);
    expect(line).toBe("yoi 1.2.3 · anthropic/claude-haiku-4-5 · …rather-long-project-name · feature/env");
  });

  it("leaves the directory out when too little of it would show, then cuts the end", () => {
    expect(headerLine(facts, plain, 60)).toBe("yoi 1.2.3 · anthropic/claude-haiku-4-5 · feature/env");
    const narrow = headerLine(facts, plain, 30);
    expect(visibleWidth(narrow)).toBe(30);
    expect(narrow.endsWith("…")).toBe(true);
  });

  it("keeps a long branch name from taking the line, and fits with colours on", () => {
    const long = headerLine({ ...facts, branch: "b".repeat(80) }, plain, 200);
    expect(long).toContain(` · ${"b".repeat(31)}…`);
    const coloured = headerLine(facts, createStyle(true), 80);
    expect(visibleWidth(coloured)).toBeLessThanOrEqual(80);
    expect(coloured).toContain("feature/env");
  });

  it("shows a branch name's control characters harmlessly", () => {
    expect(headerLine({ ...facts, branch: "x\u001b[2Jy" }, plain, 200)).not.toContain("\u001b");
  });
});
