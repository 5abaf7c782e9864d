import { AlertBus, PermissionPolicy, toStreamJson } from "@yoi/pod";
import { describe, expect, it } from "vitest";
import { parseCommand } from "../src/args.ts";
import { CliError } from "../src/cli-error.ts";
import { describeAlert, describeError, describeFailure, scrub } from "../src/describe-error.ts";
import { groupDigits } from "../src/format-number.ts";
import { sandboxNotice } from "../src/permission-flags.ts";
import { colorEnabled } from "../src/style.ts";
import { truncate, visibleWidth } from "../src/text-width.ts";
import { shortArgs, toolSize } from "../src/ui/tool-summary.ts";

function usage(argv: string[]): string {
  try {
    parseCommand(argv);
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(2);
    return (error as CliError).message;
  }
  throw new Error(`no usage error for ${argv.join(" ")}`);
}

describe("parseCommand", () => {
  it("reads chat flags, subcommands and their arguments", () => {
    expect(parseCommand(["-p", "-o", "json", "-m", "openai/gpt-5", "hello", "world"])).toMatchObject({
      kind: "chat",
      print: true,
      output: "json",
      prompt: "hello world",
      flags: { model: "openai/gpt-5" },
    });
    expect(parseCommand(["inspect", "id-1", "lines:1-2"])).toEqual({
      kind: "inspect",
      flags: {},
      blobId: "id-1",
      selector: "lines:1-2",
    });
    expect(parseCommand(["debug", "replay", "--provider", "gemini", "f.txt"])).toEqual({
      kind: "replay",
      provider: "gemini",
      file: "f.txt",
    });
    expect(parseCommand(["-v"])).toEqual({ kind: "version" });
    expect(parseCommand(["sessions", "--help"])).toEqual({ kind: "help", topic: "sessions" });
  });

  it("takes a subcommand's name as the prompt in print mode or after --", () => {
    expect(usage(["-m", "openai/gpt-5", "sessions"])).toBe(
      '--model does not apply to yoi sessions; for the prompt "sessions", put -- before it (see yoi --help)',
    );
    expect(usage(["sessions", "-m", "openai/gpt-5"])).toBe(
      "--model does not apply to yoi sessions (see yoi --help)",
    );
    expect(parseCommand(["-p", "sessions"])).toMatchObject({ kind: "chat", print: true, prompt: "sessions" });
    expect(parseCommand(["config", "-p"])).toMatchObject({ kind: "chat", print: true, prompt: "config" });
    expect(parseCommand(["--", "help"])).toMatchObject({ kind: "chat", print: false, prompt: "help" });
    expect(parseCommand(["-m", "openai/gpt-5", "--", "config", "me"])).toMatchObject({
      kind: "chat",
      prompt: "config me",
      flags: { model: "openai/gpt-5" },
    });
    // After a word that is not a subcommand's, `--` changes nothing.
    expect(parseCommand(["explain", "--", "config"])).toMatchObject({
      kind: "chat",
      prompt: "explain config",
    });
  });

  it("says what was wrong in one line", () => {
    expect(usage(["--nope"])).toBe("unknown option --nope (see yoi --help)");
    // A value left out before the next option: not "does not take a value", which --fork does.
    expect(usage(["--fork", "-p", "x"])).toBe(
      "--fork needs a value; -p after it is an option (see yoi --help)",
    );
    expect(usage(["-p", "x", "-m", "--no-color"])).toBe(
      "-m needs a value; --no-color after it is an option (see yoi --help)",
    );
    expect(usage(["--fork"])).toBe("--fork needs a value (see yoi --help)");
    expect(usage(["--print=yes", "x"])).toBe("--print does not take a value (see yoi --help)");
    // A typo of ours, and another agent CLI's name for one of ours.
    expect(usage(["--modle", "x/y"])).toBe("unknown option --modle; did you mean --model? (see yoi --help)");
    expect(usage(["-p", "--output-format", "stream-json", "hi"])).toBe(
      "unknown option --output-format; did you mean --output? (see yoi --help)",
    );
    expect(usage(["-p", "--allowedTools=Bash", "hi"])).toBe(
      "unknown option --allowedTools; did you mean --allow-tool? (see yoi --help)",
    );
    expect(usage(["--dangerously-skip-permissions"])).toBe(
      "unknown option --dangerously-skip-permissions; did you mean --permission-mode bypassPermissions? (see yoi --help)",
    );
    expect(usage(["-o", "yaml", "-p", "x"])).toBe(
      '--output must be one of text, json, stream-json; got "yaml"',
    );
    expect(usage(["-o", "json", "x"])).toContain("--output applies to print mode");
    expect(usage(["-c", "-r", "abc"])).toContain("either -c");
    expect(usage(["--base-url", "ftp://x"])).toContain("--base-url must be an http(s) URL");
    expect(usage(["inspect"])).toContain("yoi inspect needs a blob id");
    expect(usage(["debug", "replay", "f"])).toContain("needs --provider");
    expect(usage(["debug", "nope"])).toContain("yoi debug takes one subcommand: replay");
    expect(usage(["config", "extra"])).toBe('yoi config: unexpected argument "extra"');
    expect(usage(["demo", "--model", "x/y"])).toBe("--model does not apply to yoi demo (see yoi --help)");
  });
});

