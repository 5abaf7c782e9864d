/**
 * The young generation of a process that runs sessions stops growing at its
 * cap (src/young-generation.ts), unless the user sized it on node's command
 * line. Each case runs a fresh Node that allocates like an agent loop: much
 * garbage per step and a working set that is alive across scavenges.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const MODULE = fileURLToPath(new URL("../src/young-generation.ts", import.meta.url));

const LOOP = `
import { getHeapSpaceStatistics } from "node:v8";
import { boundYoungGeneration } from ${JSON.stringify(MODULE)};
boundYoungGeneration();
const kept = [];
let largest = 0;
for (let step = 0; step < 3000; step++) {
  const garbage = [];
  for (let i = 0; i < 2000; i++) garbage.push({ i, text: "item " + i });
  kept.push(JSON.stringify(garbage).slice(0, 64) + step);
  if (kept.length > 500) kept.shift();
  // the observer runs between tasks, as between an agent's turns
  if (step % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
  const young = getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  largest = Math.max(largest, young.space_size);
}
process.stdout.write(String(largest / 1048576));
`;

function largestYoungMB(nodeArgs: string[]): number {
  const run = spawnSync(process.execPath, [...nodeArgs, "--input-type=module", "-e", LOOP], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  });
  expect(run.stderr).toBe("");
  return Number(run.stdout);
}

describe("boundYoungGeneration", () => {
  it("stops the young generation near its 32 MB cap where V8 alone grows it to 128 MB", () => {
    // The cap is applied after the GC that passed it: a growth already under way may add part of a step.
    expect(largestYoungMB([])).toBeLessThan(64);
    // The user's own sizing is kept: with the growth factor given on the command line, V8 grows it as it would.
    expect(largestYoungMB(["--semi-space-growth-factor=2"])).toBeGreaterThanOrEqual(64);
  });
});
