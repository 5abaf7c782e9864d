import { mkdir, symlink, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { expandCommand, loadCommands } from "../../src/extensions/commands.ts";
import { createSkillTool, loadSkills, skillsPrompt } from "../../src/extensions/skills.ts";
import { tempDir } from "../helpers.ts";

async function files(root: string, map: Record<string, string>): Promise<void> {
  for (const [name, body] of Object.entries(map)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), body);
  }
}

describe("custom commands", () => {
  it("loads project and user commands with front matter; the project wins; broken files are named", async () => {
    const project = await tempDir();
    const home = await tempDir();
    await files(home, {
      ".yoi/commands/review.md": "User review of $ARGUMENTS",
      ".yoi/commands/hello.md": "# Say hello\nHello $1!",
    });
    await files(project, {
      ".yoi/commands/review.md":
        "---\ndescription: Review a file\nargument-hint: <file> [focus]\nallowed-tools: [read_file, 'mcp__fs__*']\n---\nReview @$1 focusing on $2.\n",
      ".yoi/commands/git/commit.md": "Commit with message: $ARGUMENTS",
      ".yoi/commands/broken.md": "---\ndescription: [unclosed\n---\nbody",
      ".yoi/commands/open.md": "---\ndescription: never closed\nbody",
      ".yoi/commands/help.md": "shadowing a built-in",
    });
    const { commands, problems } = await loadCommands({ projectDir: project, homeDir: home });
    expect(commands.map((c) => [c.name, c.source, c.description])).toEqual([
      ["git:commit", "project", "Commit with message: $ARGUMENTS"],
      ["hello", "user", "Say hello"],
      ["review", "project", "Review a file"],
    ]);
    // A repository cannot approve tools for itself: a project command's allowed-tools is dropped, with a notice.
    const review = commands.find((c) => c.name === "review")!;
    expect(review.allowedTools).toEqual([]);
    expect(review.argumentHint).toBe("<file> [focus]");
    expect(problems.map((p) => [path.basename(p.file), p.message])).toEqual([
      ["broken.md", expect.stringMatching(/^the front matter is not valid YAML \(line 2\)/)],
      ["help.md", "/help is a built-in command; rename the file"],
      ["open.md", "the front matter opened with --- on line 1 is never closed (add a line --- after it)"],
      [
        "review.md",
        "allowed-tools (read_file, mcp__fs__*) is ignored for a project's command: a repository cannot approve tools for itself (use permission rules, or put the command in ~/.yoi/commands)",
      ],
    ]);
    expect(problems.find((p) => p.file.endsWith("review.md"))?.kept).toBe(true);
    // The user's own command keeps them.
    await files(home, { ".yoi/commands/mine.md": "---\nallowed-tools: bash, read_file\n---\nRun it." });
    const again = await loadCommands({ projectDir: project, homeDir: home });
    expect(again.commands.find((c) => c.name === "mine")?.allowedTools).toEqual(["bash", "read_file"]);
  });

  it("expands $ARGUMENTS and $1..$n, and appends arguments when there is no placeholder", () => {
    expect(expandCommand({ body: "Review @$1 focusing on $2." }, "src/a.ts errors")).toBe(
      "Review @src/a.ts focusing on errors.",
    );
    expect(expandCommand({ body: "All: $ARGUMENTS; first: $1; none: [$3]" }, "a b")).toBe(
      "All: a b; first: a; none: []",
    );
    expect(expandCommand({ body: "Run the tests.\n" }, "only unit")).toBe("Run the tests.\n\nonly unit");
    expect(expandCommand({ body: "Run the tests.\n" }, "")).toBe("Run the tests.");
  });
});

