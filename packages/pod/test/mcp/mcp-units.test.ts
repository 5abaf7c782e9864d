// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is the config syntax under test.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { expandVars, mcpName } from "../../src/mcp/index.ts";
import { promptArguments } from "../../src/mcp/mcp-manager.ts";
import { toToolReturn } from "../../src/mcp/tool-result.ts";
import { gone, NODE } from "./servers.ts";

describe("MCP helpers", () => {
  it("expands ${VAR} and ${VAR:-default}, and names a missing variable", () => {
    expect(expandVars("Bearer ${T}", { T: "abc" })).toBe("Bearer abc");
    expect(expandVars("${A:-x}-${B:-}", {})).toBe("x-");
    expect(() => expandVars("Bearer ${DOCS_TOKEN}", {})).toThrow(
      "${DOCS_TOKEN} is not set in the environment (set it, or write ${DOCS_TOKEN:-default})",
    );
  });

  it("makes tool names every provider accepts, distinct when cut", () => {
    expect(mcpName("fs", "read_file")).toBe("mcp__fs__read_file");
    expect(mcpName("fs", "tools/read.file")).toBe("mcp__fs__tools_read_file");
    const a = mcpName("server", "x".repeat(80));
    const b = mcpName("server", `${"x".repeat(79)}y`);
    expect(a).toMatch(/^[A-Za-z0-9_-]{64}$/);
    expect(a).not.toBe(b);
  });

  it("fills prompt arguments by position or by name, and says what is missing", () => {
    const prompt = {
      name: "review",
      arguments: [{ name: "file", required: true }, { name: "focus" }],
    };
    expect(promptArguments(prompt, "src/a.ts error handling")).toEqual({
      file: "src/a.ts",
      focus: "error handling",
    });
    expect(promptArguments(prompt, "focus=speed file=b.ts")).toEqual({ focus: "speed", file: "b.ts" });
    expect(() => promptArguments(prompt, "", "mcp__x__review")).toThrow(
      "missing file: usage /mcp__x__review <file> [focus] (or name=value)",
    );
  });

  it("turns an error result into a tool error and an empty one into a note", async () => {
    await expect(
      toToolReturn({ isError: true, content: [{ type: "text", text: "no such file" }] }, { server: "fs" }),
    ).rejects.toThrow("no such file");
    expect(await toToolReturn({ content: [] }, { server: "fs" })).toBe("(the tool returned no content)");
    expect(await toToolReturn({ content: [], structuredContent: { a: 1 } }, { server: "fs" })).toBe(
      '{\n  "a": 1\n}',
    );
  });

  it("refuses a result over maxBytes, naming the setting, and keeps nothing of it", async () => {
    const stored: unknown[] = [];
    const blobStore = {
      store: async (c: unknown) => {
        stored.push(c);
        return "b1";
      },
    } as never;
    const big = {
      content: [
        { type: "text", text: "z".repeat(2048) },
        { type: "image", data: "QUFB".repeat(512) },
      ],
    };
    await expect(toToolReturn(big, { server: "fs", maxBytes: 3000, blobStore })).rejects.toThrow(
      /MCP server fs answered with 4096 bytes, more than the 3000 .*worker\.maxMcpResultBytes/,
    );
    expect(stored).toEqual([]);
    expect(await toToolReturn(big, { server: "fs", maxBytes: 5000 })).toMatch(/^z{2048}\n\[image/);
  });

  it("a stdio server does not outlive a yoi that exits without closing", async () => {
    const script = new URL("./fixtures/exit-without-close.ts", import.meta.url).pathname;
    const server = new URL("./fixtures/changing-server.mjs", import.meta.url).pathname;
    // A server that outlives its stdin and ignores SIGTERM: only the exit-time SIGKILL ends it.
    const run = spawnSync(NODE, ["--conditions=@yoi/source", script, NODE, server, "stubborn"], {
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.stderr).not.toMatch(/error/i);
    const pid = Number(run.stdout.trim());
    expect(pid).toBeGreaterThan(0);
    expect(await gone(pid)).toBe(true);
  }, 90_000);
});

describe("tool name clashes", () => {
  it("offers the first of two tools whose names become the same and reports the other once", async () => {
    const { McpManager } = await import("../../src/mcp/index.ts");
    const alerts: string[] = [];
    const manager = new McpManager({
      servers: {
        ch: {
          command: NODE,
          args: [new URL("./fixtures/changing-server.mjs", import.meta.url).pathname, "clash"],
        },
      },
      env: process.env,
      cwd: process.cwd(),
      toolTimeoutMs: 30_000,
      onAlert: (_level, message) => alerts.push(message),
      onChange: () => {},
    });
    try {
      await manager.ready();
      const names = manager.tools().map((t) => t.name);
      expect(names.filter((n) => n === "mcp__ch__read_file")).toHaveLength(1);
      manager.tools();
      expect(alerts).toEqual([
        'MCP server "ch" has two tools named mcp__ch__read_file once made valid for the model; only the first is offered',
      ]);
      const tool = manager.tools().find((t) => t.name === "mcp__ch__read_file")!;
      const signal = new AbortController().signal;
      const ctx = { callId: "c", batchId: "b", callIndex: 0, batchSize: 1, turnIndex: 0, signal };
      expect(await tool.execute({}, ctx)).toBe("read.file");
    } finally {
      await manager.close();
    }
  }, 60_000);
});

describe("closing while servers start", () => {
  it("leaves no process behind and reports nothing", async () => {
    const { McpManager } = await import("../../src/mcp/index.ts");
    const { trackedChildren } = await import("../../src/mcp/child-reaper.ts");
    const alerts: string[] = [];
    const before = new Set(trackedChildren());
    const manager = new McpManager({
      servers: {
        ev: { command: NODE, args: [new URL("./fixtures/changing-server.mjs", import.meta.url).pathname] },
      },
      env: process.env,
      cwd: process.cwd(),
      toolTimeoutMs: 30_000,
      onAlert: (_level, message) => alerts.push(message),
      onChange: () => {},
    });
    manager.start();
    await manager.close();
    await manager.ready();
    // Give a late spawn the chance to show up.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(trackedChildren().filter((p) => !before.has(p))).toEqual([]);
    expect(alerts).toEqual([]);
  }, 60_000);
});
