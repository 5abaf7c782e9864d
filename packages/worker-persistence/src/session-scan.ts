/**
 * Streaming reader of a session log. Reads the file in large chunks, decodes
 * only whole lines (up to the last newline of a chunk, which is always a
 * character boundary) and parses each line, so memory stays at one chunk
 * plus what the caller keeps, and speed stays at `JSON.parse`'s.
 *
 * Recovery rules:
 * - Bytes after the last newline are a torn tail (a crash mid-append: the
 *   append never returned). They are reported, never returned as records.
 * - A line that does not parse is salvaged if it can be: NUL runs (left by
 *   a crash on some file systems) are dropped, and records glued together
 *   (a torn line followed by the next append) are split at `{"v":`.
 *   Whatever cannot be salvaged is skipped with a warning; the lines after
 *   it still load.
 * - Unparsable lines at the very end of the file are part of the torn tail:
 *   nothing after them depends on them. (Valid JSON a reader cannot apply,
 *   such as a newer format's record, is skipped but never truncated.)
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { errnoOf } from "./fs-errors.ts";
import { SessionLogError, sessionIoError } from "./session-error.ts";
import { recordProblem, type SessionRecord } from "./session-records.ts";

/** A problem found while reading a log; the load went on past it. */
export interface SessionWarning {
  /** 1-based line number (0 for whole-file remarks). */
  line: number;
  /** Byte offset of the line's start. */
  offset: number;
  message: string;
}

export interface ScanResult {
  /** Size of the file when the scan started (the scan reads no further). */
  fileSize: number;
  /**
   * Where the valid log ends: the offset after the last line that loaded.
   * Everything from here to `fileSize` is a torn tail that an opener for
   * append truncates.
   */
  validBytes: number;
  /** Lines read (terminated ones). */
  lines: number;
  warnings: SessionWarning[];
}

const CHUNK = 1 << 20;
const RECORD_START = '{"v":';

/**
 * Reads `path` and calls `onRecord` for each valid record in file order.
 * Rejects with `SessionLogError` (`not_found`, `io`) when the file cannot be read.
 */
export async function scanSessionFile(
  path: string,
  onRecord: (record: SessionRecord, line: number) => void,
): Promise<ScanResult> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if (errnoOf(error) === "ENOENT")
      throw new SessionLogError("not_found", `no session log at ${path}`, { path });
    throw sessionIoError("open the session log", path, error);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new SessionLogError("io", `${path} is not a regular file`, { path });
    return await scanHandle(handle, info.size, onRecord);
  } catch (error) {
    throw sessionIoError("read the session log", path, error);
  } finally {
    await handle.close().catch(() => {});
  }
}

