/**
 * Render CPU (issue 35): what it costs yoi to show a long Markdown answer
 * in the interactive session against printing the same answer with `-p`.
 * A scripted Anthropic server on 127.0.0.1 streams one answer of 6,000
 * text deltas (headings, prose, lists, quotes, a table, code) in 1,000
 * writes 2 ms apart, as a model's stream arrives; the shipped
 * bundle (dist/bin.js, rebuilt first when stale) runs in a real terminal
 * (a private tmux server, 120x40) both ways, and bash's `times` after it
 * exits gives the CPU (user + system) the process used from spawn to exit.
 * node gets the flags the bundle's launcher line gives an installed `yoi`
 * (its young-generation size), so both modes run as users get them.
 * The interactive run is sent `/exit` once the usage line is on screen.
 * Rounds interleaved (print, interactive, print, ...), reported as the
 * median of the rounds' paired ratios; the target is 1.3x. Where the
 * difference goes, and what was tried: docs/cli-render-cost.md.
 *
 *   pnpm bench render-cpu                      5 rounds
 *   YOI_BENCH_ROUNDS=1 pnpm bench render-cpu   a quick look
 *   YOI_BENCH_DELTAS=20 pnpm bench render-cpu  a short answer: the cost of each mode besides rendering
 *   YOI_BENCH_COMPARE=apps/cli/dist/before pnpm bench render-cpu   also run a copy of an earlier dist/ (its
 *                                              bin.js) both ways in the same rounds: before and after a change
 *                                              (kept under apps/cli, where it finds the CLI's dependencies: a copy
 *                                              elsewhere cannot load string-width and renders wide text plain)
 *   YOI_BENCH_PROFILE=/tmp/prof pnpm bench render-cpu   every run writes a CPU profile (node --cpu-prof) there,
 *                                              named print-<n> or interactive-<n>; open them in Chrome's DevTools
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { frameLines, startScriptedServer, WIRE_FORMATS } from "@yoi/llm-client/testing";
import { median, pairedRatio, report } from "../../../scripts/bench-kit.ts";
import { freshBundle, launcherNodeArgs } from "../fresh-bundle.ts";

const DIST = freshBundle((line) => process.stderr.write(`render-cpu.bench: ${line}\n`));
const ROUNDS = Math.max(1, Number(process.env.YOI_BENCH_ROUNDS ?? "5") || 5);
/** Text deltas in the answer; a small number shows what the two modes cost besides rendering. */
const DELTAS = Math.max(10, Number(process.env.YOI_BENCH_DELTAS ?? "6000") || 6000);
const CHUNK = 4;

try {
  execFileSync("tmux", ["-V"], { stdio: "ignore" });
} catch {
  process.stderr.write("render-cpu.bench: tmux is not installed; skipped\n");
  process.exit(0);
}

/** A Markdown answer of `DELTAS * CHUNK` characters, built of the blocks an answer has. */
function answer(): string {
  const sections: string[] = [];
  for (let i = 0; sections.join("\n").length < DELTAS * CHUNK; i++) {
    sections.push(
      `## Part ${i + 1}`,
      "",
      `The renderer lays out **prose** at the terminal's width, with \`inline code\`, *emphasis* and a [link](https://example.com/${i}) in a paragraph long enough to wrap twice at eighty columns.`,
      "",
      "- a first item of a list, which says something long enough to need a hanging indent",
      "- a second item",
      "  1. nested, numbered",
      "",
      "> A quoted remark, also long enough to wrap once on an ordinary terminal of eighty columns.",
      "",
      "| name | role | notes |",
      "|---|---|---|",
      `| row ${i} | lead | a note that has to wrap inside a narrow column |`,
      "",
      "```ts",
      `export function part${i}(x: number): number {`,
      "  return x * 2 + 1;",
      "}",
      "```",
      "",
    );
  }
  return `${sections
    .join("\n")
    .slice(0, DELTAS * CHUNK)
    .trimEnd()}\n\nDone.`;
}

const ANSWER = answer();
/** The stream is written in this many parts, 2 ms apart, as a model's arrives: a few deltas per read. */
const WRITES = 1000;
const bodyBytes = Buffer.byteLength(
  frameLines("anthropic", WIRE_FORMATS.anthropic.response(ANSWER, [], { chunkSize: CHUNK })),
);
const server = await startScriptedServer({
  provider: "anthropic",
  script: () => ({
    type: "reply",
    text: ANSWER,
    options: { chunkSize: CHUNK },
    splitAt: Array.from({ length: WRITES - 1 }, (_, i) => Math.round(((i + 1) * bodyBytes) / WRITES)),
  }),
});
const home = mkdtempSync(join(tmpdir(), "yoi-bench-render-home-"));
const project = mkdtempSync(join(tmpdir(), "yoi-bench-render-project-"));
const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
const env = [
  `HOME=${quote(home)}`,
  `PATH=${quote(process.env.PATH ?? "")}`,
  "TERM=xterm-256color",
  "LANG=C.UTF-8",
  "ANTHROPIC_API_KEY=bench",
  `ANTHROPIC_BASE_URL=${quote(server.baseURL)}`,
].join(" ");
let runs = 0;

