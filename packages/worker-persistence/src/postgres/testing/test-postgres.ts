/**
 * A real, throwaway PostgreSQL server for tests and benchmarks: the system's
 * server binaries (`/usr/lib/postgresql/<v>/bin`, or `pg_config --bindir`) on
 * a temporary data directory, listening on 127.0.0.1 only, its socket in the
 * same temporary directory. initdb refuses to run as root, so under root the
 * server runs as the `postgres` user (`runuser`), which owns the directory.
 *
 * `pg_ctl` starts the server as a daemon, so it outlives the process that
 * started it. A watchdog (a detached `sh`) stops it and removes its
 * directory once that process is gone, however it ended: a test run killed
 * mid-way (Ctrl-C twice, a CI timeout, SIGKILL) leaves no server behind.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chown, mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A running test server. */
export interface TestPostgres {
  /** `postgres://yoi@127.0.0.1:<port>/postgres` (trust auth, no password). */
  readonly url: string;
  readonly port: number;
  /** The server's temporary directory (data, socket, log), removed by `stop`. */
  readonly dir: string;
  /** Creates an empty database and returns its URL (one per test keeps tests independent). */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server immediately (`pg_ctl stop -m immediate`): clients see their connections drop. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data directory after `kill`. */
  restart(): Promise<void>;
  /** Stops the server and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

export interface StartTestPostgresOptions {
  /** Directory of `initdb`, `pg_ctl` and `postgres`. Default: found on this machine. */
  binDir?: string;
}

/** Where the server binaries are, or undefined. */
export function findPostgresBinDir(): string | undefined {
  const fromEnv = process.env.YOI_TEST_PG_BIN;
  if (fromEnv && existsSync(join(fromEnv, "initdb"))) return fromEnv;
  const base = "/usr/lib/postgresql";
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => existsSync(join(base, v, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return join(base, versions[0], "bin");
  }
  for (const dir of ["/usr/local/pgsql/bin", "/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"]) {
    if (existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"))) return dir;
  }
  return undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a server (a few seconds: initdb plus start-up). Throws with what to
 * install when no PostgreSQL server binaries are found.
 */
export async function startTestPostgres(options: StartTestPostgresOptions = {}): Promise<TestPostgres> {
  const binDir = options.binDir ?? findPostgresBinDir();
  if (binDir === undefined) {
    throw new Error(
      "no PostgreSQL server binaries (initdb, pg_ctl) found: install them (Debian: apt-get install -y postgresql) or set YOI_TEST_PG_BIN to their directory",
    );
  }
  const root = await mkdtemp(join(tmpdir(), "yoi-pg-"));
  const dataDir = join(root, "data");
  const logFile = join(root, "server.log");
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    await chown(root, Number(stdout.trim()), Number(gid.trim()));
  }
  const exec = async (bin: string, args: string[]): Promise<void> => {
    const file = join(binDir, bin);
    try {
      if (asRoot) await run("runuser", ["-u", "postgres", "--", file, ...args], { cwd: root });
      else await run(file, args, { cwd: root });
    } catch (error) {
      const log = await readFile(logFile, "utf8").catch(() => "");
      const e = error as { stderr?: string; message: string };
      throw new Error(
        `${bin} failed: ${e.stderr || e.message}${log ? `\nserver log:\n${log.slice(-2000)}` : ""}`,
      );
    }
  };
  await exec("initdb", [
    "-D",
    dataDir,
    "-U",
    "yoi",
    "--auth=trust",
    "-E",
    "UTF8",
    "--no-sync",
    "--no-instructions",
  ]);
  const port = await freePort();
  const serverOptions = [
    `-p ${port}`,
    "-h 127.0.0.1",
    `-k ${root}`,
    // fsync off: an OS crash is not what tests simulate; a killed server keeps every commit (synchronous_commit stays on)
    "-c fsync=off",
    "-c full_page_writes=off",
    "-c max_connections=300",
    "-c shared_buffers=32MB",
  ].join(" ");
  const start = () =>
    exec("pg_ctl", ["-D", dataDir, "-l", logFile, "-w", "-t", "60", "-o", serverOptions, "start"]);
  await start();
  const watchdog = startWatchdog({ binDir, dataDir, root, asRoot });
  const url = `postgres://yoi@127.0.0.1:${port}/postgres`;
  let stopped = false;
  let counter = 0;
  return {
    url,
    port,
    dir: root,
    async createDatabase(name) {
      const db = name ?? `t${process.pid}_${++counter}_${Date.now().toString(36)}`;
      if (!/^[a-z_][a-z0-9_]*$/.test(db)) throw new Error(`bad test database name ${db}`);
      const args = ["-h", "127.0.0.1", "-p", String(port), "-U", "yoi", "-d", "postgres", "-qc"];
      // psql may not sit next to the server binaries; then the one on the PATH.
      if (existsSync(join(binDir, "psql"))) await exec("psql", [...args, `CREATE DATABASE ${db}`]);
      else await run("psql", [...args, `CREATE DATABASE ${db}`]);
      return `postgres://yoi@127.0.0.1:${port}/${db}`;
    },
    async kill() {
      await exec("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
    },
    async restart() {
      await start();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      watchdog.kill();
      await exec("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]).catch(() => {});
      await rm(root, { recursive: true, force: true });
    },
  };
}

/**
 * Polls once a second, in a detached shell of its own, whether this
 * process still exists; when it does not, stops the server (`pg_ctl stop
 * -m immediate`, as `postgres` under root) and removes `root`. The values
 * go in as the shell's arguments, never into its script text.
 */
function startWatchdog(o: { binDir: string; dataDir: string; root: string; asRoot: boolean }) {
  const script = `while kill -0 "$1" 2>/dev/null; do sleep 1; done
if [ "$5" = 1 ]; then runuser -u postgres -- "$2/pg_ctl" -D "$3" -m immediate -w stop; else "$2/pg_ctl" -D "$3" -m immediate -w stop; fi
rm -rf -- "$4"`;
  const args = [String(process.pid), o.binDir, o.dataDir, o.root, o.asRoot ? "1" : "0"];
  const child = spawn("sh", ["-c", script, "yoi-test-postgres-watchdog", ...args], {
    detached: true,
    stdio: "ignore",
  });
  // The watchdog must not keep this process alive, nor die with its process group.
  child.unref();
  // A shell that cannot start only means no clean-up after a crash; the server itself runs.
  child.on("error", () => {});
  return {
    kill(): void {
      try {
        child.kill();
      } catch {
        // already gone
      }
    },
  };
}
