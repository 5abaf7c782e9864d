/**
 * `yoi demo`: a real session with scripted model replies. A fake Anthropic
 * server on 127.0.0.1 answers through the real SDK, llm-client, worker and
 * pod; everything else (the @file ref, parallel tools on a temp project,
 * a large output stored in the blob store and read back with `inspect`,
 * a compaction that re-attaches the files read) is the real runtime.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { createClient } from "@yoi/llm-client";
import { type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { findModel, loadConfig } from "@yoi/manifest";
import { detectSandbox, isSandbox, Pod } from "@yoi/pod";
import type { Command } from "../args.ts";
import { EXIT } from "../exit-codes.ts";
import { colorEnabled, createStyle } from "../style.ts";
import { Renderer } from "../ui/renderer.ts";

const MODEL = "claude-haiku-4-5";

const FILES: Record<string, string> = {
  "README.md":
    "# tiny-shop\nA toy order service. `src/orders.ts` prices orders; `logs/server.log` is last night's log.\n",
  "src/orders.ts": [
    'import { taxFor } from "./tax.ts";',
    "",
    "export function total(items: { price: number; qty: number }[]): number {",
    "  // TODO: reject negative quantities",
    "  const net = items.reduce((sum, i) => sum + i.price * i.qty, 0);",
    "  return net + taxFor(net);",
    "}",
    "",
  ].join("\n"),
  "src/tax.ts":
    "// TODO: tax rates per region\nexport const taxFor = (net: number) => Math.round(net * 0.1 * 100) / 100;\n",
};

function serverLog(): string {
  const lines: string[] = [];
  for (let i = 1; i <= 400; i++) {
    const t = `2026-11-21T23:${String(Math.floor(i / 7) % 60).padStart(2, "0")}:${String((i * 13) % 60).padStart(2, "0")}Z`;
    if (i === 217) lines.push(`${t} ERROR orders: total() got qty=-3 for sku=A-17; refund issued`);
    else lines.push(`${t} INFO  orders: priced order #${1000 + i} (${(i % 5) + 1} items)`);
  }
  return `${lines.join("\n")}\n`;
}

/** The model's side of the conversation, request by request. */
function script(index: number, body: unknown): ScriptStep {
  const sent = JSON.stringify(body);
  switch (index) {
    case 0:
      return {
        type: "reply",
        text: "I'll look at the code and last night's log at the same time.",
        options: {
          thinking:
            "README mentions orders.ts and the log. List src, grep TODOs and read the log in one batch.",
          usage: { inputTokens: 1900, outputTokens: 80 },
        },
        toolCalls: [
          { id: "toolu_ls", name: "list_dir", arguments: { path: "src" } },
          { id: "toolu_grep", name: "grep", arguments: { pattern: "TODO" } },
          { id: "toolu_log", name: "bash", arguments: { command: "cat logs/server.log" } },
        ],
      };
    case 1: {
      // The id the model was shown: a [blob:<id>] summary, or a ref=<id> of the tool output cache.
      const blob = /(?:\[blob:|ref=)([0-9a-f-]{36})/.exec(sent)?.[1] ?? "missing-blob-id";
      return {
        type: "reply",
        text: "The log is too large to keep in context, so yoi stored it as a blob. Reading only the lines around the error:",
        toolCalls: [
          { id: "toolu_inspect", name: "inspect", arguments: { blob_id: blob, selector: "lines:216-218" } },
        ],
        options: { usage: { inputTokens: 4100, outputTokens: 60 } },
      };
    }
    case 2:
      return {
        type: "reply",
        text:
          "Found it. Line 217 of the log shows `total()` accepted `qty=-3` and a refund went out — exactly the " +
          "`TODO: reject negative quantities` in src/orders.ts. The other TODO (src/tax.ts) is about regional tax rates.\n" +
          "Suggested fix: throw on `qty < 0` in `total()` before pricing.",
        options: { usage: { inputTokens: 5200, outputTokens: 90 } },
      };
    case 3:
      return {
        type: "reply",
        text: "Not urgent: taxFor() uses one flat 10% rate, which is correct for the only region you ship to today.",
        options: { usage: { inputTokens: 5600, outputTokens: 40 } },
      };
    case 4:
      return {
        type: "reply",
        text:
          "<summary>The user asked what is wrong in tiny-shop. total() in src/orders.ts accepts negative quantities " +
          "(log line 217: qty=-3, refund issued); fix: reject qty < 0. The tax TODO in src/tax.ts is not urgent.</summary>",
        options: { usage: { inputTokens: 3000, outputTokens: 70 } },
      };
    default:
      return {
        type: "reply",
        text: sent.includes("reject qty < 0")
          ? "From the summary: make total() reject negative quantities first; regional tax rates can wait."
          : "The summary is missing from the request (this should not happen).",
        options: { usage: { inputTokens: 1400, outputTokens: 30 } },
      };
  }
}

export async function demoCommand(command: Extract<Command, { kind: "demo" }>): Promise<number> {
  const style = createStyle(colorEnabled(process.stdout));
  const out = (line = "") => process.stdout.write(`${line}\n`);
  out(style.bold("yoi demo") + style.dim(" — the model's replies are scripted."));
  out(
    style.dim(
      "A fake Anthropic server on 127.0.0.1 plays the model; everything else is real: the Anthropic SDK, yoi's client,\n" +
        "worker, tools, blob store, session log and compaction, on a throwaway project. No API key, no network.",
    ),
  );
  const base = await mkdtemp(path.join(tmpdir(), "yoi-demo-"));
  const project = path.join(base, "tiny-shop");
  const dataDir = path.join(base, "data");
  await mkdir(path.join(project, "src"), { recursive: true });
  await mkdir(path.join(project, "logs"), { recursive: true });
  for (const [name, body] of Object.entries(FILES)) await writeFile(path.join(project, name), body);
  await writeFile(path.join(project, "logs", "server.log"), serverLog());

  const server = await startScriptedServer({ provider: "anthropic", script, validate: true });
  let pod: Pod | undefined;
  try {
    // The demo project's own config allows `cat` (bash asks by default, and the demo has no one to ask).
    const { config } = await loadConfig({
      cwd: project,
      homeDir: base,
      env: {},
      overrides: {
        permissions: { rules: [{ tool: "bash", match: "cat *", action: "allow" }] },
        // Tool outputs over 4 KB reach the model as a view with a ref to the stored whole (default 50 KB).
        toolOutputCache: { maxMessageBytes: 4096 },
      },
    });
    const client = createClient({
      provider: "anthropic",
      model: MODEL,
      apiKey: "demo-no-key",
      baseURL: server.baseURL,
      retry: { maxAttempts: 1 },
    });
    // The demo's commands are scripted, not a model's: where the machine has no sandbox they run without one.
    const sandbox = isSandbox(await detectSandbox()) ? {} : { sandbox: false as const };
    pod = await Pod.create({ config, cwd: project, dataDir, client, fsync: "never", env: {}, ...sandbox });
    const window = findModel("anthropic", MODEL)?.contextWindow ?? 0;
    out(style.dim(`project ${project} · model anthropic/${MODEL} (scripted) · server ${server.baseURL}`));
    out();
    const renderer = new Renderer({
      out: process.stdout,
      style,
      animate: process.stdout.isTTY === true,
      window,
      provider: { provider: "anthropic (scripted)", model: MODEL, baseURL: server.baseURL },
    });
    pod.subscribe((event) => {
      renderer.handle(event);
      // Show what inspect read back (the UI shows only sizes for successful tools).
      if (event.type === "tool_call_end" && event.name === "inspect" && !event.isError) {
        const lines = event.preview.split("\n").filter((l) => /ERROR|INFO/.test(l));
        for (const l of lines.slice(0, 5))
          renderer.line(style.dim(`    ${l.length > 110 ? `${l.slice(0, 107)}...` : l}`));
      }
    });
    const say = (text: string) => out(`${style.cyan("›")} ${text}`);

    const ask = async (prompt: string) => {
      say(prompt);
      renderer.finish(await pod!.run(prompt));
      out();
    };
    await ask("Read @README.md, then check the code and the log: what is wrong?");
    await ask("Is the tax TODO urgent?");
    say("/compact");
    const before = pod.history.length;
    const replaced = await pod.compact();
    renderer.line(
      style.dim(
        replaced
          ? `  ${before} items -> ${replaced.history.length}: a summary, the last exchange and the files read again`
          : "  nothing was compacted",
      ),
    );
    out();
    say("So what should I do first?");
    renderer.finish(await pod.run("So what should I do first?"));
    renderer.dispose();

    out();
    const ok = server.rejections.length === 0;
    out(
      style.dim(
        `${server.requests.length} requests answered by the fake provider${ok ? ", each one valid for the real API" : `; rejected: ${server.rejections.join("; ")}`}.`,
      ),
    );
    out(
      style.dim(
        command.keep
          ? `kept: ${base} (sessions and blobs under ${dataDir})`
          : "The temp project was removed (yoi demo --keep keeps it).",
      ),
    );
    out(
      style.dim(
        "Next: export ANTHROPIC_API_KEY=... (or OPENAI_API_KEY / GEMINI_API_KEY) and run yoi in your project.",
      ),
    );
    return ok ? EXIT.ok : EXIT.error;
  } finally {
    await pod?.close();
    await server.close();
    if (!command.keep) await rm(base, { recursive: true, force: true });
  }
}
