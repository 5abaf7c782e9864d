/**
 * What the bash sandbox adds to one call: the bash tool running `true`
 * inside bubblewrap against the same tool unsandboxed (median of each), what
 * the protected-path mounts add to it (in a git repository, against the same
 * bwrap without them), and
 * what the permission check of a bash line costs once the shell parser is
 * loaded (the first analysis pays the WebAssembly load, reported apart).
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import type { ToolExecutionContext } from "@yoi/llm-worker";
import { measure, report } from "../../../scripts/bench-kit.ts";
import {
  bashTool,
  bwrapArgs,
  detectSandbox,
  isSandbox,
  PermissionPolicy,
  type Sandbox,
  ScopedFs,
} from "../src/index.ts";

const ctx: ToolExecutionContext = {
  callId: "c",
  batchId: "b",
  callIndex: 0,
  batchSize: 1,
  turnIndex: 0,
  signal: new AbortController().signal,
};

const dir = await mkdtemp(path.join(tmpdir(), "yoi-sandbox-bench-"));
try {
  const fs = await ScopedFs.create({ writeRoots: [dir] });
  const plain = bashTool({ fs });
  const found = await detectSandbox();
  const run = (tool: ReturnType<typeof bashTool>) => () => tool.execute({ command: "true" }, ctx);
  const unsandboxed = await measure(run(plain), { runs: 21, warmup: 3 });
  if (isSandbox(found)) {
    const boxed = bashTool({
      fs,
      sandbox: { sandbox: found, policy: { writeRoots: [dir], hidden: [], network: false } },
    });
    const sandboxed = await measure(run(boxed), { runs: 21, warmup: 3 });
    if (found.kind === "bwrap") {
      // The same bwrap, in a git repository, with and without the protected paths' mounts.
      execFileSync("git", ["init", "-q", dir]);
      const policy = { writeRoots: [dir], hidden: [], network: false };
      const file = found.wrap("/bin/sh", "true", dir, { ...policy, writeRoots: [] }).file;
      const bare: Sandbox = {
        kind: "bwrap",
        wrap: (shell, line, cwd, p) => ({
          file,
          args: [...bwrapArgs(cwd, p, []), "--", shell, "-c", line],
        }),
      };
      const without = await measure(run(bashTool({ fs, sandbox: { sandbox: bare, policy } })), {
        runs: 21,
        warmup: 3,
      });
      const withMounts = await measure(run(bashTool({ fs, sandbox: { sandbox: found, policy } })), {
        runs: 21,
        warmup: 3,
      });
      report({
        group: "pod",
        name: "bash `true` in bwrap with the protected-path mounts (median of 21)",
        subject: withMounts,
        baseline: without,
        baselineName: "the same without them",
        unit: "ms",
        note: `adds ${(withMounts - without).toFixed(1)} ms a call`,
      });
    }
    report({
      group: "pod",
      name: `bash \`true\` in ${found.kind} (median of 21)`,
      subject: sandboxed,
      baseline: unsandboxed,
      baselineName: "bash `true` unsandboxed",
      unit: "ms",
      note: `adds ${(sandboxed - unsandboxed).toFixed(1)} ms a call`,
    });
  } else {
    report({
      group: "pod",
      name: "bash `true` unsandboxed (no sandbox here)",
      subject: unsandboxed,
      unit: "ms",
      note: found.reason,
    });
  }

  const policy = new PermissionPolicy({ rules: [{ tool: "bash", match: "git *", action: "allow" }] }, { fs });
  const first = performance.now();
  await policy.evaluate("bash", { command: "git status" });
  const load = performance.now() - first;
  const line = "git status && git diff --stat | head -n 20; git log -1 > /dev/null";
  const check = await measure(() => policy.evaluate("bash", { command: line }), { runs: 51, warmup: 5 });
  report({
    group: "pod",
    name: "permission check of a 5-command bash line (tree-sitter-bash)",
    subject: check,
    unit: "ms",
    note: `first check, loading the parser: ${load.toFixed(1)} ms`,
  });
} finally {
  await rm(dir, { recursive: true, force: true });
}
