/**
 * Mandatory-deny paths, for real: sandboxed bash in a git repository tries
 * to plant code that runs later (a hook, git config, editor tasks, yoi's
 * own config, shell start-up files, .envrc) by every route a command has,
 * and nothing lands; ordinary git work goes on; the placeholders that stand
 * in for missing paths are gone afterwards. The edit tools ask for the same
 * paths in every mode but bypassPermissions.
 */
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import type { ToolExecutionContext, ToolReturn } from "@yoi/llm-worker";
import { beforeAll, describe, expect, it } from "vitest";
import { PodFsView } from "../src/fs/fs-view.ts";
import { ScopedFs } from "../src/fs/scoped-fs.ts";
import { PermissionPolicy } from "../src/permissions/index.ts";
import {
  bwrapArgs,
  detectSandbox,
  isSandbox,
  protectedPathReason,
  rootProtection,
  type Sandbox,
  seatbeltProfile,
} from "../src/sandbox/index.ts";
import { BackgroundShells } from "../src/tools/background-shells.ts";
import { bashTool, defaultBashEnv } from "../src/tools/bash.ts";
import { createBuiltinTools } from "../src/tools/builtin-tools.ts";
import { tempDir } from "./helpers.ts";

const ctx: ToolExecutionContext = {
  callId: "c1",
  batchId: "b1",
  callIndex: 0,
  batchSize: 1,
  turnIndex: 0,
  signal: new AbortController().signal,
};

function text(out: ToolReturn): string {
  if (typeof out === "string") return out;
  return out.kind === "inline" ? out.text : JSON.stringify(out);
}

