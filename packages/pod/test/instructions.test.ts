import { mkdir, symlink, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient, type ProviderKind } from "@yoi/llm-client";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { ConfigSchema } from "@yoi/manifest";
import { afterEach, describe, expect, it } from "vitest";
import type { PodEvent } from "../src/events/pod-events.ts";
import { ScopedFs } from "../src/fs/scoped-fs.ts";
import { directoryChain } from "../src/instructions/instruction-files.ts";
import { ProjectInstructions } from "../src/instructions/project-instructions.ts";
import { Pod } from "../src/pod.ts";
import type { PodOptions } from "../src/pod-options.ts";
import { tempDir } from "./helpers.ts";

const servers: ScriptedServer[] = [];
const pods: Pod[] = [];
afterEach(async () => {
  for (const p of pods.splice(0)) await p.close();
  for (const s of servers.splice(0)) await s.close();
});

const MODELS: Record<ProviderKind, string> = {
  anthropic: "claude-haiku-4-5",
  "openai-chat": "gpt-4.1-mini",
  "openai-responses": "gpt-5-mini",
  gemini: "gemini-2.5-flash",
};

async function serve(provider: ProviderKind, replies = 2): Promise<ScriptedServer> {
  const s = await startScriptedServer({
    provider,
    validate: true,
    script: Array.from({ length: replies }, (_, i) => ({ type: "reply" as const, text: `answer ${i}` })),
  });
  servers.push(s);
  return s;
}

async function project() {
  const base = await tempDir();
  const root = path.join(base, "repo");
  const user = path.join(base, "home", ".yoi");
  await mkdir(path.join(root, "packages", "app"), { recursive: true });
  await mkdir(user, { recursive: true });
  return { base, root, user };
}

async function open(
  provider: ProviderKind,
  s: ScriptedServer,
  root: string,
  cwd: string,
  userDir: string,
  more: Pick<PodOptions, "system" | "appendSystem"> = {},
) {
  const pod = await Pod.create({
    ...more,
    cwd,
    dataDir: path.join(root, "..", "data"),
    fsync: "never",
    instructions: { userDir },
    client: createClient({
      provider,
      model: MODELS[provider],
      apiKey: "k",
      baseURL: s.baseURL,
      retry: { maxAttempts: 1 },
    }),
  });
  pods.push(pod);
  return pod;
}

describe("directoryChain", () => {
  it("runs from the root down to the working directory, or is just the root outside it", () => {
    expect(directoryChain("/r", "/r/a/b")).toEqual(["/r", "/r/a", "/r/a/b"]);
    expect(directoryChain("/r", "/r")).toEqual(["/r"]);
    expect(directoryChain("/r", "/elsewhere")).toEqual(["/r"]);
  });
});

