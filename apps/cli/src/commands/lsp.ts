/**
 * `yoi lsp status`: the language servers whose diagnostics follow
 * write_file and edit_file (config `lsp`), each started to see that it
 * answers, then stopped. The same listing, for the session's own servers,
 * is `/lsp`. A project's own `lsp.servers` are commands, so they count only
 * for a trusted project (as print mode: YOI_TRUST_PROJECT=1 or an earlier
 * interactive yes).
 */
import * as path from "node:path";
import { defaultBashEnv, LspManager, type LspServerStatus } from "@yoi/pod";
import type { Command } from "../args.ts";
import { EXIT } from "../exit-codes.ts";
import { WITHOUT_ASKING } from "../project-trust.ts";
import { loadCliConfig } from "../session-setup.ts";
import { colorEnabled, createStyle, type Style } from "../style.ts";
import { sanitizeDeep } from "../terminal-text.ts";
import { writeLines } from "../text-width.ts";

/** How long `yoi lsp status` waits for a server to answer initialize. */
const START_WAIT_MS = 30_000;

export async function lspCommand(command: Extract<Command, { kind: "lsp" }>): Promise<number> {
  const env = process.env;
  const cli = await loadCliConfig(command.flags, { env, trust: WITHOUT_ASKING });
  const style = createStyle(colorEnabled(process.stdout));
  const manager = new LspManager({
    config: cli.config.lsp,
    root: path.resolve(cli.cwd, cli.config.scope.root ?? "."),
    env: defaultBashEnv(
      env,
      Object.values(cli.config.providers).flatMap((p) => (p.apiKeyEnv ? [p.apiKeyEnv] : [])),
    ),
  });
  try {
    await Promise.all(manager.status().map((s) => manager.start(s.name, START_WAIT_MS)));
    const lines = formatLspStatus(manager.status(), style);
    if (!cli.config.lsp.enabled)
      lines.unshift(style.yellow("diagnostics after edits are off (lsp.enabled: false)"));
    writeLines(lines);
  } finally {
    await manager.close();
  }
  return EXIT.ok;
}

/** One line per server (name, state, program, extensions), and a second line saying why when it is not usable. */
export function formatLspStatus(servers: readonly LspServerStatus[], style: Style): string[] {
  const lines: string[] = [];
  // Names, programs and errors come from the config files and the servers.
  for (const s of sanitizeDeep(servers)) {
    const state =
      s.state === "ready"
        ? style.green("ready")
        : s.state === "failed" || s.state === "invalid"
          ? style.red(s.state)
          : s.state === "starting"
            ? style.yellow("starting")
            : s.state === "missing"
              ? style.yellow("not found")
              : style.dim(s.state === "idle" ? "not started" : s.state);
    const facts = [
      s.program ?? (s.command || undefined),
      s.extensions.length > 0 ? s.extensions.join(" ") : undefined,
      s.readyMs !== undefined ? `ready in ${s.readyMs} ms` : undefined,
      s.openFiles ? `${s.openFiles} ${s.openFiles === 1 ? "file" : "files"}` : undefined,
      s.pid !== undefined ? `pid ${s.pid}` : undefined,
    ].filter((f) => f !== undefined);
    lines.push(
      `${style.bold(s.name)} ${state}${facts.length > 0 ? style.dim(` · ${facts.join(" · ")}`) : ""}`,
    );
    if (s.detail !== undefined)
      lines.push(`  ${s.state === "missing" ? style.dim(s.detail) : style.red(s.detail)}`);
  }
  return lines;
}
