/** Session access in PostgreSQL: a row per owner and member (`yoi_session_access`). */
import type { Sql } from "postgres";
import type { SessionAccess, SessionAccessStore } from "../session-store-port.ts";
import { dbIoError } from "./pg-error.ts";

export class PgSessionAccess implements SessionAccessStore {
  readonly #sql: Sql;
  readonly #location: string;

  constructor(sql: Sql, location: string) {
    this.#sql = sql;
    this.#location = location;
  }

  async get(id: string): Promise<SessionAccess> {
    const rows = await this.#run(
      "read the users of a session",
      () => this.#sql<{ principal: string; role: string }[]>`
        SELECT principal, role FROM yoi_session_access WHERE session_id = ${id} ORDER BY granted_at, principal`,
    );
    return {
      owner: rows.find((r) => r.role === "owner")?.principal,
      members: rows.filter((r) => r.role === "member").map((r) => r.principal),
    };
  }

  async setOwner(id: string, owner: string): Promise<void> {
    await this.#run(
      "record a session's owner",
      () => this.#sql`
        INSERT INTO yoi_session_access (session_id, principal, role) VALUES (${id}, ${owner}, 'owner')
        ON CONFLICT (session_id, principal) DO UPDATE SET role = 'owner'`,
    );
  }

  async grant(id: string, member: string): Promise<void> {
    await this.#run(
      "grant a session",
      () => this.#sql`
        INSERT INTO yoi_session_access (session_id, principal, role) VALUES (${id}, ${member}, 'member')
        ON CONFLICT (session_id, principal) DO NOTHING`,
    );
  }

  async visibleTo(user: string): Promise<Set<string>> {
    const rows = await this.#run(
      "list a user's sessions",
      () => this.#sql<{ session_id: string }[]>`
        SELECT session_id FROM yoi_session_access WHERE principal = ${user}`,
    );
    return new Set(rows.map((r) => r.session_id));
  }

  #run<T>(action: string, query: () => Promise<T>): Promise<T> {
    return query().catch((error: unknown) => Promise.reject(dbIoError(this.#location, action, error)));
  }
}
