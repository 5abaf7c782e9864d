/**
 * A child process for the crash tests. It works forever and prints one line
 * to stdout (synchronously) after each operation *returned*; the parent
 * SIGKILLs it at a random moment and checks that everything printed survived.
 *
 *   crash-child.ts blob <dir> [defer]     store blobs (write-behind fsyncs with `defer`); prints "<id> <n>"
 *   crash-child.ts log <dir> <id> <fsync> append to a session log; prints "<seq>"
 *   crash-child.ts log-big <dir> <id>     append 32 MB records; prints "<seq>"
 *   crash-child.ts turns <dir> <id>       tool turns over a write-behind blob store: blob, item citing it,
 *                                         turn_end; prints "<seq of turn_end> <blob id> <n>" once turn_end returned
 *   crash-child.ts fill <dir> <id>        append until a write fails (run under ulimit -f)
 *   crash-child.ts try-blob <dir>         one store, prints "ok <id>" or "error <code> <errno>"
 */
import { writeSync } from "node:fs";
import { createSession, FsBlobStore, type FsyncPolicy, openSession, type SessionLog } from "../src/index.ts";
import { blobText, recordFor } from "./crash-data.ts";

const [mode, dir] = process.argv.slice(2);
if (!mode || !dir) throw new Error("usage: crash-child.ts <mode> <dir> ...");

if (mode === "blob") {
  const store = await FsBlobStore.open({ dir, deferSync: process.argv[4] === "defer" });
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
} else if (mode === "log") {
  const [id, fsync] = process.argv.slice(4) as [string, FsyncPolicy];
  let log: SessionLog;
  try {
    const opened = await openSession({ dir, id, fsync });
    log = opened.log;
    writeSync(1, `open ${opened.truncatedBytes}\n`);
  } catch (error) {
    if ((error as { code?: string }).code !== "not_found") throw error;
    log = await createSession({ dir, id, fsync, model: "test-model", cwd: "/work" });
    writeSync(1, "open 0\n");
  }
  for (;;) {
    const record = await log.append(recordFor(log.nextSeq, log.historyLength));
    writeSync(1, `${record.seq}\n`);
  }
} else if (mode === "turns") {
  const [id] = process.argv.slice(4) as [string];
  const blobs = await FsBlobStore.open({ dir, deferSync: true });
  let log: SessionLog;
  try {
    log = (await openSession({ dir, id, blobs })).log;
  } catch (error) {
    if ((error as { code?: string }).code !== "not_found") throw error;
    log = await createSession({ dir, id, blobs, model: "test-model", cwd: "/work" });
  }
  writeSync(1, "open\n");
  for (let n = 0; ; n++) {
    const blob = await blobs.store({ kind: "text", text: blobText(n) });
    void log.item(
      {
        type: "tool_result",
        callId: `call_${n}`,
        output: `[blob:${blob}] blob ${n}`,
        isError: false,
        outputRef: { id: blob },
      },
      "tool_result",
    );
    const end = await log.turnEnd({ turn: n });
    writeSync(1, `${end.seq} ${blob} ${n}\n`);
  }
} else if (mode === "log-big") {
  // 32 MB records: a write takes milliseconds, so a kill often tears one
  const [id] = process.argv.slice(4) as [string];
  const log = await createSession({ dir, id, fsync: "never" });
  writeSync(1, "open 0\n");
  const big = "x".repeat(32 * 1024 * 1024);
  for (;;) {
    const seq = log.nextSeq;
    await log.item(
      { type: "tool_result", callId: `c${seq}`, output: `${seq}:${big}`, isError: false },
      "tool_result",
    );
    writeSync(1, `${seq}\n`);
  }
} else if (mode === "fill") {
  // run under `ulimit -f`: appends until the file size limit makes a write
  // fail midway (a short write, then EFBIG), like a full disk
  const [id] = process.argv.slice(4) as [string];
  const log = await createSession({ dir, id, fsync: "never" });
  const chunk = "y".repeat(7000);
  for (;;) {
    try {
      const r = await log.alert("info", "fill", chunk);
      writeSync(1, `ok ${r.seq}\n`);
    } catch (error) {
      const e = error as { code?: string; errno?: string };
      writeSync(1, `error ${e.code} ${e.errno}\n`);
      break;
    }
  }
  const small = await log.alert("info", "fill", "small record after the failure");
  writeSync(1, `ok ${small.seq}\n`);
  await log.close();
} else if (mode === "try-open") {
  const [id] = process.argv.slice(4) as [string];
  try {
    const opened = await openSession({ dir, id });
    writeSync(1, `ok ${opened.history.length}\n`);
    await opened.log.close();
  } catch (error) {
    const e = error as { code?: string; pid?: number; errno?: string; path?: string };
    writeSync(1, `error ${e.code} ${e.pid ?? e.errno} ${e.path}\n`);
  }
} else if (mode === "hold") {
  // holds a session open until killed
  const [id] = process.argv.slice(4) as [string];
  const opened = await openSession({ dir, id });
  writeSync(1, `held ${opened.log.nextSeq}\n`);
  setInterval(() => {}, 1000);
} else {
  throw new Error(`unknown mode ${mode}`);
}
