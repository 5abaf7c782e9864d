/**
 * What the subcommands print, in a 40-column terminal (tmux, the shipped
 * bundle): laid out between words like the session's own messages, so a
 * mouse copy (`capture-pane -J`) has no row wider than the screen and no
 * word the terminal cut in two. Into a pipe the same lines go whole (the
 * other tests read them there).
 */
import * as path from "node:path";
import { startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, runYoi, tempWorld, yoiArgv } from "./helpers.ts";
import { TmuxSession, waitForFile } from "./tmux.ts";

const sessions: TmuxSession[] = [];
afterEach(() => {
  for (const s of sessions.splice(0)) s.kill();
});

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

describe.skipIf(!TmuxSession.available())("subcommands in a 40-column terminal (tmux)", () => {
  it("permissions, rewind --list, worktree list (and its error), lsp status and mcp list break between words", async () => {
    const { home, project } = await tempWorld();
    // One session here, so that `rewind --list` has a turn to list.
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "reply", text: "ok" }],
    });
    try {
      const first = await runYoi(["-p", "-m", "anthropic/claude-haiku-4-5", "say ok"], {
        cwd: project,
        env: cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL }),
      });
      expect(first.code).toBe(0);
    } finally {
      await server.close();
    }
    const out = path.join(home, "commands");
    const yoi = yoiArgv().map(quote).join(" ");
    const env = `env -i HOME=${quote(home)} PATH=${quote(process.env.PATH ?? "/usr/bin:/bin")} TERM=xterm-256color LANG=C.UTF-8`;
    const commands = ["permissions", "rewind --list", "worktree list", "lsp status", "mcp list"];
    const script = commands.map((c) => `${env} ${yoi} ${c}`).join("; ");
    const tty = TmuxSession.start(
      `cd ${quote(project)} && ${script}; echo done > ${quote(`${out}.exit`)}; sleep 30`,
      { width: 40, height: 60 },
    );
    sessions.push(tty);
    await waitForFile(`${out}.exit`);
    const screen = tty.screen();
    for (const line of tty.screen({ joined: true }).split("\n"))
      expect([...line].length, line).toBeLessThanOrEqual(40);
    // Each sentence is there with its words whole (the rows only break where a space was).
    const flat = screen.replace(/\s+/g, " ");
    for (const sentence of [
      `permissions for ${project} (mode default)`,
      "no permission rules or approvals: tools ask as their defaults say",
      "(yoi rewind --turn N goes back to before turn N)",
      // Not a repository: the error line on stderr is laid out the same way.
      `yoi: ${project} is not in a git repository; --worktree needs one`,
      "was found neither in node_modules/.bin nor on PATH",
      'no MCP servers configured (add "mcpServers" to ~/.yoi/config.jsonc or .yoi/config.jsonc; see yoi config)',
    ])
      expect(flat).toContain(sentence);
    const words = new Set(screen.split(/\s+/));
    for (const word of ["default)", "approvals:", "before", "repository;", "needs", "configured"])
      expect(words).toContain(word);
  }, 120_000);
});
