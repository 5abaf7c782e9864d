import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { chmod, mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FsBlobStore } from "../src/index.ts";
import { sleep, spawnChild } from "./child-harness.ts";
import { blobText } from "./crash-data.ts";

/** The child is killed at least MIN_KILLS times, then on (up to MAX_KILLS) until a kill has torn a store. */
const MIN_KILLS = 16;
const MAX_KILLS = 40;

const root = mkdtempSync(join(tmpdir(), "yoi-blob-crash-"));
afterAll(() => rm(root, { recursive: true, force: true }));

describe("FsBlobStore under SIGKILL", () => {
  it.each([
    ["fsyncs each store", false],
    ["write-behind fsyncs (deferSync)", true],
  ])(
    "%s: keeps every blob whose store() returned, whole, across repeated kills; cleanup leaves no temp file",
    async (_name, defer) => {
      const dir = join(root, defer ? "store-deferred" : "store");
      const blobs = join(dir, "blobs");
      const temps = (): number =>
        existsSync(blobs) ? readdirSync(blobs).filter((name) => name.endsWith(".tmp")).length : 0;
      const confirmed = new Map<string, number>();
      let tempSeen = 0;
      // At least MIN_KILLS kills, and more (up to MAX_KILLS) until one of them has torn a store: where a
      // kill lands is up to the scheduler, so the test keeps killing instead of betting on a count.
      for (let kill = 0; kill < MAX_KILLS && (kill < MIN_KILLS || tempSeen === 0); kill++) {
        const child = spawnChild(["blob", dir, ...(defer ? ["defer"] : [])]);
        await child.waitForLines(1); // "ready": cleanup of the previous crash is done
        await child.waitForLines(1 + (kill % 4));
        if (kill % 2 === 0) {
          // aim inside a write: kill as soon as a temporary file is there (bounded, then anyway)
          const until = Date.now() + 2000;
          while (temps() === 0 && Date.now() < until) await new Promise((r) => setImmediate(r));
        } else {
          await sleep(Math.floor(Math.random() * 25));
        }
        await child.kill();
        for (const line of child.lines.slice(1)) {
          const [id, n] = line.split(" ");
          confirmed.set(id as string, Number(n));
        }
        tempSeen += temps();
      }
      // the kills really landed inside stores
      expect(tempSeen).toBeGreaterThan(0);
      const store = await FsBlobStore.open({ dir });
      expect(readdirSync(join(dir, "blobs")).filter((name) => name.startsWith("."))).toEqual([]);
      for (const [id, n] of confirmed) {
        const content = await store.load(id);
        if (n % 3 === 2) expect(content).toEqual({ kind: "structured", value: { n, text: blobText(n) } });
        else expect(content).toEqual({ kind: "text", text: blobText(n) });
      }
      // nothing half-written is visible: every blob file holds a whole blob
      const listed = await store.list();
      for (const blob of listed) {
        const content = await store.load(blob.id);
        const text = content.kind === "text" ? content.text : (content.value as { text: string }).text;
        const n = Number(/^blob (\d+) /.exec(text)?.[1]);
        expect(text).toBe(blobText(n));
      }
      expect(listed.length).toBeGreaterThanOrEqual(confirmed.size);
    },
    300_000,
  ); // each kill spawns a Node process: seconds apiece on a loaded machine

  it("surfaces EACCES with path and errno for an unprivileged writer", async () => {
    const dir = join(root, "denied");
    await mkdir(join(dir, "blobs"), { recursive: true });
    await chmod(dir, 0o755);
    await chmod(join(dir, "blobs"), 0o755);
    const asRoot = process.getuid?.() === 0;
    // root ignores modes, so as root the writer runs as `nobody` instead
    const child = spawnChild(["try-blob", dir], asRoot ? { uid: 65534, gid: 65534 } : {});
    if (!asRoot) await chmod(join(dir, "blobs"), 0o555);
    await child.exited;
    expect(child.stderr()).toBe("");
    expect(child.lines[0]).toMatch(/^error io EACCES /);
    expect(child.lines[0]).toContain(join(dir, "blobs"));
  });
});
