/**
 * The pod's session-log writer against the real file store: a new
 * session's log is created by the first record that opens it, records
 * raised earlier go right after session_start, and a log that cannot be
 * written is reported once and takes no more records.
 */
import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { FileSessionStore, loadSession } from "@yoi/worker-persistence";
import { describe, expect, it } from "vitest";
import { SessionLog } from "../src/session/session-log.ts";
import { tempDir } from "./helpers.ts";

const META = { model: "claude-haiku-4-5", provider: "anthropic", permissionMode: "default" } as const;

describe("SessionLog", () => {
  it("creates the log at the first record that opens it, with earlier records right after session_start", async () => {
    const dir = await tempDir();
    const store = new FileSessionStore({ dir, fsync: "never" });
    let creates = 0;
    const failures: unknown[] = [];
    const log = new SessionLog({
      create: (meta) => {
        creates++;
        return store.create({ id: "0190a0a0-0000-7000-8000-000000000001", ...meta });
      },
      startMeta: () => META,
      onFailure: (error) => failures.push(error),
    });
    log.append((w) => w.alert("warn", "test", "before the session began"), { opens: false });
    expect(log.started).toBe(false);
    expect(creates).toBe(0);
    log.append((w) => w.userInput("hello", undefined));
    // Created now, not on a later turn of the event loop.
    expect(log.started).toBe(true);
    expect(creates).toBe(1);
    log.append((w) => w.userInput("again", undefined));
    await log.close();
    expect(creates).toBe(1);
    expect(failures).toEqual([]);
    const loaded = await loadSession({ dir, id: "0190a0a0-0000-7000-8000-000000000001" });
    expect(loaded.records.map((r) => r.type)).toEqual(["session_start", "alert", "user_input", "user_input"]);
    expect(loaded.records[0]).toMatchObject(META);
  });

  it("a session that never began writes nothing; records after close are dropped", async () => {
    let creates = 0;
    const log = new SessionLog({
      create: async () => {
        creates++;
        throw new Error("not expected");
      },
      startMeta: () => META,
      onFailure: () => {},
    });
    log.append((w) => w.alert("info", "test", "nobody typed"), { opens: false });
    await log.close();
    log.append((w) => w.userInput("too late", undefined));
    await log.flush();
    expect(creates).toBe(0);
    expect(log.writer).toBeUndefined();
  });

  it("a log that cannot be written is reported once, and later records are dropped", async () => {
    const base = await tempDir();
    const notADir = path.join(base, "file");
    await writeFile(notADir, "x");
    const store = new FileSessionStore({ dir: notADir, fsync: "never" });
    const failures: unknown[] = [];
    const log = new SessionLog({
      create: (meta) => store.create(meta),
      startMeta: () => META,
      onFailure: (error) => failures.push(error),
    });
    log.append((w) => w.userInput("one", undefined));
    log.append((w) => w.userInput("two", undefined));
    await log.flush();
    expect(failures).toHaveLength(1);
    log.append((w) => w.userInput("three", undefined));
    await log.flush();
    expect(failures).toHaveLength(1);
    expect(log.writer).toBeUndefined();
    await log.close();
  });
});
