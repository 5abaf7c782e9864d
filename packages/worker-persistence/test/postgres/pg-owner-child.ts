/** Starts a test PostgreSQL server, says where it is, and stays up until it is killed (test-postgres.test.ts). */
import { startTestPostgres } from "../../src/postgres/testing/index.ts";

const pg = await startTestPostgres();
process.stdout.write(`${JSON.stringify({ port: pg.port, dir: pg.dir })}\n`);
setInterval(() => {}, 60_000);
