/**
 * The session log never stores a secret yoi knows of: a registered key or
 * header value, or credentials in a URL, written in any record field, are
 * redacted on disk (the one redactor of @yoi/llm-client).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clearRegisteredSecrets, registerClientSecrets } from "@yoi/llm-client";
import { afterEach, describe, expect, it } from "vitest";
import { createSession } from "../src/index.ts";

const dirs: string[] = [];
afterEach(async () => {
  clearRegisteredSecrets();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe("session log redaction", () => {
  it("redacts registered header values and URL credentials in every record", async () => {
    const dir = mkdtempSync(join(tmpdir(), "yoi-session-redact-"));
    dirs.push(dir);
    registerClientSecrets({ headers: { "x-gw": "gw-header-secret-99" } });
    const log = await createSession({ dir, model: "m", cwd: "/repo" });
    await log.userInput("my token is gw-header-secret-99 and the proxy is https://u:pw-12345@proxy/v1");
    await log.close();
    const text = readFileSync(log.path, "utf8");
    expect(text).not.toContain("gw-header-secret-99");
    expect(text).not.toContain("pw-12345");
    expect(text).toContain("my token is <redacted>");
  });
});
