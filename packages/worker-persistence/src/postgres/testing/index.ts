export {
  findPostgresBinDir,
  type StartTestPostgresOptions,
  startTestPostgres,
  type TestPostgres,
} from "./test-postgres.ts";
