/**
 * /undo, /rewind (and undoing a rewind), /fork and the `yoi -r` picker in a
 * real terminal (tmux), against a scripted model on 127.0.0.1.
 */
import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { tempWorld, yoiArgv } from "./helpers.ts";
import { TmuxSession, waitForFile } from "./tmux.ts";

const ttys: TmuxSession[] = [];
const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const t of ttys.splice(0)) t.kill();
  for (const s of servers.splice(0)) await s.close();
});

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

function yoiLine(project: string, home: string, baseURL: string, args: string[], out: string): string {
  const env = [
    `HOME=${quote(home)}`,
    `PATH=${quote(process.env.PATH ?? "/usr/bin:/bin")}`,
    "TERM=xterm-256color",
    "LANG=C.UTF-8",
    "YOI_TRUST_PROJECT=1",
    "ANTHROPIC_API_KEY=test-key",
    `ANTHROPIC_BASE_URL=${quote(baseURL)}`,
  ].join(" ");
  const yoi = [...yoiArgv(), ...args].map(quote).join(" ");
  return `cd ${quote(project)} && env -i ${env} ${yoi}; echo "EXIT=$?" > ${quote(`${out}.exit`)}; sleep 30`;
}

describe.skipIf(!TmuxSession.available())("rewind, undo, fork and the picker in a terminal", () => {
  it("/undo, /rewind of the rewind, /fork, then yoi -r picks the session and shows its last turns", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        {
          type: "reply",
          toolCalls: [{ id: "toolu_w", name: "write_file", arguments: { path: "a.txt", content: "v1\n" } }],
        },
        { type: "reply", text: "Wrote version one." },
        {
          type: "reply",
          toolCalls: [
            {
              id: "toolu_e",
              name: "edit_file",
              arguments: { path: "a.txt", old_string: "v1", new_string: "v2" },
            },
          ],
        },
        { type: "reply", text: "Now version two." },
        { type: "reply", text: "Hello from the fork." },
        { type: "reply", text: "Back again." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({
      ".yoi/config.jsonc":
        '{ "permissions": { "default": { "write_file": "allow", "edit_file": "allow" } } }',
    });
    const file = path.join(project, "a.txt");
    const out = path.join(home, "run1");
    const tty = TmuxSession.start(
      yoiLine(project, home, server.baseURL, ["-m", "anthropic/claude-haiku-4-5"], out),
      { width: 120, height: 50 },
    );
    ttys.push(tty);
    await tty.waitFor(/^›\s*$/m);
    tty.type("write version one");
    tty.keys("Enter");
    await tty.waitFor("Wrote version one.");
    await tty.waitFor(/^›\s*$/m);
    tty.type("make it version two");
    tty.keys("Enter");
    await tty.waitFor("Now version two.");
    await tty.waitFor(/^›\s*$/m);
    expect(await readFile(file, "utf8")).toBe("v2\n");

    tty.type("/undo");
    tty.keys("Enter");
    await tty.waitFor("rewound to before turn 2");
    expect(await readFile(file, "utf8")).toBe("v1\n");

    // the list shows both turns and the rewind; choosing the rewind undoes it
    tty.type("/rewind");
    tty.keys("Enter");
    await tty.waitFor("undo the rewind to turn 2");
    await tty.waitFor("rewind to which?");
    tty.type("3");
    tty.keys("Enter");
    await tty.waitFor("rewound to before the rewind");
    expect(await readFile(file, "utf8")).toBe("v2\n");
    await tty.waitFor(/^›\s*$/m);

    tty.type("/fork 2");
    tty.keys("Enter");
    await tty.waitFor(/forked \S+ into/);
    tty.type("and now?");
    tty.keys("Enter");
    await tty.waitFor("Hello from the fork.");
    await tty.waitFor(/^›\s*$/m);
    const forkRequest = JSON.stringify(server.requests.at(-1));
    expect(forkRequest).toContain("Wrote version one.");
    expect(forkRequest).not.toContain("Now version two.");
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
    tty.kill();

    // yoi -r: a picker of this directory's sessions; the chosen one shows its last turns
    const out2 = path.join(home, "run2");
    const tty2 = TmuxSession.start(yoiLine(project, home, server.baseURL, ["-r"], out2), {
      width: 120,
      height: 50,
    });
    ttys.push(tty2);
    // A searchable list: each session's first prompt, age, branch and size; typing filters it.
    let picker = await tty2.waitFor("Resume which session?");
    expect(picker).toMatch(/❯ .*\d+[smhd] ago · .*\d+(\.\d)? (B|KB)/);
    tty2.type("zzz");
    await tty2.waitFor("(nothing matches)");
    tty2.keys("BSpace", "BSpace", "BSpace");
    tty2.type("write version");
    picker = await tty2.waitFor(/❯ write version one/);
    expect(picker).not.toContain("(nothing matches)");
    tty2.keys("Enter");
    await tty2.waitFor("resumed session");
    // the parent session (older of the two): its conversation as it was drawn
    await tty2.waitFor("› make it version two");
    await tty2.waitFor("✓ edit_file a.txt");
    await tty2.waitFor(/^›\s*$/m);
    tty2.type("hello?");
    tty2.keys("Enter");
    await tty2.waitFor("Back again.");
    await tty2.waitFor(/^›\s*$/m);
    // /resume without an id: the same picker over the other sessions; Esc leaves it, nothing changes.
    tty2.type("/resume");
    tty2.keys("Enter");
    picker = await tty2.waitFor("Resume which session?");
    expect(picker).not.toMatch(/❯ write version one/);
    tty2.keys("Escape");
    await tty2.waitFor((screen) => !screen.includes("Resume which session?"));
    await tty2.waitFor(/^›\s*$/m);
    tty2.type("/exit");
    tty2.keys("Enter");
    expect(await waitForFile(`${out2}.exit`)).toBe("EXIT=0\n");
    expect(server.rejections).toEqual([]);
  }, 120_000);
});