describe("errors never show keys", () => {
  it("scrubs the given secret and anything shaped like a key", () => {
    expect(scrub("bad key sk-ant-api03-abcdefgh and mysecretvalue", ["mysecretvalue"])).toBe(
      "bad key <redacted> and <redacted>",
    );
    const line = describeFailure(
      {
        code: "invalid_request",
        message: "nope for key sk-proj-abcdefghijkl",
        retryable: false,
        status: 400,
      },
      { provider: "openai", secrets: [] },
    );
    expect(line).toBe("openai rejected the request (HTTP 400): nope for key <redacted>");
  });

  it("a server error without an HTTP status is an unreachable server", () => {
    const line = describeFailure(
      { code: "server", message: "openai-chat: Connection error.", retryable: true },
      {
        provider: "openai-chat",
        baseURL: "http://127.0.0.1:9/v1",
        baseURLEnv: "OPENAI_BASE_URL",
        customServer: true,
      },
    );
    expect(line).toMatch(
      /^cannot reach openai-chat at http:\/\/127\.0\.0\.1:9\/v1: .*--base-url or OPENAI_BASE_URL/,
    );
  });

  it("names the provider once: the client's own prefix is not repeated", () => {
    const ctx = { provider: "anthropic", baseURL: "http://127.0.0.1:8080", customServer: true };
    expect(
      describeFailure(
        {
          code: "network",
          message:
            "anthropic: could not reach the server (connect ECONNREFUSED 127.0.0.1:8080) (gave up after 4 attempts; retry.maxAttempts is 4)",
          retryable: true,
          networkReason: "connect ECONNREFUSED 127.0.0.1:8080",
        },
        ctx,
      ),
    ).toBe(
      "cannot reach anthropic at http://127.0.0.1:8080 (connect ECONNREFUSED 127.0.0.1:8080) (gave up after 4 attempts; retry.maxAttempts is 4); check that the server is running and the base URL (--base-url)",
    );
    // Without the reason (a WorkerError from an older session log, say), the client's whole sentence.
    expect(
      describeFailure({ code: "network", message: "anthropic: the socket hung up", retryable: true }, ctx),
    ).toBe(
      "cannot reach anthropic at http://127.0.0.1:8080: the socket hung up; check that the server is running and the base URL (--base-url)",
    );
    expect(
      describeFailure(
        { code: "overloaded", message: "anthropic: Overloaded", retryable: true, status: 529 },
        ctx,
      ),
    ).toBe("anthropic had a server problem (HTTP 529): Overloaded; try again later");
    // Another provider's name at the start is part of the message.
    expect(
      describeFailure(
        { code: "server", message: "gateway: upstream failed", retryable: true, status: 502 },
        ctx,
      ),
    ).toBe("anthropic had a server problem (HTTP 502): gateway: upstream failed; try again later");
  });
});

describe("output helpers", () => {
  it("groups digits as en-US does, without loading ICU", () => {
    for (const n of [0, 7, 999, 1000, 131_072, 1_000_000, 2_097_152, -4500, 12.9]) {
      expect(groupDigits(n)).toBe(Math.trunc(n).toLocaleString("en-US"));
    }
  });

  it("colour only on a terminal, never with NO_COLOR or --no-color", () => {
    expect(colorEnabled({ isTTY: true }, {}, [])).toBe(true);
    expect(colorEnabled({ isTTY: false }, {}, [])).toBe(false);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: "1" }, [])).toBe(false);
    expect(colorEnabled({ isTTY: true }, {}, ["--no-color"])).toBe(false);
    expect(colorEnabled({ isTTY: true }, { TERM: "dumb" }, [])).toBe(false);
  });

  it("truncate keeps ANSI sequences and counts wide characters as two columns", () => {
    expect(visibleWidth("日本")).toBe(4);
    expect(truncate("abcdef", 4)).toBe("abc…");
    expect(truncate("\x1b[1mabcdef\x1b[22m", 4)).toBe("\x1b[1mabc…\x1b[0m");
    expect(visibleWidth(truncate("日本語のテキスト", 7))).toBeLessThanOrEqual(7);
  });

  it("tool arguments in short", () => {
    expect(shortArgs("bash", { command: "npm test\nnpm run lint" })).toBe("npm test …");
    expect(shortArgs("grep", { pattern: "TODO", path: "src" })).toBe("/TODO/ in src");
    expect(shortArgs("read_file", { path: "a.ts", offset: 10, limit: 20 })).toBe("a.ts:10+20");
    expect(shortArgs("custom", { query: "x" })).toBe("x");
  });

  it("stream-json shapes of pod events", () => {
    expect(
      toStreamJson(
        {
          type: "usage",
          turnIndex: 1,
          usage: { inputTokens: 100, outputTokens: 5 },
          total: { inputTokens: 300 },
        },
        1000,
      ),
    ).toEqual({
      type: "usage",
      turn: 1,
      usage: {
        input_tokens: 100,
        output_tokens: 5,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        reasoning_tokens: 0,
      },
      total: {
        input_tokens: 300,
        output_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        reasoning_tokens: 0,
      },
      context_tokens: 105,
      context_window: 1000,
    });
    expect(
      toStreamJson(
        {
          type: "item_committed",
          item: { type: "message", role: "user", content: [] },
          index: 0,
          reason: "user",
        },
        0,
      ),
    ).toBeUndefined();
  });
});

