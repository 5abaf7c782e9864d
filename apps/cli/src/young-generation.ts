/**
 * Bounds V8's young generation, and the garbage its scavenges promote, in a
 * process that runs sessions.
 *
 * V8 doubles the young generation each time the bytes that survived its
 * scavenges since the last doubling exceed its size, and gives the memory
 * back only when the process allocates slowly. An agent allocates steadily
 * and something always survives (each request body is alive while it is
 * sent), so over a long session the young generation grows to V8's maximum
 * (64 MB semi-spaces, 128 MB on Node 24) whatever the agent keeps: in the
 * long-session bench (issue 38) it was most of yoi's peak RSS above the
 * floor's, while the live heap stayed near 20 MB.
 *
 * `--max-semi-space-size` cannot be set once the heap exists, and the
 * launcher line of `bin.js` (bundle.ts) gives only the starting size
 * (`--min-semi-space-size`, so that start-up collects less): a process
 * started with `node bin.js` must be bounded too. The growth factor is read at
 * each growth, so once the young generation has reached {@link CAP_BYTES}
 * the factor is set to 1 and it grows no more (a growth already under way
 * may still finish: it ends near 40 MB). Measured in that bench, a cap of
 * this size cut peak RSS from 1.57x the floor's to 1.19x and cost no CPU per
 * turn; a 16 MB young generation (`--max-semi-space-size=8`) cost about 10%
 * more CPU per turn, scavenging that much more often. A user who sizes the young generation (`--max-semi-space-size`
 * or `--semi-space-growth-factor` in NODE_OPTIONS or on node's command
 * line) keeps their choice.
 *
 * Both flags change the hash V8 stamps code caches with: the chunk loader
 * is told first (startup/flags-event.ts) and writes its code pack then.
 *
 * A smaller young generation scavenges more often, so more request bodies
 * are alive at a scavenge and are promoted. Once sent they are garbage in
 * the old generation (large-object space: a body past 128 KB), freed only
 * by a full collection, which V8 starts when the old generation has grown
 * to about four times what the last one kept. In the same bench that was
 * some 40 MB of dead bodies at the peak. From the cap on, the old
 * generation may grow to three times what the last full collection kept
 * (`--heap-growing-percent=200`): peak RSS 219-221 MB -> 193-198 MB, with
 * 10-11 full collections per 1000 turns instead of 6-7 and no measurable
 * CPU per turn; at 100% it was 183 MB, but the longer stretches of
 * incremental marking slowed the turns. A user's own
 * `--heap-growing-percent` is kept.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { beforeV8FlagsChange } from "./startup/flags-event.ts";

/** The size of the young generation (both semi-spaces, as `new_space` reports it) past which it stops growing. */
const CAP_BYTES = 32 * 1024 * 1024;

/** How far past what the last full collection kept the old generation may grow before the next (V8 lets it reach 4x). */
const OLD_GROWTH_PERCENT = 200;

let started = false;

/** Starts watching the young generation's size after each GC (once per process; later calls do nothing). */
export function boundYoungGeneration(): void {
  if (started) return;
  started = true;
  const flags = `${process.execArgv.join(" ")} ${process.env.NODE_OPTIONS ?? ""}`;
  if (/--(max-semi-space-size|semi-space-growth-factor)\b/.test(flags)) return;
  const ownGrowth = /--heap-growing-percent\b/.test(flags);
  const observer = new PerformanceObserver(() => {
    const young = getHeapSpaceStatistics().find((space) => space.space_name === "new_space");
    if (young === undefined || young.space_size < CAP_BYTES) return;
    // The flags below change the hash V8 stamps code caches with: the code pack is written first.
    beforeV8FlagsChange();
    setFlagsFromString("--semi-space-growth-factor=1");
    if (!ownGrowth) setFlagsFromString(`--heap-growing-percent=${OLD_GROWTH_PERCENT}`);
    observer.disconnect();
  });
  observer.observe({ entryTypes: ["gc"] });
}
