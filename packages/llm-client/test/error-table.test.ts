/**
 * The README's error tables are the code's: every code with its retried
 * column, and every HTTP status with its code. A change to either side
 * without the other fails here.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ANTHROPIC_ERRORS } from "../src/adapters/anthropic/errors.ts";
import { classifyWithTable, codeForStatus, STATUS_CODES } from "../src/adapters/classify.ts";
import { GEMINI_ERRORS } from "../src/adapters/gemini/errors.ts";
import { openAIErrorTable } from "../src/adapters/openai-chat/errors.ts";
import { LlmError, type LlmErrorCode } from "../src/errors.ts";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

/** Rows of the markdown table whose header row starts with `| first |`. */
function table(first: string): string[][] {
  const lines = readme.split("\n");
  const start = lines.findIndex((l) => l.startsWith(`| ${first} |`));
  expect(start, `README has a table starting with "| ${first} |"`).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .slice(1, -1)
        .split("|")
        .map((c) => c.trim().replace(/`/g, "")),
    );
  }
  return rows;
}

const ALL_CODES: LlmErrorCode[] = [
  "auth",
  "rate_limit",
  "overloaded",
  "context_overflow",
  "invalid_request",
  "server",
  "network",
  "timeout",
  "aborted",
  "incomplete_stream",
  "parse",
  "content_filter",
  "config",
];

describe("README error tables", () => {
  it("lists every code once, with whether it is retried", () => {
    const rows = table("code");
    expect(rows.map((r) => r[0]).sort()).toEqual([...ALL_CODES].sort());
    for (const [code, , retried] of rows) {
      expect(new LlmError(code as LlmErrorCode, "x").retryable ? "yes" : "no", code).toBe(retried);
    }
  });

  it("maps each HTTP status as the classifier does", () => {
    const rows = table("status");
    expect(rows.map((r) => Number(r[0]))).toEqual(Object.keys(STATUS_CODES).map(Number));
    for (const [status, code] of rows) expect(codeForStatus(Number(status)), `HTTP ${status}`).toBe(code);
    for (const t of [ANTHROPIC_ERRORS, GEMINI_ERRORS, openAIErrorTable("openai-chat")]) {
      for (const [status, code] of rows) {
        expect(classifyWithTable(t, { status: Number(status), message: "no details" }).code).toBe(code);
      }
    }
  });

  it("a body type refines a generic status but not a specific one", () => {
    const openai = openAIErrorTable("openai-chat");
    expect(
      classifyWithTable(openai, { status: 400, types: ["context_length_exceeded"], message: "x" }).code,
    ).toBe("context_overflow");
    expect(classifyWithTable(openai, { status: 503, types: ["server_error"], message: "x" }).code).toBe(
      "overloaded",
    );
    const quota = classifyWithTable(openai, { status: 429, types: ["insufficient_quota"], message: "x" });
    expect([quota.code, quota.retryable]).toEqual(["rate_limit", false]);
    expect(classifyWithTable(ANTHROPIC_ERRORS, { types: ["overloaded_error"], message: "x" }).code).toBe(
      "overloaded",
    );
    expect(
      classifyWithTable(GEMINI_ERRORS, { status: 400, types: ["API_KEY_INVALID"], message: "x" }).code,
    ).toBe("auth");
  });
});