async function scanHandle(
  handle: Awaited<ReturnType<typeof open>>,
  fileSize: number,
  onRecord: (record: SessionRecord, line: number) => void,
): Promise<ScanResult> {
  const warnings: SessionWarning[] = [];
  let buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(fileSize, 1)));
  let filled = 0; // bytes in buf
  let bufStart = 0; // file offset of buf[0]
  let lineNo = 0;
  // Set when bad lines follow the last good one; they become torn tail at EOF.
  let trailingBadFrom = -1;
  let trailingBadWarnings = 0;

  while (bufStart + filled < fileSize) {
    if (filled === buf.length) {
      // A line longer than the buffer: grow it.
      const bigger = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(bigger, 0, 0, filled);
      buf = bigger;
    }
    const want = Math.min(buf.length - filled, fileSize - bufStart - filled);
    const { bytesRead } = await handle.read(buf, filled, want, bufStart + filled);
    if (bytesRead === 0) break; // truncated under us: stop at what exists
    filled += bytesRead;
    const lastNl = buf.lastIndexOf(10, filled - 1);
    if (lastNl < 0) continue;

    const text = buf.toString("utf8", 0, lastNl);
    const lines = text.split("\n");
    let charPos = 0;
    for (const line of lines) {
      lineNo++;
      const parsed = parseLine(line);
      if (parsed.records.length > 0) {
        for (const record of parsed.records) onRecord(record, lineNo);
        trailingBadFrom = -1;
        trailingBadWarnings = 0;
      }
      if (parsed.problem !== undefined) {
        const offset = bufStart + Buffer.byteLength(text.slice(0, charPos), "utf8");
        warnings.push({ line: lineNo, offset, message: parsed.problem });
        if (parsed.damaged) {
          if (trailingBadFrom < 0) trailingBadFrom = offset;
          trailingBadWarnings++;
        } else if (parsed.records.length === 0) {
          // valid JSON this reader cannot apply (e.g. a newer format): never truncated
          trailingBadFrom = -1;
          trailingBadWarnings = 0;
        }
      }
      charPos += line.length + 1;
    }
    bufStart += lastNl + 1;
    buf.copy(buf, 0, lastNl + 1, filled);
    filled -= lastNl + 1;
  }
  const endOfLines = bufStart;
  const validBytes = trailingBadFrom >= 0 ? trailingBadFrom : endOfLines;
  if (trailingBadFrom >= 0) {
    // The bad lines at EOF are the torn tail; say so once instead of per line.
    warnings.splice(warnings.length - trailingBadWarnings, trailingBadWarnings);
  }
  const tornBytes = fileSize - validBytes;
  if (tornBytes > 0) {
    warnings.push({
      line: lineNo + (filled > 0 ? 1 : 0),
      offset: validBytes,
      message: `torn tail: ${tornBytes} byte(s) at the end of the log are not a complete record (a crash during an append); they are ignored and truncated when the session is next opened for writing`,
    });
  }
  return { fileSize, validBytes, lines: lineNo, warnings };
}

interface ParsedLine {
  records: SessionRecord[];
  problem?: string;
  /** No record could be recovered from bytes that are not JSON: torn-tail material at EOF. */
  damaged?: boolean;
}

function parseLine(line: string): ParsedLine {
  if (line.length === 0) return { records: [], problem: "empty line", damaged: true };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return salvage(line);
  }
  const problem = recordProblem(value);
  return problem === undefined
    ? { records: [value as SessionRecord] }
    : { records: [], problem: `skipped: ${problem}` };
}

/** Recovers the whole records inside a damaged line. */
function salvage(line: string): ParsedLine {
  const hadNul = line.includes("\0");
  const cleaned = hadNul ? line.replaceAll("\0", "") : line;
  const starts: number[] = [];
  for (let i = cleaned.indexOf(RECORD_START); i >= 0; i = cleaned.indexOf(RECORD_START, i + 1))
    starts.push(i);
  starts.push(cleaned.length);
  const records: SessionRecord[] = [];
  let dropped = starts[0] === undefined ? cleaned.length : (starts[0] as number);
  let i = 0;
  // `{"v":` may also begin a nested object inside a record, so a segment is
  // extended across later starts until it parses.
  while (i < starts.length - 1) {
    const from = starts[i] as number;
    let parsedTo = -1;
    for (let j = i + 1; j < starts.length && j <= i + 64; j++) {
      try {
        const value: unknown = JSON.parse(cleaned.slice(from, starts[j]));
        if (recordProblem(value) === undefined) {
          records.push(value as SessionRecord);
          parsedTo = j;
          break;
        }
      } catch {
        // keep extending
      }
    }
    if (parsedTo < 0) {
      dropped += (starts[i + 1] as number) - from;
      i++;
    } else {
      i = parsedTo;
    }
  }
  const what: string[] = [];
  if (hadNul) what.push("NUL bytes removed");
  if (records.length > 1) what.push(`${records.length} records glued on one line were split`);
  if (dropped > 0) what.push(`${dropped} character(s) of damaged data skipped`);
  if (records.length === 0) {
    const sample = JSON.stringify(line.slice(0, 60));
    return {
      records,
      damaged: true,
      problem: `skipped: not a valid record${hadNul ? " (NUL bytes)" : ""}: ${sample}${line.length > 60 ? "..." : ""}`,
    };
  }
  return { records, problem: `recovered ${records.length} record(s): ${what.join("; ")}` };
}
