/**
 * `yoi mcp list`: starts the configured MCP servers, lists each with its
 * state, transport and tools, and stops them. The same listing is `/mcp`
 * in a session. A project's own `mcpServers` run commands, so they start
 * only for a trusted project (as print mode: YOI_TRUST_PROJECT=1 or an
 * earlier interactive yes).
 */
import { McpManager, type McpServerStatus } from "@yoi/pod";
import type { Command } from "../args.ts";
import { EXIT } from "../exit-codes.ts";
import { WITHOUT_ASKING } from "../project-trust.ts";
import { loadCliConfig } from "../session-setup.ts";
import { colorEnabled, createStyle, type Style } from "../style.ts";
import { sanitizeDeep } from "../terminal-text.ts";
import { writeLines } from "../text-width.ts";

export async function mcpCommand(command: Extract<Command, { kind: "mcp" }>): Promise<number> {
  const env = process.env;
  const cli = await loadCliConfig(command.flags, { env, trust: WITHOUT_ASKING });
  const style = createStyle(colorEnabled(process.stdout));
  if (Object.keys(cli.config.mcpServers).length === 0) {
    const none =
      'no MCP servers configured (add "mcpServers" to ~/.yoi/config.jsonc or .yoi/config.jsonc; see yoi config)';
    writeLines(none);
    return EXIT.ok;
  }
  const path = await import("node:path");
  const manager = new McpManager({
    servers: cli.config.mcpServers,
    env,
    cwd: path.resolve(cli.cwd, cli.config.scope.root ?? "."),
    toolTimeoutMs: cli.config.worker.toolTimeoutMs,
    // Failures show in the listing itself, with the server's stderr.
    onAlert: () => {},
    onChange: () => {},
  });
  try {
    await manager.ready();
    const lines = formatMcpStatus(manager.status(), style, { stderr: true });
    writeLines(lines);
  } finally {
    await manager.close();
  }
  return EXIT.ok;
}

/** Lines describing each server: name, state, transport, then its tools and prompts (or why it failed). */
export function formatMcpStatus(
  servers: readonly McpServerStatus[],
  style: Style,
  options: { stderr?: boolean } = {},
): string[] {
  if (servers.length === 0) return [style.dim("no MCP servers configured (mcpServers in the config)")];
  const lines: string[] = [];
  // Names, errors, stderr and tool names come from the servers and the config files.
  for (const s of sanitizeDeep(servers)) {
    const state =
      s.state === "ready"
        ? style.green("ready")
        : s.state === "failed"
          ? style.red("failed")
          : s.state === "starting"
            ? style.yellow("starting")
            : style.dim(s.state);
    const counts =
      s.state === "ready"
        ? style.dim(
            ` · ${s.tools.length} ${s.tools.length === 1 ? "tool" : "tools"}` +
              (s.prompts.length > 0 ? ` · ${s.prompts.length} prompts` : "") +
              (s.resources ? " · resources" : ""),
          )
        : "";
    lines.push(`${style.bold(s.name)} ${state} ${style.dim(`(${s.transport})`)}${counts}`);
    if (s.error !== undefined) lines.push(`  ${style.red(s.error)}`);
    if (options.stderr && s.state === "failed" && s.stderrTail)
      for (const line of s.stderrTail.trim().split("\n").slice(-5))
        lines.push(style.dim(`  stderr: ${line}`));
    if (s.tools.length > 0) lines.push(`  tools: ${s.tools.join(", ")}`);
    if (s.prompts.length > 0) lines.push(`  prompts: ${s.prompts.map((p) => `/${p}`).join(", ")}`);
  }
  return lines;
}
