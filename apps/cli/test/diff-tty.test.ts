/**
 * `/diff`, `/diff session`, ctrl+o for the rest, `/review` and `/lsp` in a
 * real terminal (tmux), on a real repository.
 */
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { tempWorld } from "./helpers.ts";
import { TmuxSession, waitForFile, yoiCommand } from "./tmux.ts";

const servers: ScriptedServer[] = [];
const sessions: TmuxSession[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  for (const s of servers.splice(0)) await s.close();
});

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.invalid",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.invalid",
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

describe("/diff and /review in a terminal", () => {
  it("draws the working tree's changes, pages a long one with ctrl+o, shows the session's own, reviews", async () => {
    const long = Array.from({ length: 120 }, (_, i) => `line ${i + 1}`).join("\n");
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        {
          type: "reply",
          toolCalls: [
            { id: "w1", name: "write_file", arguments: { path: "made.txt", content: "by the model\n" } },
          ],
        },
        { type: "reply", text: "Wrote it." },
        {
          type: "reply",
          text: 'Fine.\n```json\n{"findings":[{"file":"long.txt","line":3,"severity":"medium","text":"three is now THREE"}]}\n```',
        },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "long.txt": `${long}\n`, "keep.txt": "same\n" });
    git(project, "init", "-q", "-b", "main");
    git(project, "add", ".");
    git(project, "commit", "-q", "-m", "base");
    await writeFile(path.join(project, "long.txt"), `${long.replace(/line (\d+)/g, "LINE $1")}\n`);
    const out = path.join(home, "run");
    const tty = TmuxSession.start(
      yoiCommand({
        project,
        home,
        baseURL: server.baseURL,
        args: ["--permission-mode", "acceptEdits"],
        out,
      }),
    );
    sessions.push(tty);
    // The prompt names the mode (accept edits) before its ›.
    await tty.waitFor(/›\s*$/m);

    tty.type("/diff");
    tty.keys("Enter");
    let screen = await tty.waitFor(/more lines \(ctrl\+o shows them all\)/);
    expect(screen).toContain("changes against HEAD: 1 file");
    expect(screen).toMatch(/long\.txt \(modified\) \+120 -120/);
    tty.keys("C-o");
    screen = await tty.waitFor(/120 \+ LINE 120/);

    tty.type("make a file");
    tty.keys("Enter");
    await tty.waitFor("Wrote it.");
    tty.type("/diff session");
    tty.keys("Enter");
    screen = await tty.waitFor(/changes since this session started: 1 file/);
    expect(screen).toMatch(/made\.txt \(new\) \+1 -0/);
    expect(screen).toMatch(/1 \+ by the model/);

    tty.type("/review");
    tty.keys("Enter");
    screen = await tty.waitFor(/medium long\.txt:3 three is now THREE/);
    expect(screen).toContain("review of 2 changed files against HEAD");

    tty.type("/lsp");
    tty.keys("Enter");
    await tty.waitFor(/python (not found|not started)/);

    // Out before the temp directories go: yoi writes its session log until it exits.
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 120_000);
});
