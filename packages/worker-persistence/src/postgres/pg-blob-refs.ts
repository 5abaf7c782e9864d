import type { Sql } from "postgres";
import { collectBlobRefs } from "../blob-refs.ts";
import { recordProblem, type SessionRecord } from "../session-records.ts";

/**
 * Every blob id referenced by any record of any session in the database
 * (current history or not), for `PgBlobStore.gc({ liveRefs })`: the
 * PostgreSQL form of `sessionBlobRefs`. Streams the item and
 * history_replaced records in batches.
 */
export async function pgSessionBlobRefs(sql: Sql): Promise<Set<string>> {
  const refs = new Set<string>();
  for await (const rows of sql<{ line: string }[]>`
    SELECT line FROM yoi_session_records
    WHERE type IN ('item', 'history_replaced') AND (line LIKE '%[blob:%' OR line LIKE '%"outputRef"%')`.cursor(
    500,
  )) {
    for (const { line } of rows) {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue;
      }
      if (recordProblem(value) !== undefined) continue;
      const record = value as SessionRecord;
      if (record.type === "item") collectBlobRefs([record.item], refs);
      else if (record.type === "history_replaced") collectBlobRefs(record.history, refs);
    }
  }
  return refs;
}