const GIT = ["-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "init.defaultBranch=main"];

/** A repository with one commit, its hooks directory as git makes it. */
async function repo(): Promise<string> {
  const dir = await tempDir();
  execFileSync("git", [...GIT, "init", "-q", dir]);
  await writeFile(path.join(dir, "a.txt"), "one\n");
  execFileSync("git", [...GIT, "add", "a.txt"], { cwd: dir });
  execFileSync("git", [...GIT, "commit", "-qm", "first"], { cwd: dir });
  return dir;
}

/** Every way a command can put a file somewhere, aimed at each protected target. */
const PLANTS: Record<string, (target: string) => string> = {
  redirect: (t) => `echo evil > ${t}`,
  append: (t) => `echo evil >> ${t}`,
  cp: (t) => `echo evil > /tmp/x && cp /tmp/x ${t}`,
  mv: (t) => `echo evil > planted.tmp && mv planted.tmp ${t}`,
  "ln -s": (t) => `ln -s /tmp/evil ${t}`,
  tee: (t) => `echo evil | tee ${t}`,
  script: (t) => `printf '#!/bin/sh\\necho evil > ${t}\\n' > /tmp/s.sh && sh /tmp/s.sh`,
  "mkdir -p": (t) => `mkdir -p $(dirname ${t}) && echo evil > ${t}`,
};

const TARGETS = [
  ".git/hooks/pre-commit",
  ".git/config",
  ".gitmodules",
  ".yoi/config.jsonc",
  ".yoi/commands/evil.md",
  ".vscode/tasks.json",
  ".idea/workspace.xml",
  ".zed/tasks.json",
  ".claude/settings.json",
  ".mcp.json",
  ".bashrc",
  ".bash_profile",
  ".zshrc",
  ".zprofile",
  ".profile",
  ".envrc",
  ".husky/pre-commit",
  ".lefthook/pre-commit/lint.sh",
  "lefthook.yml",
  ".pre-commit-config.yaml",
  "mise.toml",
];

/** What a plant left: the target's content when it holds the planted text. */
function planted(root: string, target: string): boolean {
  const file = path.join(root, target);
  try {
    const st = lstatSync(file);
    if (st.isSymbolicLink()) return true;
    return st.isFile() && readFileSync(file, "utf8").includes("evil");
  } catch {
    return false;
  }
}

describe("protected paths", () => {
  it("are named at any depth below a write root, as files and as directories", () => {
    const roots = ["/w/p"];
    expect(protectedPathReason("/w/p/.git/hooks/pre-commit", roots)).toMatch(/\.git is protected: git runs/);
    expect(protectedPathReason("/w/p/sub/.vscode/tasks.json", roots)).toMatch(/sub\/\.vscode is protected/);
    expect(protectedPathReason("/w/p/pkg/.envrc", roots)).toMatch(/direnv/);
    expect(protectedPathReason("/w/p/.mise.toml", roots)).toMatch(/mise runs the scripts/);
    expect(protectedPathReason("/w/p/.yoi/commands/x.md", roots)).toMatch(/agent settings/);
    expect(protectedPathReason("/w/p/.husky/pre-commit", roots)).toBe(
      ".husky is protected: the git hook runner runs what it names on the next commit, outside the sandbox",
    );
    expect(protectedPathReason("/w/p/web/lefthook.yml", roots)).toMatch(
      /^web\/lefthook\.yml is protected: the git hook runner/,
    );
    expect(protectedPathReason("/w/p/.pre-commit-config.yaml", roots)).toMatch(/hook runner/);
    expect(protectedPathReason("/w/p/src/app.ts", roots)).toBeUndefined();
    expect(protectedPathReason("/w/p/docs/bashrc.md", roots)).toBeUndefined();
    // Where the project sits does not count: only what is below the root.
    expect(protectedPathReason("/home/u/.vscode/p/src/a.ts", ["/home/u/.vscode/p"])).toBeUndefined();
  });

  it("seatbelt denies writes to each of them, existing or not", async () => {
    const dir = await repo();
    const profile = seatbeltProfile({ writeRoots: [dir], hidden: [], network: false });
    const allow = profile.indexOf("(allow file-write*");
    for (const p of [".git/hooks", ".git/config", ".vscode", ".envrc", ".git/commondir"])
      expect(profile.indexOf(`(subpath "${path.join(dir, p)}")`)).toBeGreaterThan(allow);
  });

  it("bwrap mounts existing ones read-only over themselves and an empty read-only directory at the others", async () => {
    const dir = await repo();
    await mkdir(path.join(dir, ".vscode"));
    const protection = rootProtection(dir);
    expect(protection.existing).toEqual(
      expect.arrayContaining([
        path.join(dir, ".vscode"),
        path.join(dir, ".git/hooks"),
        path.join(dir, ".git/config"),
      ]),
    );
    expect(protection.missing).toEqual(
      expect.arrayContaining([path.join(dir, ".envrc"), path.join(dir, ".yoi")]),
    );
    expect(protection.watched).toContain(path.join(dir, ".git/commondir"));
    const args = bwrapArgs(dir, { writeRoots: [dir], hidden: [], network: false }, [protection]);
    const at = (...seq: string[]) => args.findIndex((_, i) => seq.every((v, k) => args[i + k] === v));
    const vscode = path.join(dir, ".vscode");
    const envrc = path.join(dir, ".envrc");
    expect(at("--ro-bind", vscode, vscode)).toBeGreaterThan(at("--bind", dir, dir));
    expect(at("--tmpfs", envrc, "--remount-ro", envrc)).toBeGreaterThan(at("--bind", dir, dir));
  });
});

describe.runIf(process.platform === "linux")("sandboxed bash cannot plant code that runs later", () => {
  let sandbox: Sandbox;

  beforeAll(async () => {
    const found = await detectSandbox();
    if (!isSandbox(found))
      throw new Error(`these tests need bubblewrap (apt-get install bubblewrap): ${found.reason}`);
    sandbox = found;
  });

  async function bashIn(dir: string) {
    const fs = await ScopedFs.create({ writeRoots: [dir], cwd: dir });
    const tool = bashTool({
      fs,
      env: defaultBashEnv(),
      sandbox: { sandbox, policy: { writeRoots: fs.writeRoots, hidden: [], network: false } },
    });
    return async (command: string) => text(await tool.execute({ command }, ctx));
  }

  it("by any route, to any protected path: tried and planted counted (goal: 0 planted)", async () => {
    const dir = await repo();
    const bash = await bashIn(dir);
    const configBefore = readFileSync(path.join(dir, ".git/config"), "utf8");
    let tried = 0;
    const landed: string[] = [];
    for (const target of TARGETS) {
      for (const [route, plant] of Object.entries(PLANTS)) {
        tried++;
        await bash(plant(target));
        if (planted(dir, target)) landed.push(`${route} → ${target}`);
      }
    }
    for (const key of [
      "core.hooksPath /tmp/h",
      "core.fsmonitor 'touch /tmp/pwn'",
      "core.sshCommand evil",
      "diff.external evil",
    ]) {
      tried++;
      await bash(`git config ${key}`);
    }
    expect(readFileSync(path.join(dir, ".git/config"), "utf8")).toBe(configBefore);
    console.info(`plants by bash: tried ${tried}, planted ${landed.length}`);
    expect(landed).toEqual([]);
    // The placeholders are gone: the project holds what it held, plus the file the refused mv left where it was.
    expect(readdirSync(dir).sort()).toEqual([".git", "a.txt", "planted.tmp"]);
  }, 120_000);

  it("in a project that uses husky (v9: core.hooksPath .husky/_), its hooks stay as they are", async () => {
    const dir = await repo();
    await mkdir(path.join(dir, ".husky", "_"), { recursive: true });
    await writeFile(path.join(dir, ".husky", "pre-commit"), "npm test\n");
    await writeFile(path.join(dir, ".husky", "_", "h"), '#!/bin/sh\nsh ".husky/$(basename "$0")"\n');
    execFileSync("git", [...GIT, "config", "core.hooksPath", ".husky/_"], { cwd: dir });
    const bash = await bashIn(dir);
    const landed: string[] = [];
    for (const target of [".husky/pre-commit", ".husky/pre-push", ".husky/_/h"])
      for (const [route, plant] of Object.entries(PLANTS)) {
        await bash(plant(target));
        if (planted(dir, target)) landed.push(`${route} → ${target}`);
      }
    expect(landed).toEqual([]);
    expect(readFileSync(path.join(dir, ".husky", "pre-commit"), "utf8")).toBe("npm test\n");
  }, 60_000);

  it("outside any repository, cannot make one whose config and hooks the user's git would run later", async () => {
    const dir = await tempDir();
    if (existsSync(path.join(path.dirname(dir), ".git"))) return; // a temp dir inside a repository: not this case
    await writeFile(path.join(dir, "a.txt"), "one\n");
    const bash = await bashIn(dir);
    await bash(
      "git init -q . ; git config core.fsmonitor 'touch /tmp/pwn'; mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit",
    );
    // Nothing of a repository is left for the user's next git command to trust.
    expect(existsSync(path.join(dir, ".git"))).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(["a.txt"]);
    // Ordinary files around it are still written.
    expect(await bash("echo two >> a.txt && cat a.txt")).toMatch(/one\ntwo\n\[exit code: 0\]$/);
  });

  it("removes a commondir the command made (git would take hooks and config from where it points)", async () => {
    const dir = await repo();
    const bash = await bashIn(dir);
    const out = await bash("mkdir -p evil/hooks && echo ../evil > .git/commondir");
    expect(existsSync(path.join(dir, ".git/commondir"))).toBe(false);
    expect(out).toMatch(/created \.git\/commondir.*yoi removed it/);
  });

  it("leaves ordinary git work alone: status, diff, add, commit, branch, checkout, stash", async () => {
    const dir = await repo();
    const bash = await bashIn(dir);
    const run = async (command: string) => {
      const out = await bash(command);
      expect(out, command).toMatch(/\[exit code: 0\]$/);
      return out;
    };
    const g = "git -c user.name=t -c user.email=t@t.invalid";
    await run("echo two >> a.txt && echo new > b.txt");
    expect(await run(`${g} status --short`)).toMatch(/ M a\.txt\n\?\? b\.txt\n/);
    expect(await run(`${g} diff`)).toMatch(/\+two/);
    await run(`${g} add -A && ${g} commit -qm second`);
    // Nothing the sandbox stood in for went into the commit.
    expect(await run(`${g} show --name-only --format= HEAD`)).toBe("a.txt\nb.txt\n[exit code: 0]");
    await run(`${g} branch feature && ${g} checkout -q feature`);
    await run(`echo three >> a.txt && ${g} stash -q && ${g} stash pop -q`);
    expect(await run(`${g} status --short`)).toMatch(/ M a\.txt/);
    await run(`${g} checkout -q main -- . 2>/dev/null; ${g} checkout -q -f main`);
    expect(execFileSync("git", ["log", "--oneline"], { cwd: dir, encoding: "utf8" })).toMatch(/second/);
    expect(readdirSync(dir).sort()).toEqual([".git", "a.txt", "b.txt"]);
  }, 120_000);
});

describe.runIf(process.platform === "linux")("yoi started in the home directory", () => {
  const HOME_TARGETS = [
    ".ssh/authorized_keys",
    ".ssh/config",
    ".config/git/config",
    ".config/autostart/evil.desktop",
    ".config/systemd/user/evil.service",
    ".local/bin/git",
    ".zshenv",
    ".npmrc",
    ".vimrc",
    ".bashrc",
    ".yoi/config.jsonc",
    // yoi's own cache: the next start runs the code packs there.
    ".cache/yoi/code/v24-x64-build/print.pack",
  ];

  /** Runs `body` with HOME at a fresh directory that has what a home has (.config, .ssh), and its bash. */
  async function inHome(body: (home: string, bash: (c: string) => Promise<string>) => Promise<void>) {
    const found = await detectSandbox();
    if (!isSandbox(found)) throw new Error(`these tests need bubblewrap: ${found.reason}`);
    const home = await tempDir();
    await mkdir(path.join(home, ".config"), { recursive: true });
    await mkdir(path.join(home, ".ssh"), { recursive: true });
    await mkdir(path.join(home, ".cache", "pip"), { recursive: true });
    await writeFile(path.join(home, ".ssh", "known_hosts"), "host\n");
    const saved = process.env.HOME;
    const savedCache = process.env.XDG_CACHE_HOME;
    process.env.HOME = home;
    delete process.env.XDG_CACHE_HOME;
    try {
      const fs = await ScopedFs.create({ writeRoots: [home], cwd: home });
      const tool = bashTool({
        fs,
        env: defaultBashEnv(),
        sandbox: { sandbox: found, policy: { writeRoots: fs.writeRoots, hidden: [], network: false } },
      });
      await body(home, async (command) => text(await tool.execute({ command }, ctx)));
    } finally {
      process.env.HOME = saved;
      if (savedCache !== undefined) process.env.XDG_CACHE_HOME = savedCache;
    }
  }

  it("sandboxed bash plants nothing in the home's start-up, ssh, git and PATH files; its ordinary files are written", async () => {
    await inHome(async (home, bash) => {
      const landed: string[] = [];
      for (const target of HOME_TARGETS)
        for (const [route, plant] of Object.entries(PLANTS)) {
          await bash(plant(target));
          if (planted(home, target)) landed.push(`${route} → ${target}`);
        }
      expect(landed).toEqual([]);
      expect(readFileSync(path.join(home, ".ssh", "known_hosts"), "utf8")).toBe("host\n");
      // A start-up file that did not exist is removed after the command that made it, and the command says so.
      expect(await bash("echo 'export X=1' > .zshenv")).toMatch(
        /created .*\.zshenv, which would run later, outside the sandbox; yoi removed it/,
      );
      expect(existsSync(path.join(home, ".zshenv"))).toBe(false);
      expect(await bash("mkdir -p code && echo hi > code/notes.txt && cat code/notes.txt")).toMatch(
        /hi\n\[exit code: 0\]$/,
      );
      // No placeholder is left behind: what is there is what was there, and what the commands made.
      expect(readdirSync(home).sort()).toEqual([".cache", ".config", ".ssh", "code", "planted.tmp"]);
      expect(readdirSync(path.join(home, ".cache"))).toEqual(["pip"]);
      // Other programs' caches are written as before.
      expect(await bash("echo x > .cache/pip/entry && cat .cache/pip/entry")).toMatch(/x\n\[exit code: 0\]$/);
    });
  }, 180_000);

  it("the edit tools ask for them, naming the reason; a project inside the home is not affected", async () => {
    await inHome(async (home) => {
      expect(protectedPathReason(path.join(home, ".ssh", "authorized_keys"), [home])).toBe(
        "~/.ssh is protected: your home directory's start-up, ssh, git and PATH files run later, outside the sandbox",
      );
      expect(protectedPathReason(path.join(home, ".local", "bin", "git"), [home])).toMatch(
        /^~\/\.local\/bin is protected/,
      );
      expect(protectedPathReason(path.join(home, ".zshenv"), ["/"])).toMatch(/^~\/\.zshenv is protected/);
      expect(protectedPathReason(path.join(home, ".cache", "yoi", "code", "p", "print.pack"), [home])).toBe(
        "~/.cache/yoi is protected: yoi runs the code it caches there at its next start",
      );
      expect(protectedPathReason(path.join(home, ".cache", "pip", "x"), [home])).toBeUndefined();
      expect(protectedPathReason(path.join(home, "code", "notes.txt"), [home])).toBeUndefined();
      // A project in ~/code: its own .ssh or .local/bin are ordinary directories.
      const project = path.join(home, "code");
      expect(protectedPathReason(path.join(project, ".local", "bin", "x"), [project])).toBeUndefined();
      expect(rootProtection(project, home).existing).not.toContain(path.join(home, ".ssh"));
    });
  });
});

describe.runIf(process.platform === "linux")("a protected file held by a running sandboxed command", () => {
  it("write_file says it is held (not that it is a directory), and writes it once the command ended", async () => {
    const found = await detectSandbox();
    if (!isSandbox(found)) throw new Error(`this test needs bubblewrap: ${found.reason}`);
    const dir = await repo();
    const fs = await ScopedFs.create({ writeRoots: [dir], cwd: dir });
    const shells = new BackgroundShells();
    const tools = new Map(
      createBuiltinTools({
        view: new PodFsView(fs),
        bash: {
          background: shells,
          sandbox: { sandbox: found, policy: { writeRoots: fs.writeRoots, hidden: [], network: false } },
        },
      }).map((t) => [t.name, t]),
    );
    const run = async (name: string, args: unknown) => {
      const tool = tools.get(name)!;
      return text(await tool.execute(tool.inputSchema.parse(args), ctx));
    };
    try {
      const started = await run("bash", { command: "sleep 30", run_in_background: true });
      const id = /with id: (\S+)/.exec(started)?.[1];
      expect(id, started).toBeDefined();
      // The placeholder stands on the host while the command runs.
      const envrc = path.join(dir, ".envrc");
      await expect.poll(() => existsSync(envrc) && lstatSync(envrc).isDirectory()).toBe(true);
      const write = tools.get("write_file")!;
      const args = write.inputSchema.parse({ path: ".envrc", content: "export A=1\n" });
      await expect(write.check?.(args, ctx)).rejects.toThrow(/while a sandboxed bash command is running/);
      await expect(write.execute(args, ctx)).rejects.toThrow(/\.envrc cannot be created while/);
      await run("kill_bash", { id });
      await expect.poll(() => existsSync(envrc)).toBe(false);
      expect(await run("write_file", { path: ".envrc", content: "export A=1\n" })).toMatch(/Created \.envrc/);
      expect(readFileSync(envrc, "utf8")).toBe("export A=1\n");
    } finally {
      await shells.killAll();
    }
  }, 60_000);
});

describe("the edit tools ask for protected paths in every mode but bypassPermissions", () => {
  async function policyIn(mode: "default" | "acceptEdits" | "bypassPermissions" | "plan", rules = []) {
    const dir = await repo();
    const fs = await ScopedFs.create({ writeRoots: [dir], cwd: dir });
    const asked: string[] = [];
    const policy = new PermissionPolicy(
      { rules },
      {
        fs,
        mode,
        sandbox: "active",
        ask: async (request) => {
          asked.push(`${request.subject}: ${request.reason ?? ""}`);
          return "deny";
        },
      },
    );
    return { policy, asked };
  }

  it.each(["default", "acceptEdits"] as const)(
    "%s: asks, saying why, and an earlier always does not cover it",
    async (mode) => {
      const { policy, asked } = await policyIn(mode);
      for (const [tool, target] of [
        ["write_file", ".git/hooks/post-checkout"],
        ["write_file", ".yoi/commands/evil.md"],
        ["edit_file", ".vscode/tasks.json"],
        ["write_file", "sub/.envrc"],
      ] as const) {
        const outcome = await policy.check({ callId: "c", name: tool, args: { path: target, content: "x" } });
        expect(outcome.action).toBe("deny");
        expect(outcome.by).toBe("user");
      }
      expect(asked).toHaveLength(4);
      expect(asked[0]).toMatch(/\.git is protected: git runs what its hooks and config name/);
      // An ordinary file in acceptEdits needs no question.
      const plain = await policy.check({
        callId: "c",
        name: "write_file",
        args: { path: "src/a.ts", content: "x" },
      });
      expect(plain.action).toBe(mode === "acceptEdits" ? "allow" : "deny");
    },
  );

  it("bypassPermissions: allowed; plan: denied; without a UI: denied with the reason", async () => {
    expect(
      (
        await (
          await policyIn("bypassPermissions")
        ).policy.check({ callId: "c", name: "write_file", args: { path: ".envrc" } })
      ).action,
    ).toBe("allow");
    expect(
      (
        await (
          await policyIn("plan")
        ).policy.check({ callId: "c", name: "write_file", args: { path: ".envrc" } })
      ).by,
    ).toBe("mode");
    const dir = await repo();
    const fs = await ScopedFs.create({ writeRoots: [dir], cwd: dir });
    const headless = new PermissionPolicy({}, { fs, mode: "acceptEdits", sandbox: "active" });
    const outcome = await headless.check({ callId: "c", name: "write_file", args: { path: ".git/config" } });
    expect(outcome).toMatchObject({ action: "deny", by: "no_ui" });
    expect(PermissionPolicy.denialMessage(outcome)).toMatch(/protected: git runs/);
  });

  it("a rule allows a protected path only when it names the path", async () => {
    const blanket = await policyIn("default", [{ tool: "write_file", action: "allow" }] as never);
    expect(
      (await blanket.policy.check({ callId: "c", name: "write_file", args: { path: ".envrc" } })).action,
    ).toBe("deny");
    const named = await policyIn("default", [
      { tool: "write_file", match: ".envrc", action: "allow" },
    ] as never);
    expect(
      (await named.policy.check({ callId: "c", name: "write_file", args: { path: ".envrc" } })).action,
    ).toBe("allow");
  });

  it("bash redirections into protected paths ask too, even under an allow rule for the command", async () => {
    const { policy, asked } = await policyIn("default", [
      { tool: "bash", match: "echo *", action: "allow" },
    ] as never);
    const outcome = await policy.check({
      callId: "c",
      name: "bash",
      args: { command: "echo x > .git/hooks/pre-push" },
    });
    expect(outcome.action).toBe("deny");
    expect(asked[0]).toMatch(/protected/);
  });
});
