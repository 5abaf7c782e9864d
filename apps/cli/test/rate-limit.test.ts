/**
 * A rate limit that resets later than yoi waits by itself, on the shipped
 * bundle: print mode exits 75 with the reset time (stderr and the JSON
 * result), from a retry-after or from the providers' reset headers; the
 * interactive session offers to wait, counts down and goes on by itself,
 * and Esc stops the wait.
 */
import { mkdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, jsonLines, runYoi, tempWorld } from "./helpers.ts";
import { TmuxSession, waitForFile, yoiCommand } from "./tmux.ts";

const sessions: TmuxSession[] = [];
const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  for (const s of servers.splice(0)) await s.close();
});

const PROMPT = /^(?:\S+ )?›\s*$/m;

describe("print mode: a rate limit beyond the retry budget", () => {
  it("exits 75 with the reset time on stderr and in the JSON result (retry-after)", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "error", status: 429, headers: { "retry-after": "600" }, message: "rate limited" }],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const before = Date.now();
    const result = await runYoi(["-p", "--output", "json", "-m", "anthropic/claude-haiku-4-5", "hi"], {
      cwd: project,
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL, TZ: "UTC" }),
    });
    expect(result.code).toBe(75);
    expect(server.requests).toHaveLength(1);
    expect(result.stderr).toMatch(
      /anthropic is rate limiting this key \(HTTP 429\) until \d\d:\d\d:\d\d \(in (9m 5\ds|10m 0s)\).*\(yoi -c\)/,
    );
    const [line] = jsonLines(result.stdout);
    const error = line?.error as { code: string; reset_at: string };
    expect(error.code).toBe("rate_limit");
    const reset = Date.parse(error.reset_at);
    expect(reset).toBeGreaterThanOrEqual(before + 600_000 - 1000);
    expect(reset).toBeLessThanOrEqual(Date.now() + 600_000 + 1000);
  });

  it("reads OpenAI's x-ratelimit-reset headers when there is no retry-after", async () => {
    const server = await startScriptedServer({
      provider: "openai-responses",
      script: [
        {
          type: "error",
          status: 429,
          headers: { "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "6m0s" },
          message: "tokens per minute exceeded",
        },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const result = await runYoi(["-p", "-m", "openai/gpt-5-mini", "hi"], {
      cwd: project,
      env: cleanEnv(home, { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.baseURL }),
    });
    expect(result.code).toBe(75);
    expect(result.stderr).toMatch(/until \d\d:\d\d:\d\d \(in (5m 5\ds|6m 0s)\)/);
  });

  it("a rate limit within the budget is still waited for and retried (exit 0)", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        { type: "error", status: 429, headers: { "retry-after": "1" } },
        { type: "reply", text: "Fine after all." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const result = await runYoi(["-p", "-m", "anthropic/claude-haiku-4-5", "hi"], {
      cwd: project,
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL }),
    });
    expect(result).toMatchObject({ code: 0, stdout: "Fine after all.\n" });
  });
});

describe.skipIf(!TmuxSession.available())("interactive: wait for the reset and go on (tmux)", () => {
  it("offers to wait, counts down, goes on by itself; Esc stops a wait", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        { type: "error", status: 429, headers: { "retry-after": "3" }, message: "rate limited" },
        { type: "reply", text: "Back after the limit." },
        { type: "error", status: 429, headers: { "retry-after": "300" }, message: "rate limited" },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    // yoi waits at most 0.5 s by itself here, so a 3 s reset is beyond it.
    await mkdir(path.join(home, ".yoi"), { recursive: true });
    await writeFile(path.join(home, ".yoi", "config.jsonc"), '{ "retry": { "maxRetryAfterMs": 500 } }');
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor(PROMPT);
    tty.type("go");
    tty.keys("Enter");
    await tty.waitFor(/wait until the limit resets at \d\d:\d\d:\d\d \(in \ds\) and go on by itself\?/);
    expect(tty.screen()).toMatch(/rate limiting this key \(HTTP 429\) until \d\d:\d\d:\d\d/);
    tty.type("y");
    await tty.waitFor(/waiting for the rate limit to reset: \ds left/);
    await tty.waitFor("the rate limit has reset; going on");
    await tty.waitFor("Back after the limit.");
    await tty.waitFor(PROMPT);
    expect(server.requests).toHaveLength(2);

    tty.type("again");
    tty.keys("Enter");
    await tty.waitFor(/wait until the limit resets at \d\d:\d\d:\d\d \(in (4m 5\ds|5m 0s)\)/);
    tty.type("y");
    await tty.waitFor(/waiting for the rate limit to reset: (4m 5\ds|5m 0s) left/);
    tty.keys("Escape");
    await tty.waitFor("⊘ stopped waiting for the rate limit");
    await tty.waitFor(PROMPT);
    expect(server.requests).toHaveLength(3);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 180_000);
});
