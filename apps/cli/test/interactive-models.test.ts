/**
 * Models in the interactive session (tmux): a bare model name, the cost of
 * each turn and of the session from catalog prices, the `/model` picker,
 * and a `--base-url` that stays with the provider it was given for.
 */
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { tempWorld } from "./helpers.ts";
import { TmuxSession, waitForFile, yoiCommand } from "./tmux.ts";

const sessions: TmuxSession[] = [];
const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  for (const s of servers.splice(0)) await s.close();
});

const PROMPT = /^›\s*$/m;

describe.skipIf(!TmuxSession.available())("models in the interactive session (tmux)", () => {
  it("a bare name, dollars per turn and session, the picker, and --base-url left with its provider", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: (index) => ({
        type: "reply",
        text: `answer ${index}`,
        options: { usage: { inputTokens: 2000, outputTokens: 100 } },
      }),
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const out = path.join(home, "run");
    const tty = TmuxSession.start(
      yoiCommand({
        project,
        home,
        baseURL: server.baseURL,
        // A bare name, and the server given by --base-url rather than ANTHROPIC_BASE_URL.
        model: "claude-haiku-4-5",
        args: ["--base-url", server.baseURL],
        noBaseURLEnv: true,
        env: ["OPENAI_API_KEY=test-key"],
        out,
      }),
    );
    sessions.push(tty);
    await tty.waitFor("anthropic/claude-haiku-4-5");
    await tty.waitFor(PROMPT);
    tty.type("one");
    tty.keys("Enter");
    // haiku 4.5: $1 in, $5 out per million: 2000 in + 100 out = $0.0025.
    await tty.waitFor("$0.0025 (session $0.0025)");
    await tty.waitFor(PROMPT);
    tty.type("two");
    tty.keys("Enter");
    await tty.waitFor("$0.0025 (session $0.0050)");
    await tty.waitFor(PROMPT);

    // /model with no argument: a picker of catalog models, filtered by typing.
    tty.type("/model");
    tty.keys("Enter");
    await tty.waitFor(/❯ anthropic\/claude-haiku-4-5/);
    expect(tty.screen()).toContain("$1/$5 per Mtok");
    tty.type("gpt-5-mini");
    await tty.waitFor(/❯ openai\/gpt-5-mini/);
    tty.keys("Enter");
    await tty.waitFor("now on openai/gpt-5-mini");
    // The --base-url was for anthropic: it does not follow the switch to openai.
    await tty.waitFor(`--base-url ${server.baseURL} belongs to anthropic; openai uses its own`);
    // Back on anthropic (a different model), the flag applies again: the request reaches the server.
    await tty.waitFor(PROMPT);
    tty.type("/model anthropic/claude-opus-4-5");
    tty.keys("Enter");
    await tty.waitFor("now on anthropic/claude-opus-4-5");
    await tty.waitFor(PROMPT);
    tty.type("three");
    tty.keys("Enter");
    // opus 4.5: $5 in, $25 out: 2000*5 + 100*25 = $0.0125; session 0.0050 + 0.0125.
    await tty.waitFor("$0.013 (session $0.018)");
    expect(server.requests).toHaveLength(3);
    expect((server.requests[2] as { model: string }).model).toBe("claude-opus-4-5");
    // A model the catalog lacks, on this custom server: yoi says which window it assumes, and uses it.
    await tty.waitFor(PROMPT);
    tty.type("/model anthropic/claude-local-9");
    tty.keys("Enter");
    await tty.waitFor(/assuming a 131,072-token\s+context\s+window/);
    await tty.waitFor(PROMPT);
    tty.type("four");
    tty.keys("Enter");
    await tty.waitFor("answer 3");
    expect(server.requests).toHaveLength(4);
    expect((server.requests[3] as { model: string }).model).toBe("claude-local-9");
    await tty.waitFor(PROMPT);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 180_000);
});
