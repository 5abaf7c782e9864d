/**
 * What language-server diagnostics and the environment section add to a
 * turn: one turn of a Pod against a scripted server in which the model
 * edits a TypeScript file (edit_file) and then answers, in a git repository
 * of a small TypeScript project, with the real typescript-language-server
 * (its server warm: started during the warm-up). Rows: diagnostics on
 * against the same turn with `lsp: false`; the environment section on
 * against off; both against neither. Measured in the same run, interleaved.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { createClient } from "@yoi/llm-client";
import { startScriptedServer } from "@yoi/llm-client/testing";
import { ConfigSchema } from "@yoi/manifest";
import { compare, report } from "../../../scripts/bench-kit.ts";
import { Pod } from "../src/index.ts";

const require = createRequire(import.meta.url);
const TS_LANGUAGE_SERVER = path.join(
  path.dirname(require.resolve("typescript-language-server/package.json")),
  "lib",
  "cli.mjs",
);
const base = await mkdtemp(path.join(tmpdir(), "yoi-diag-bench-"));
const env = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "b",
  GIT_AUTHOR_EMAIL: "b@example.invalid",
  GIT_COMMITTER_NAME: "b",
  GIT_COMMITTER_EMAIL: "b@example.invalid",
};

/** A git repository holding a TypeScript project of 50 modules, TypeScript 6 in its node_modules. */
async function project(name: string): Promise<string> {
  const root = path.join(base, name);
  await mkdir(path.join(root, "src"), { recursive: true });
  await mkdir(path.join(root, "node_modules"));
  await symlink(
    path.dirname(require.resolve("typescript-for-lsp/package.json")),
    path.join(root, "node_modules", "typescript"),
  );
  await writeFile(
    path.join(root, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "es2022", module: "nodenext" } }),
  );
  for (let i = 0; i < 50; i++)
    await writeFile(
      path.join(root, "src", `m${i}.ts`),
      `${i > 0 ? `import { v${i - 1} } from "./m${i - 1}.js";\n` : ""}export const v${i}: number = ${i > 0 ? `v${i - 1} + 1` : "0"};\n`,
    );
  await writeFile(
    path.join(root, "src", "edit.ts"),
    'import { v49 } from "./m49.js";\nexport const total: number = v49 + 0;\n',
  );
  const git = (...args: string[]) => execFileSync("git", args, { cwd: root, env, stdio: "pipe" });
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("commit", "-q", "-m", "initial");
  return root;
}

/** Each turn: edit src/edit.ts (the constant alternates), then answer. The first turn reads it. */
const server = await startScriptedServer({
  provider: "anthropic",
  script: (_index, body) => {
    const messages = (body as { messages: { role: string; content: { type: string; text?: string }[] }[] })
      .messages;
    const last = messages.at(-1);
    if (last?.content.some((c) => c.type === "tool_result")) return { type: "reply", text: "ok" };
    if (last?.content.some((c) => c.text === "read"))
      return {
        type: "reply",
        toolCalls: [{ id: "r", name: "read_file", arguments: { path: "src/edit.ts" } }],
      };
    const edits = messages.filter(
      (m) => m.role === "user" && m.content.some((c) => c.text === "edit"),
    ).length;
    const [from, to] = edits % 2 === 1 ? ["v49 + 0", "v49 + 1"] : ["v49 + 1", "v49 + 0"];
    return {
      type: "reply",
      toolCalls: [
        {
          id: `e${edits}`,
          name: "edit_file",
          arguments: { path: "src/edit.ts", old_string: from, new_string: to },
        },
      ],
    };
  },
});

async function pod(name: string, options: { lsp: boolean; environment: boolean }): Promise<Pod> {
  const p = await Pod.create({
    cwd: await project(name),
    dataDir: path.join(base, `${name}-data`),
    fsync: "never",
    instructions: false,
    sandbox: false,
    permissionMode: "acceptEdits",
    // The server from this package's devDependencies, whatever PATH the bench runs with.
    config: ConfigSchema.parse({
      lsp: {
        timeoutMs: 60_000,
        servers: { typescript: { command: process.execPath, args: [TS_LANGUAGE_SERVER, "--stdio"] } },
      },
    }),
    ...(options.lsp ? {} : { lsp: false as const }),
    ...(options.environment ? {} : { environment: false as const }),
    client: createClient({
      provider: "anthropic",
      model: "claude-haiku-4-5",
      apiKey: "k",
      baseURL: server.baseURL,
    }),
  });
  await p.run("read");
  return p;
}

const both = await pod("both", { lsp: true, environment: true });
const lspOnly = await pod("lsp", { lsp: true, environment: false });
const envOnly = await pod("env", { lsp: false, environment: true });
const neither = await pod("neither", { lsp: false, environment: false });
const turn = (p: Pod) => () => p.run("edit");
try {
  // The warm-up edit starts the server: the rows measure a warm one, and must measure one at all.
  await turn(lspOnly)();
  await turn(both)();
  for (const p of [lspOnly, both]) {
    const [server] = p.lsp.status();
    if (server?.state !== "ready" || server.openFiles !== 1)
      throw new Error(
        `diagnostics bench: typescript-language-server is not serving (${JSON.stringify(server)})`,
      );
  }
  const rows: [string, Pod, Pod, string][] = [
    [
      "one edit turn with language-server diagnostics (typescript-language-server, warm)",
      lspOnly,
      neither,
      "the same turn with lsp off",
    ],
    ["one edit turn with the environment section (git repo)", envOnly, neither, "the same turn without it"],
    [
      "one edit turn with diagnostics and the environment section",
      both,
      neither,
      "the same turn with neither",
    ],
  ];
  for (const [name, subject, baseline, baselineName] of rows) {
    const r = await compare(turn(subject), turn(baseline), { runs: 15, warmup: 3 });
    report({
      group: "pod",
      name,
      subject: r.subject,
      baseline: r.baseline,
      baselineName,
      unit: "ms",
      note: `+${(r.subject - r.baseline).toFixed(1)} ms per turn (median)`,
    });
  }
} finally {
  await Promise.all([both, lspOnly, envOnly, neither].map((p) => p.close()));
  await server.close();
  await rm(base, { recursive: true, force: true });
}