describe("skills", () => {
  it("lists names and descriptions only, loads a body and the folder's files, and reads nothing outside", async () => {
    const project = await tempDir();
    const home = await tempDir();
    const outside = await tempDir();
    await writeFile(path.join(outside, "secret.txt"), "top secret");
    await files(project, {
      ".yoi/skills/pdf/SKILL.md":
        "---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\nUse scripts/fill.py.\nSECRET_BODY_MARKER",
      ".yoi/skills/pdf/scripts/fill.py": "print('fill')\n",
      ".yoi/skills/nodesc/SKILL.md": "---\nname: nodesc\n---\nbody",
      ".yoi/skills/empty/readme.txt": "no skill file",
    });
    await files(home, {
      ".yoi/skills/notes/SKILL.md": "---\ndescription: Keep notes.\n---\nWrite notes to NOTES.md.",
    });
    await symlink(path.join(outside, "secret.txt"), path.join(project, ".yoi/skills/pdf/leak.txt"));
    const { skills, problems } = await loadSkills({ projectDir: project, homeDir: home });
    expect(skills.map((s) => [s.name, s.source])).toEqual([
      ["notes", "user"],
      ["pdf-forms", "project"],
    ]);
    expect(problems.map((p) => p.message)).toEqual([
      "the skill folder has no SKILL.md",
      "description: every skill needs one (it is how the model knows when to use it)",
    ]);
    const prompt = skillsPrompt(skills);
    expect(prompt).toContain("- pdf-forms: Fill PDF forms.");
    expect(prompt).not.toContain("SECRET_BODY_MARKER");

    const tool = createSkillTool(skills);
    const ctx = {} as never;
    const body = String(await tool.execute({ name: "pdf-forms" }, ctx));
    expect(body).toContain("SECRET_BODY_MARKER");
    expect(body).toContain("- scripts/fill.py");
    expect(await tool.execute({ name: "pdf-forms", file: "scripts/fill.py" }, ctx)).toBe("print('fill')\n");
    await expect(tool.execute({ name: "pdf-forms", file: "../../../../secret.txt" }, ctx)).rejects.toThrow(
      /no file|outside/,
    );
    await expect(tool.execute({ name: "pdf-forms", file: "leak.txt" }, ctx)).rejects.toThrow(
      "leak.txt is outside the skill's folder; only the skill's own files can be read.",
    );
    await expect(
      tool.execute({ name: "pdf-forms", file: path.join(outside, "secret.txt") }, ctx),
    ).rejects.toThrow(/must be relative/);
    await expect(tool.execute({ name: "nope" }, ctx)).rejects.toThrow(
      'No skill named "nope". Skills: notes, pdf-forms.',
    );
  });
});

describe("extensions in a pod", () => {
  it("skills reach the system prompt and the skill tool; a run's allowTools pre-approves asked tools; broken files are alerts", async () => {
    const { createClient } = await import("@yoi/llm-client");
    const { startScriptedServer } = await import("@yoi/llm-client/testing");
    const { ConfigSchema } = await import("@yoi/manifest");
    const { Pod } = await import("../../src/pod.ts");
    const project = await tempDir();
    const home = await tempDir();
    await files(project, {
      ".yoi/skills/notes/SKILL.md": "---\ndescription: Keep notes.\n---\nWrite notes to NOTES.md.",
      ".yoi/commands/bad.md": "---\ndescription: x",
    });
    const s = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        {
          type: "reply",
          toolCalls: [
            { id: "sk", name: "skill", arguments: { name: "notes" } },
            { id: "sh", name: "bash", arguments: { command: "echo hi" } },
          ],
        },
        { type: "reply", text: "ok" },
        { type: "reply", toolCalls: [{ id: "sh2", name: "bash", arguments: { command: "echo again" } }] },
        { type: "reply", text: "ok" },
      ],
    });
    const asked: string[] = [];
    const pod = await Pod.create({
      config: ConfigSchema.parse({}),
      cwd: project,
      dataDir: path.join(project, ".data"),
      extensions: { homeDir: home },
      ask: async (r) => {
        asked.push(r.tool);
        return "deny";
      },
      client: createClient({
        provider: "anthropic",
        model: "claude-haiku-4-5",
        apiKey: "k",
        baseURL: s.baseURL,
      }),
    });
    const alerts: string[] = [];
    pod.alerts.subscribe((a) => alerts.push(a.message));
    try {
      await pod.run("take notes", { allowTools: ["bash"] });
      const system = JSON.stringify((s.requests[0] as { system?: unknown }).system);
      expect(system).toContain("- notes: Keep notes.");
      expect(system).not.toContain("Write notes to NOTES.md");
      const out = (id: string) => pod.history.find((i) => i.type === "tool_result" && i.callId === id);
      expect(JSON.stringify(out("sk"))).toContain("Write notes to NOTES.md");
      expect(JSON.stringify(out("sh"))).toContain("hi");
      expect(asked).toEqual([]);
      // The approval lasted only for that run.
      await pod.run("again");
      expect(asked).toEqual(["bash"]);
      expect(
        alerts.some((a) => a.includes("bad.md: the front matter opened with --- on line 1 is never closed")),
      ).toBe(true);
      expect(pod.extensions.problems).toHaveLength(1);
    } finally {
      await pod.close();
      await s.close();
    }
  }, 60_000);
});