describe("project instructions reach the model", () => {
  for (const provider of Object.keys(MODELS) as ProviderKind[]) {
    it(`${provider}: a unique AGENTS.md line is in the first request body`, async () => {
      const { root, user } = await project();
      const line = `Always answer in haiku (marker ${provider}-7f3a).`;
      await writeFile(path.join(root, "AGENTS.md"), `# Conventions\n\n${line}\n`);
      const s = await serve(provider);
      const pod = await open(provider, s, root, root, user);
      expect((await pod.run("hello")).status).toBe("completed");
      const first = JSON.stringify(s.requests[0]);
      expect(first).toContain(line);
      expect(first).toContain("## AGENTS.md");
      expect(s.rejections).toEqual([]);
    });
  }

  it("reads the user's file, then each directory from the root down to cwd; CLAUDE.md only where AGENTS.md is missing", async () => {
    const { root, user } = await project();
    await writeFile(path.join(user, "AGENTS.md"), "user rule U1\n");
    await writeFile(path.join(root, "AGENTS.md"), "root rule R1\n");
    await writeFile(path.join(root, "CLAUDE.md"), "root claude rule (shadowed)\n");
    await writeFile(path.join(root, "packages", "CLAUDE.md"), "packages claude rule P1\n");
    await writeFile(path.join(root, "packages", "app", "AGENTS.md"), "app rule A1\n");
    const s = await serve("anthropic");
    const cwd = path.join(root, "packages", "app");
    // The scope root is the repo; the user works in packages/app.
    const pod = await Pod.create({
      cwd,
      config: ConfigSchema.parse({ scope: { root: "../.." } }),
      dataDir: path.join(root, "..", "data"),
      fsync: "never",
      instructions: { userDir: user },
      client: createClient({
        provider: "anthropic",
        model: MODELS.anthropic,
        apiKey: "k",
        baseURL: s.baseURL,
      }),
    });
    pods.push(pod);
    await pod.run("hi");
    const system = (s.requests[0] as { system: unknown }).system;
    const text = JSON.stringify(system);
    const order = ["user rule U1", "root rule R1", "packages claude rule P1", "app rule A1"].map((l) =>
      text.indexOf(l),
    );
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(text).not.toContain("shadowed");
    expect(text).toContain("## packages/CLAUDE.md");
    expect(text).toContain("## packages/app/AGENTS.md");
    expect(text).toContain(`## ${path.join(user, "AGENTS.md")} (the user's, for every project)`);
  });

  it("appendSystem goes after yoi's own prompt (or the caller's system) and before the instructions", async () => {
    const { root, user } = await project();
    await writeFile(path.join(root, "AGENTS.md"), "root rule R1\n");
    const s = await serve("anthropic", 1);
    const pod = await open("anthropic", s, root, root, user, {
      system: "Caller's system.",
      appendSystem: "  Answer in French.\n",
    });
    await pod.run("hi");
    const text = JSON.stringify((s.requests[0] as { system: unknown }).system);
    expect(text).toContain("Caller's system.\\n\\nAnswer in French.");
    expect(text.indexOf("Answer in French.")).toBeLessThan(text.indexOf("root rule R1"));
  });

  it("re-reads a file changed between turns, and says so", async () => {
    const { root, user } = await project();
    await writeFile(path.join(root, "AGENTS.md"), "version one of the rules\n");
    const s = await serve("openai-chat");
    const pod = await open("openai-chat", s, root, root, user);
    const alerts: string[] = [];
    pod.subscribe((e: PodEvent) => {
      if (e.type === "alert" && e.alert.source === "instructions") alerts.push(e.alert.message);
    });
    await pod.run("first");
    await writeFile(path.join(root, "AGENTS.md"), "version two of the rules\n");
    await pod.run("second");
    expect(JSON.stringify(s.requests[0])).toContain("version one");
    expect(JSON.stringify(s.requests[1])).toContain("version two");
    expect(JSON.stringify(s.requests[1])).not.toContain("version one");
    expect(alerts).toEqual(["loaded: AGENTS.md", "re-read: AGENTS.md"]);
  });

  it("caps a large file with the @path truncation note", async () => {
    const { root } = await project();
    const fs = await ScopedFs.create({ writeRoots: [root] });
    await writeFile(path.join(root, "AGENTS.md"), `${"rule line\n".repeat(500)}LAST LINE\n`);
    const instructions = new ProjectInstructions(fs, root, root, { userDir: false, maxBytesPerFile: 1000 });
    await instructions.refresh();
    const [file] = instructions.current.files;
    expect(file?.truncated).toBe(true);
    expect(file?.body).toContain("[...truncated, 5010 bytes total — use read_file for the rest]");
    expect(Buffer.byteLength(file!.body)).toBeLessThan(1100);
    expect(instructions.render()).not.toContain("LAST LINE");
  });

  it("refuses an AGENTS.md that links out of the scope, with a warning, and sends nothing from it", async () => {
    const { base, root, user } = await project();
    await writeFile(path.join(base, "outside.md"), "SECRET outside the project\n");
    await symlink(path.join(base, "outside.md"), path.join(root, "AGENTS.md"));
    await writeFile(path.join(root, "CLAUDE.md"), "not a fallback for a refused AGENTS.md\n");
    const s = await serve("anthropic");
    const pod = await open("anthropic", s, root, root, user);
    const warnings: string[] = [];
    pod.subscribe((e: PodEvent) => {
      if (e.type === "alert" && e.alert.level === "warn") warnings.push(e.alert.message);
    });
    await pod.run("hi");
    await pod.run("again");
    const sent = JSON.stringify(s.requests);
    expect(sent).not.toContain("SECRET");
    expect(warnings).toHaveLength(1); // said once, not every turn
    expect(warnings[0]).toMatch(/^AGENTS\.md was not loaded: .*outside/);
  });

  it("sends no section without instruction files, and none when turned off", async () => {
    const { root, user } = await project();
    const s = await serve("anthropic");
    const pod = await open("anthropic", s, root, root, user);
    await pod.run("hi");
    expect(JSON.stringify(s.requests[0])).not.toContain("Instructions from AGENTS.md");
    await writeFile(path.join(root, "AGENTS.md"), "now there are rules\n");
    const off = await serve("anthropic");
    const pod2 = await Pod.create({
      cwd: root,
      dataDir: path.join(root, "..", "data2"),
      fsync: "never",
      instructions: false,
      client: createClient({
        provider: "anthropic",
        model: MODELS.anthropic,
        apiKey: "k",
        baseURL: off.baseURL,
      }),
    });
    pods.push(pod2);
    await pod2.run("hi");
    expect(JSON.stringify(off.requests[0])).not.toContain("now there are rules");
  });
});
