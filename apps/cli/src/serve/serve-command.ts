/**
 * `yoi serve`: opens the store (PostgreSQL for a postgres:// URL, else the
 * local files), checks the auth rule, and serves until SIGINT/SIGTERM.
 */
import { realpath, stat } from "node:fs/promises";
import { hostname } from "node:os";
import * as path from "node:path";
import { errorMessage } from "@yoi/manifest/errors";
import type { Command } from "../args.ts";
import { CliError, usageError } from "../cli-error.ts";
import { EXIT } from "../exit-codes.ts";
import { applyPermissionFlags } from "../permission-flags.ts";
import { loadCliConfig } from "../session-setup.ts";
import { sanitize } from "../terminal-text.ts";
import { cliVersion } from "../version.ts";
import { boundYoungGeneration } from "../young-generation.ts";
import { isLoopback } from "./auth.ts";
import { startServeServer } from "./serve-server.ts";
import { openServeStore, type ServeStore } from "./serve-store.ts";
import { SessionHost } from "./session-host.ts";
import { ServeUsers } from "./users.ts";

export async function serveCommand(command: Extract<Command, { kind: "serve" }>): Promise<number> {
  boundYoungGeneration();
  const env = process.env;
  const users = new ServeUsers({
    adminToken: env.YOI_SERVE_TOKEN?.trim() || undefined,
    file: command.tokenFile === undefined ? undefined : path.resolve(command.tokenFile),
  });
  if (!users.required && !isLoopback(command.host)) {
    throw usageError(
      `yoi serve --host ${command.host} accepts connections from other machines: set YOI_SERVE_TOKEN to a secret that clients send as "Authorization: Bearer <token>", or give users tokens with --token-file`,
    );
  }
  try {
    await users.load();
  } catch (error) {
    throw usageError(`--token-file: ${errorMessage(error)}`);
  }
  const storeArg = command.store ?? (env.YOI_STORE?.trim() || undefined);
  const scheme = storeArg === undefined ? undefined : /^([a-z][a-z0-9+.-]*):\/\//i.exec(storeArg)?.[1];
  if (scheme !== undefined && !/^postgres(ql)?$/i.test(scheme)) {
    throw usageError(
      `${command.store !== undefined ? "--store" : "YOI_STORE"} must be a postgres:// URL or a directory; got a ${scheme}:// URL`,
    );
  }
  const cli = await loadCliConfig({ ...(command.flags.cwd ? { cwd: command.flags.cwd } : {}) });
  // bad permission flags are a usage error now, not a failure of every session later
  applyPermissionFlags(cli, command.flags);
  // symlinks resolved: a session's directory is compared with them after resolving its own
  const roots = await realDirs("--root", command.roots.length > 0 ? command.roots : [cli.cwd], cli.cwd);
  const trustedProjects = await realDirs("--trust-project", command.trustProjects, cli.cwd);
  const holder = `${hostname()}:${process.pid}`;
  const leaseMs = env.YOI_SERVE_LEASE_MS ? Number(env.YOI_SERVE_LEASE_MS) : undefined;
  if (leaseMs !== undefined && !(Number.isInteger(leaseMs) && leaseMs >= 300)) {
    throw usageError(
      `YOI_SERVE_LEASE_MS must be a whole number of milliseconds, at least 300; got "${env.YOI_SERVE_LEASE_MS}"`,
    );
  }
  const requestTimeoutMs = env.YOI_SERVE_REQUEST_TIMEOUT_MS
    ? Number(env.YOI_SERVE_REQUEST_TIMEOUT_MS)
    : undefined;
  if (requestTimeoutMs !== undefined && !(Number.isInteger(requestTimeoutMs) && requestTimeoutMs >= 100)) {
    throw usageError(
      `YOI_SERVE_REQUEST_TIMEOUT_MS must be a whole number of milliseconds, at least 100; got "${env.YOI_SERVE_REQUEST_TIMEOUT_MS}"`,
    );
  }
  const graceMs = env.YOI_SERVE_SHUTDOWN_GRACE_MS ? Number(env.YOI_SERVE_SHUTDOWN_GRACE_MS) : 30_000;
  if (!(Number.isInteger(graceMs) && graceMs >= 0)) {
    throw usageError(
      `YOI_SERVE_SHUTDOWN_GRACE_MS must be a whole number of milliseconds (0 cancels runs at once); got "${env.YOI_SERVE_SHUTDOWN_GRACE_MS}"`,
    );
  }
  const idleMs = env.YOI_SERVE_IDLE_MS ? Number(env.YOI_SERVE_IDLE_MS) : undefined;
  if (idleMs !== undefined && !(Number.isInteger(idleMs) && idleMs >= 0)) {
    throw usageError(
      `YOI_SERVE_IDLE_MS must be a whole number of milliseconds (0 closes a session after each run); got "${env.YOI_SERVE_IDLE_MS}"`,
    );
  }
  // The store reports a lost lease; the host (made once the store is open) drops that session.
  let host: SessionHost | undefined;
  let store: ServeStore;
  try {
    store = await openServeStore({
      store: storeArg === undefined || scheme !== undefined ? storeArg : path.resolve(storeArg),
      dataDir: cli.dataDir,
      holder,
      ...(leaseMs !== undefined ? { leaseMs } : {}),
      onLeaseLost: (id, reason) => {
        process.stderr.write(sanitize(`yoi serve: lost the lease on session ${id}: ${reason}\n`));
        host?.leaseLost(id, reason);
      },
    });
  } catch (error) {
    if (CliError.isInstance(error)) throw error;
    throw new CliError(errorMessage(error).split("\n")[0] as string, EXIT.error, { cause: error });
  }
  // What the model's tools (bash) inherit must not carry the database's credentials.
  delete process.env.YOI_STORE;
  delete process.env.PGPASSWORD;
  // nor the administrator's token
  delete process.env.YOI_SERVE_TOKEN;
  host = new SessionHost({
    store,
    roots,
    trustedProjects,
    defaults: command.flags,
    log: (line) => process.stderr.write(`yoi serve: ${sanitize(line)}\n`),
    env: process.env,
    appVersion: cliVersion(),
    ...(idleMs !== undefined ? { idleMs } : {}),
  });
  try {
    await host.start();
  } catch (error) {
    await store.close().catch(() => {});
    throw new CliError(errorMessage(error).split("\n")[0] as string, EXIT.error, { cause: error });
  }
  let server: Awaited<ReturnType<typeof startServeServer>>;
  try {
    server = await startServeServer(
      {
        host,
        users,
        version: cliVersion(),
        ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}),
        // A request's error may quote what a client sent: shown, never acted on by the terminal.
        onError: (line) => process.stderr.write(`yoi serve: ${sanitize(line)}\n`),
      },
      { port: command.port, hostname: command.host },
    );
  } catch (error) {
    await store.close().catch(() => {});
    const code = (error as { code?: string }).code;
    throw new CliError(
      code === "EADDRINUSE"
        ? `port ${command.port} on ${command.host} is in use; choose another with --port (0 picks a free one)`
        : `cannot listen on ${command.host}:${command.port}: ${errorMessage(error)}`,
      EXIT.error,
    );
  }
  process.stderr.write(
    `yoi serve: listening on ${server.url} (sessions in ${store.location}; root${roots.length > 1 ? "s" : ""} ${roots.join(", ")}; host ${holder}${users.required ? `; bearer token required${command.tokenFile !== undefined ? `, ${users.count} user${users.count === 1 ? "" : "s"}` : ""}` : ""})\n`,
  );
  // SIGHUP re-reads the token file; a file that no longer parses keeps the users it had.
  const reload = () => {
    users.load().then(
      () =>
        process.stderr.write(
          `yoi serve: reloaded ${users.count} user${users.count === 1 ? "" : "s"} from the token file\n`,
        ),
      (error: unknown) =>
        process.stderr.write(
          `yoi serve: ${sanitize(errorMessage(error))}; keeping the ${users.count} user${users.count === 1 ? "" : "s"} read before\n`,
        ),
    );
  };
  if (command.tokenFile !== undefined) process.on("SIGHUP", reload);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  // A second signal stops waiting for running runs: they are cancelled now.
  const impatient = new AbortController();
  const again = () => impatient.abort();
  process.once("SIGINT", again);
  process.once("SIGTERM", again);
  process.stderr.write("yoi serve: shutting down\n");
  await server.close({
    graceMs,
    stopWaiting: impatient.signal,
    onWaiting: (runs) =>
      process.stderr.write(
        `yoi serve: waiting up to ${Math.round(graceMs / 1000)} s for ${runs} running run${runs === 1 ? "" : "s"} to finish (signal again to cancel them now)\n`,
      ),
  });
  await store.close().catch(() => {});
  return EXIT.ok;
}

/** Each directory as it really is (relative ones against `cwd`); a usage error naming the flag when one is not a directory. */
async function realDirs(flag: string, dirs: readonly string[], cwd: string): Promise<string[]> {
  const out: string[] = [];
  for (const dir of dirs) {
    const wanted = path.resolve(cwd, dir);
    const real = await realpath(wanted).catch(() => undefined);
    if (real === undefined || !(await stat(real)).isDirectory()) {
      throw usageError(`${flag} ${dir}: ${wanted} is not a directory`);
    }
    out.push(real);
  }
  return out;
}