const COMPARE = process.env.YOI_BENCH_COMPARE;
const PROFILE = process.env.YOI_BENCH_PROFILE;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU ms (user + system) of one run of yoi (`bin`) with `args` in a fresh terminal. */
async function cpuOf(bin: string, args: string[], interactive: boolean): Promise<number> {
  const socket = `yoi-bench-render-${process.pid}-${runs++}`;
  const out = join(home, `times-${runs}`);
  const tmux = (a: string[]) =>
    execFileSync("tmux", ["-L", socket, "-f", "/dev/null", ...a], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  const profile =
    PROFILE === undefined
      ? []
      : [
          "--cpu-prof",
          `--cpu-prof-dir=${PROFILE}`,
          `--cpu-prof-name=${interactive ? "interactive" : "print"}-${runs}.cpuprofile`,
        ];
  const yoi = [
    process.execPath,
    ...profile,
    ...launcherNodeArgs(bin, args),
    bin,
    "-m",
    "anthropic/claude-haiku-4-5",
    ...args,
  ]
    .map(quote)
    .join(" ");
  // bash's `times`: its second line is the user and system time of the children that ended.
  // Each bundle its own code cache: a copy of dist/ has the same build id, and the two would replace each other's packs.
  const cache = `XDG_CACHE_HOME=${quote(join(home, bin === DIST ? "cache" : "cache-compare"))}`;
  const line = `cd ${quote(project)} && env -i ${env} ${cache} ${yoi}; times > ${quote(out)}; sleep 30`;
  tmux(["new-session", "-d", "-s", "b", "-x", "120", "-y", "40", `bash -c ${quote(line)}`]);
  try {
    const deadline = Date.now() + 120_000;
    let sentExit = false;
    while (!existsSync(out) || readFileSync(out, "utf8").split("\n").length < 3) {
      if (Date.now() > deadline) throw new Error(`no result; the screen:\n${tmux(["capture-pane", "-p"])}`);
      const screen = interactive && !sentExit ? tmux(["capture-pane", "-p", "-t", "b"]) : "";
      if (/─ 1 call/.test(screen)) {
        // A run whose renderer failed shows less and costs less, and would pass for a faster one: the
        // answer's end must be on screen, its headings rendered (no `## ` left of the Markdown).
        if (!screen.includes("Done.") || !/^Part \d+/m.test(screen) || /^## /m.test(screen))
          throw new Error(`${bin}: the answer was not rendered; the screen:\n${screen}`);
        tmux(["send-keys", "-t", "b", "-l", "/exit"]);
        tmux(["send-keys", "-t", "b", "Enter"]);
        sentExit = true;
      }
      // Asynchronously: the scripted server answers from this process.
      await sleep(50);
    }
  } finally {
    tmux(["kill-server"]);
  }
  const children = readFileSync(out, "utf8").split("\n")[1] ?? "";
  const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  if (seconds.length !== 2) throw new Error(`unreadable times output: ${children}`);
  return (seconds[0]! + seconds[1]!) * 1000;
}

const PROMPT = "Explain the renderer.";
try {
  // One of each first: compile caches warm, nothing measured.
  await cpuOf(DIST, ["-p", PROMPT], false);
  await cpuOf(DIST, [PROMPT], true);
  const print: number[] = [];
  const interactive: number[] = [];
  const before = { print: [] as number[], interactive: [] as number[] };
  const earlier = COMPARE === undefined ? undefined : resolve(COMPARE, "bin.js");
  if (earlier) {
    await cpuOf(earlier, ["-p", PROMPT], false);
    await cpuOf(earlier, [PROMPT], true);
  }
  for (let i = 0; i < ROUNDS; i++) {
    print.push(await cpuOf(DIST, ["-p", PROMPT], false));
    interactive.push(await cpuOf(DIST, [PROMPT], true));
    if (earlier) {
      before.print.push(await cpuOf(earlier, ["-p", PROMPT], false));
      before.interactive.push(await cpuOf(earlier, [PROMPT], true));
    }
  }
  if (earlier)
    report({
      group: "cli",
      name: `render CPU, ${DELTAS} Markdown deltas, interactive (${COMPARE})`,
      subject: median(before.interactive),
      baseline: median(before.print),
      baselineName: "its yoi -p, same answer",
      unit: "ms",
      ratio: pairedRatio(before.interactive, before.print),
      target: 1.3,
      note: "the earlier bundle, same rounds",
    });
  report({
    group: "cli",
    name: `render CPU, ${DELTAS} Markdown deltas, interactive`,
    subject: median(interactive),
    baseline: median(print),
    baselineName: "yoi -p, same answer",
    unit: "ms",
    ratio: pairedRatio(interactive, print),
    target: 1.3,
    note: `CPU from spawn to exit, 120x40 tmux, ${ROUNDS} rounds`,
  });
} finally {
  await server.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(project, { recursive: true, force: true });
}
