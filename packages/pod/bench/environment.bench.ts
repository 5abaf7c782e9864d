/**
 * What the environment section (date, OS, git branch, status, last commits)
 * adds to each run: one turn of a Pod against a scripted server, in a git
 * repository of 300 files with 20 changed, with the section on against the
 * same pod with it off (`environment: false`). A second row: the refresh
 * alone (the two git processes) in the same repository.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { createClient } from "@yoi/llm-client";
import { startScriptedServer } from "@yoi/llm-client/testing";
import { compare, measure, report } from "../../../scripts/bench-kit.ts";
import { Pod, SessionEnvironment } from "../src/index.ts";

const base = await mkdtemp(path.join(tmpdir(), "yoi-env-bench-"));
const root = path.join(base, "repo");
await mkdir(path.join(root, "src"), { recursive: true });
const env = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "b",
  GIT_AUTHOR_EMAIL: "b@example.invalid",
  GIT_COMMITTER_NAME: "b",
  GIT_COMMITTER_EMAIL: "b@example.invalid",
};
const git = (...args: string[]) => execFileSync("git", args, { cwd: root, env, stdio: "pipe" });
git("init", "-q", "-b", "main");
for (let i = 0; i < 300; i++)
  await writeFile(path.join(root, "src", `f${i}.ts`), `export const v${i} = ${i};\n`);
git("add", ".");
git("commit", "-q", "-m", "initial");
for (let c = 1; c <= 5; c++) {
  await writeFile(path.join(root, "src", "f0.ts"), `export const v0 = ${c};\n`);
  git("commit", "-q", "-am", `change ${c}`);
}
for (let i = 1; i <= 20; i++)
  await writeFile(path.join(root, "src", `f${i}.ts`), `export const v${i} = -1;\n`);

const server = await startScriptedServer({
  provider: "anthropic",
  script: () => ({ type: "reply", text: "ok" }),
});
async function pod(environment: boolean): Promise<Pod> {
  return Pod.create({
    cwd: root,
    dataDir: path.join(base, environment ? "data-on" : "data-off"),
    fsync: "never",
    instructions: false,
    ...(environment ? {} : { environment: false as const }),
    client: createClient({
      provider: "anthropic",
      model: "claude-haiku-4-5",
      apiKey: "k",
      baseURL: server.baseURL,
    }),
  });
}
const on = await pod(true);
const off = await pod(false);
try {
  const turn = await compare(
    () => on.run("hi"),
    () => off.run("hi"),
    { runs: 21, warmup: 3 },
  );
  report({
    group: "pod",
    name: "one turn with the environment section (git repo, 300 files, 20 changed)",
    subject: turn.subject,
    baseline: turn.baseline,
    baselineName: "the same turn without it",
    unit: "ms",
    note: `+${(turn.subject - turn.baseline).toFixed(1)} ms per run (median)`,
  });
  const environment = new SessionEnvironment(root, "/bin/bash", {}, env);
  const refresh = await measure(() => environment.refresh(), { runs: 21, warmup: 3 });
  report({
    group: "pod",
    name: "environment refresh alone (git status + git log, in parallel)",
    subject: refresh,
    unit: "ms",
  });
} finally {
  await on.close();
  await off.close();
  await server.close();
  await rm(base, { recursive: true, force: true });
}