/** A Renderer without colour or animation, and what it wrote so far. */
async function plainRenderer() {
  const { Renderer } = await import("../src/ui/renderer.ts");
  const { createStyle } = await import("../src/style.ts");
  let text = "";
  const renderer = new Renderer({
    out: { write: (chunk: string) => (text += chunk) } as unknown as NodeJS.WriteStream,
    style: createStyle(false),
    animate: false,
    window: 0,
    provider: { provider: "anthropic" },
  });
  return { renderer, written: () => text };
}

describe("Renderer permission outcomes", () => {
  it("says who denied a call, but does not repeat the user's own answer", async () => {
    const { renderer, written } = await plainRenderer();
    const outcome = (by: "user" | "rule", tool: string) => ({
      type: "permission_outcome" as const,
      outcome: { callId: "c", tool, subject: `${tool}.txt`, action: "deny" as const, by },
    });
    renderer.handle(outcome("user", "write_file"));
    renderer.handle(outcome("rule", "edit_file"));
    expect(written()).not.toContain("write_file");
    expect(written()).toContain("⊘ denied edit_file: edit_file.txt (by a permissions rule)");
  });
});

describe("Renderer tool errors", () => {
  it("shows why a call failed when the first line only names the failure", async () => {
    const { renderer, written } = await plainRenderer();
    renderer.handle({
      type: "tool_call_end",
      callId: "c",
      name: "edit_file",
      batchId: "b",
      callIndex: 0,
      turnIndex: 0,
      isError: true,
      outcome: "error",
      durationMs: 1,
      preview:
        "Invalid arguments for edit_file:\n- old_string: expected string, received undefined\nFix the arguments",
      outputBytes: 120,
      fullBytes: 120,
    });
    expect(written()).toContain(
      "Invalid arguments for edit_file: - old_string: expected string, received undefined Fix the arguments",
    );
  });
});

describe("the libraries' facts in the CLI's words", () => {
  it("a bypass without a sandbox names the flag that allows it, as a usage error", () => {
    let refused: unknown;
    try {
      new PermissionPolicy({}, { sandbox: "unavailable", mode: "bypassPermissions" });
    } catch (error) {
      refused = error;
    }
    expect(describeError(refused)).toEqual({
      message:
        "bypassPermissions needs the bash sandbox, which is not active here; pass --dangerously-bypass-without-sandbox to allow it anyway",
      exitCode: 2,
    });
  });

  it("the missing sandbox is said with the config key and the flag that turn it off", () => {
    expect(sandboxNotice({ status: "unavailable", reason: "bubblewrap is not installed" })).toBe(
      'bash has no sandbox here: bubblewrap is not installed. Every bash command will ask for approval (print mode refuses them). To run bash unsandboxed without asking, set "sandbox": false in ~/.yoi/config.jsonc or pass --no-sandbox.',
    );
    expect(sandboxNotice({ status: "active" })).toBeUndefined();
    expect(sandboxNotice({ status: "disabled" })).toBeUndefined();
  });

  it("an image a text-only model cannot take points at /model on the screen and --model in print mode", () => {
    const alerts = new AlertBus();
    const refused = alerts.warn(
      "file_ref",
      "@a.png was not attached: m does not accept images",
      "unsupported",
    );
    expect(describeAlert(refused, "screen")).toBe(
      "@a.png was not attached: m does not accept images (/model switches the model)",
    );
    expect(describeAlert(refused, "print")).toBe(
      "@a.png was not attached: m does not accept images (--model chooses another)",
    );
    const other = alerts.warn(
      "file_ref",
      "@b.txt was not attached: b.txt: no such file or directory",
      "not_found",
    );
    expect(describeAlert(other, "screen")).toBe(other.message);
  });
});

describe("tool output sizes", () => {
  it("say what entered the context and, separately, the whole stored output", () => {
    const id = "0190a5b2-0000-7000-8000-000000000000";
    expect(toolSize(506, 108_894, id)).toBe(`506 B in context · 106.3 KB stored → blob ${id}`);
    expect(toolSize(300, 300, undefined)).toBe("300 B");
    expect(toolSize(4096, 20_000, undefined)).toBe("4.0 KB in context of 19.5 KB");
  });
});
