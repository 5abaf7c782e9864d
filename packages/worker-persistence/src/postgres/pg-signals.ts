/**
 * Short messages between the hosts of one database, on PostgreSQL's
 * `LISTEN`/`NOTIFY`: "session X has records up to seq N", who is watching a
 * session, a permission question waiting on another host. A notification
 * is delivered to every listening connection once its transaction commits;
 * it is not stored, so a host that was not listening misses it: readers
 * keep their own place (a seq) and read the records themselves.
 */
import type { Sql } from "postgres";
import { dbIoError } from "./pg-error.ts";

/** The channel every yoi host of a database listens on. */
const CHANNEL = "yoi_session_signals";
/** PostgreSQL refuses a payload of 8000 bytes or more. */
export const MAX_SIGNAL_BYTES = 7900;

export class PgSignals {
  readonly #sql: Sql;
  readonly #location: string;

  /** @internal Use `PgStore.connect(...).signals`. */
  constructor(sql: Sql, location: string) {
    this.#sql = sql;
    this.#location = location;
  }

  /**
   * Sends `payload` to every listening host (this one too). Rejects with a
   * `RangeError` for a payload of {@link MAX_SIGNAL_BYTES} or more, and with
   * an `io` SessionLogError when the database cannot be reached.
   */
  async publish(payload: string): Promise<void> {
    if (Buffer.byteLength(payload) >= MAX_SIGNAL_BYTES) {
      throw new RangeError(
        `a signal is at most ${MAX_SIGNAL_BYTES} bytes; got ${Buffer.byteLength(payload)}`,
      );
    }
    try {
      await this.#sql.notify(CHANNEL, payload);
    } catch (error) {
      throw dbIoError(this.#location, "send a signal", error);
    }
  }

  /**
   * Calls `listener` with each payload (the driver keeps one connection
   * listening and listens again after a reconnect). Resolves once listening,
   * with the function that stops it.
   */
  async subscribe(listener: (payload: string) => void): Promise<() => Promise<void>> {
    try {
      const { unlisten } = await this.#sql.listen(CHANNEL, listener);
      return unlisten;
    } catch (error) {
      throw dbIoError(this.#location, "listen for signals", error);
    }
  }
}
