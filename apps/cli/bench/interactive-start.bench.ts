/**
 * Interactive start to prompt ready: the shipped `yoi` (dist/bin.js,
 * rebuilt first when stale) in a real terminal (a private tmux server) until its prompt `›`
 * is drawn, against `node -e` printing a marker in the same terminal.
 * Median of 7, interleaved. The model is never called: start-up only.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compare, report } from "../../../scripts/bench-kit.ts";
import { freshBundle } from "../fresh-bundle.ts";

const DIST = freshBundle((line) => process.stderr.write(`interactive-start.bench: ${line}\n`));
let runs = 0;
let socket = "";
const tmux = (args: string[]) =>
  execFileSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });

try {
  execFileSync("tmux", ["-V"], { stdio: "ignore" });
} catch {
  process.stderr.write("interactive-start.bench: tmux is not installed; skipped\n");
  process.exit(0);
}

const home = mkdtempSync(join(tmpdir(), "yoi-bench-home-"));
const project = mkdtempSync(join(tmpdir(), "yoi-bench-project-"));
const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
const env = `env -i HOME=${quote(home)} PATH=${quote(process.env.PATH ?? "")} TERM=xterm-256color LANG=C.UTF-8 ANTHROPIC_API_KEY=bench ANTHROPIC_BASE_URL=http://127.0.0.1:9`;

/** Starts `command` in a fresh terminal and waits until `ready` matches the screen; kills it. */
function timeToScreen(command: string, ready: RegExp): () => void {
  return () => {
    // A server per run: a killed server may still hold its socket for a moment.
    socket = `yoi-bench-${process.pid}-${runs++}`;
    tmux([
      "new-session",
      "-d",
      "-s",
      "b",
      "-x",
      "120",
      "-y",
      "40",
      `cd ${quote(project)} && ${command}; sleep 5`,
    ]);
    try {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const screen = tmux(["capture-pane", "-p", "-t", "b"]);
        if (ready.test(screen)) return;
        if (Date.now() > deadline) throw new Error(`never ready; the screen:\n${screen}`);
        execFileSync("sleep", ["0.005"]);
      }
    } finally {
      tmux(["kill-server"]);
    }
  };
}

const yoi = timeToScreen(
  `${env} ${quote(process.execPath)} ${quote(DIST)} -m anthropic/claude-haiku-4-5`,
  /^›\s*$/m,
);
const node = timeToScreen(
  `${env} ${quote(process.execPath)} -e ${quote("process.stdout.write('ready\\n')")}`,
  /^ready$/m,
);
try {
  const result = await compare(yoi, node, { runs: 7, warmup: 2 });
  report({
    group: "cli",
    name: "interactive start to prompt ready (tmux)",
    subject: result.subject,
    baseline: result.baseline,
    baselineName: "node -e printing a line (tmux)",
    unit: "ms",
    note: `ratio ${result.ratio.toFixed(2)}; includes type stripping, config load, pod open, history load`,
  });
} finally {
  rmSync(home, { recursive: true, force: true });
  rmSync(project, { recursive: true, force: true });
}
