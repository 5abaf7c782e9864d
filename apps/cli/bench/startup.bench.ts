/**
 * Start-up cost of `yoi --version` and `yoi --help` against a bare
 * `node -e 0`, each spawned the same way in the same run (interleaved,
 * median of 15), for the shipped CLI (`dist/bin.js`, rebuilt first when
 * its sources changed: see fresh-bundle.ts).
 */
import { spawnSync } from "node:child_process";
import { compare, report } from "../../../scripts/bench-kit.ts";
import { freshBundle } from "../fresh-bundle.ts";

const DIST = freshBundle((line) => process.stderr.write(`startup.bench: ${line}\n`));
const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" };

function run(args: string[]): () => void {
  return () => {
    const r = spawnSync(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  };
}

const baseline = run(["-e", "0"]);
for (const flag of ["--version", "--help"]) {
  const result = await compare(run([DIST, flag]), baseline, { runs: 15, warmup: 3 });
  report({
    group: "cli",
    name: `yoi ${flag} (dist/bin.js, spawned)`,
    subject: result.subject,
    baseline: result.baseline,
    baselineName: "node -e 0 (spawned)",
    unit: "ms",
    // Issue 21: --version within 1.3x of Node's own start-up.
    target: 1.3,
    note: `ratio ${result.ratio.toFixed(2)}`,
  });
}
