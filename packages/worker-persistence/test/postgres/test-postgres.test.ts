import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { findPostgresBinDir } from "../../src/postgres/testing/index.ts";

// Without PostgreSQL server binaries these tests skip, unless YOI_REQUIRE_POSTGRES=1 (CI sets it).
const withPostgres = findPostgresBinDir() !== undefined || process.env.YOI_REQUIRE_POSTGRES === "1";
const CHILD = fileURLToPath(new URL("./pg-owner-child.ts", import.meta.url));

/** True while something accepts connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

describe.skipIf(!withPostgres)("startTestPostgres", () => {
  it("stops the server and removes its directory when the process that started it is killed", async () => {
    const child = spawn(process.execPath, ["--conditions=@yoi/source", "--no-warnings", CHILD], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const started = await new Promise<{ port: number; dir: string }>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("\n")) resolve(JSON.parse(out.split("\n")[0]!) as { port: number; dir: string });
      });
      child.on("exit", (code) =>
        reject(new Error(`the child exited (${code}) before its server was up: ${err}`)),
      );
    });
    expect(await listening(started.port)).toBe(true);
    expect(existsSync(started.dir)).toBe(true);

    // SIGKILL: no exit handler of the child runs; only the watchdog can clean up.
    child.kill("SIGKILL");
    const deadline = Date.now() + 30_000;
    while ((await listening(started.port)) || existsSync(started.dir)) {
      if (Date.now() > deadline)
        throw new Error(`the server on port ${started.port} outlived its owner by 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 90_000);
});
