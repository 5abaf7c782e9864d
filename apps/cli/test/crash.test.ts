import { spawn } from "node:child_process";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_DIR } from "./helpers.ts";

describe("a crash", () => {
  it("prints the stack with every key scrubbed, restores the terminal and exits 1", async () => {
    const key = "local-secret-4242-abcd";
    const guard = path.join(CLI_DIR, "src", "ui", "terminal-guard.ts");
    const script = `
      const { installTerminalGuard } = await import(${JSON.stringify(guard)});
      installTerminalGuard();
      setTimeout(() => { throw new Error("request failed with key " + process.env.OPENAI_API_KEY + " and sk-ant-api03-abcdefghijk"); });
    `;
    const child = spawn(process.execPath, ["--conditions=@yoi/source", "--input-type=module", "-e", script], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", OPENAI_API_KEY: key },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    expect(code).toBe(1);
    expect(stderr).toContain("yoi: internal error: Error: request failed with key <redacted> and <redacted>");
    expect(stderr).toContain("at "); // the stack is still there for a bug report
    expect(stderr).not.toContain(key);
    expect(stderr).not.toContain("sk-ant-api03");
  }, 60_000);
});
