/**
 * A child process for the crash tests. It works forever and prints one line
 * to stdout (synchronously) after each operation *returned*; the parent
 * SIGKILLs it at a random moment and checks that everything printed survived.
 *
 *   crash-child.ts blob <dir>             store blobs; prints "<id> <n>"
 *   crash-child.ts log <dir> <id> <fsync> append to a session log; prints "<seq>"
 *   crash-child.ts try-blob <dir>         one store, prints "ok <id>" or "error <code> <errno>"
 */
import { writeSync } from "node:fs";
import { FsBlobStore } from "../src/index.ts";
import { blobText } from "./crash-data.ts";

const [mode, dir] = process.argv.slice(2);
if (!mode || !dir) throw new Error("usage: crash-child.ts <mode> <dir> ...");

if (mode === "blob") {
  const store = await FsBlobStore.open({ dir });
  writeSync(1, "ready\n");
  for (let n = 0; ; n++) {
    const id =
      n % 3 === 2
        ? await store.store({ kind: "structured", value: { n, text: blobText(n) } })
        : await store.store({ kind: "text", text: blobText(n) });
    writeSync(1, `${id} ${n}\n`);
  }
} else if (mode === "try-blob") {
  try {
    const store = new FsBlobStore({ dir });
    const id = await store.store({ kind: "text", text: "x" });
    writeSync(1, `ok ${id}\n`);
  } catch (error) {
    const e = error as { code?: string; errno?: string; path?: string };
    writeSync(1, `error ${e.code} ${e.errno} ${e.path}\n`);
  }
} else {
  throw new Error(`unknown mode ${mode}`);
}
