/**
 * Start-up cost of `yoi --version` and `yoi --help` against a bare
 * `node -e 0`, each spawned the same way in the same run (interleaved,
 * median of 15). Two forms of the CLI: the published one (`dist/bin.js`,
 * written here by the package's bundle step) and the workspace one
 * (`src/bin.ts` with `--conditions=@yoi/source`, as `pnpm yoi` runs it),
 * which also pays Node's type stripping.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { compare, report } from "../../../scripts/bench-kit.ts";

const CLI = fileURLToPath(new URL("..", import.meta.url));
const SOURCE = fileURLToPath(new URL("../src/bin.ts", import.meta.url));
const DIST = fileURLToPath(new URL("../dist/bin.js", import.meta.url));
const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" };

// The package's bundle step, which writes dist/bin.js from the sources (its build runs tsc first, which the bin
// does not need, and which needs the other packages built: a fresh clone had none).
execFileSync(process.execPath, ["bundle.ts"], { cwd: CLI, stdio: "inherit" });

function run(args: string[]): () => void {
  return () => {
    const r = spawnSync(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  };
}

const baseline = run(["-e", "0"]);
const forms = [
  // Issue 21: --version within 1.3x of Node's own start-up.
  { name: "dist/bin.js", args: [DIST], target: 1.3 },
  { name: "src/bin.ts from source", args: ["--conditions=@yoi/source", SOURCE], target: undefined },
];
for (const form of forms) {
  for (const flag of ["--version", "--help"]) {
    const result = await compare(run([...form.args, flag]), baseline, { runs: 15, warmup: 3 });
    report({
      group: "cli",
      name: `yoi ${flag} (${form.name}, spawned)`,
      subject: result.subject,
      baseline: result.baseline,
      baselineName: "node -e 0 (spawned)",
      unit: "ms",
      ...(form.target !== undefined ? { target: form.target } : {}),
      note: `ratio ${result.ratio.toFixed(2)}${form.target === undefined ? "; includes Node's type stripping of the entry" : ""}`,
    });
  }
}
