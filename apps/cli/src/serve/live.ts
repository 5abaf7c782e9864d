/**
 * Live shared sessions: `GET /v1/sessions/{id}/events`. Any member attached
 * to a session sees every run of it as it happens, on whichever host runs it.
 *
 * Where the events come from:
 * - A run on this host hands each event it streams (after the records it
 *   implies are stored) to {@link LiveSessions.publish}; attached clients
 *   get exactly what the run's own stream sends, deltas included.
 * - A run on another host is followed through the session log: the records
 *   above the client's place are read (`recordsAfter`) and told as the same
 *   event types ({@link recordEvents}); text arrives a message at a time.
 *   On PostgreSQL the holder signals new records and its questions,
 *   results and queue over `LISTEN`/`NOTIFY`, and a slow poll covers a lost
 *   signal; on the file store (hosts sharing a data directory) the log is
 *   polled, since files have no notifications to wait on.
 *
 * Each event's SSE `id` is `<seq>` or `<seq>.<n>`: every record up to that
 * seq was told to the client before it, so `Last-Event-ID` resumes with
 * every stored record after it; events that are not stored (deltas,
 * presence) may be missed across a reconnect. Read from the log, the seq is
 * the record's own. A run here streams its events a little after their
 * records are stored (the tools of a turn start after all its calls are
 * stored), so its events carry the seq of the last safe point instead: the
 * run's start, each model request (every event before it was sent) and its
 * end; a resume within a turn tells the turn's records again, from the log.
 */
import type { ServerResponse } from "node:http";
import { messageText, redactDeep, redactedJson } from "@yoi/llm-client";
import { errorMessage } from "@yoi/manifest/errors";
import type { StreamJsonEvent } from "@yoi/pod";
import type { SessionRecord } from "@yoi/worker-persistence";
import { HttpError } from "./http-error.ts";
import { SSE_HEADERS } from "./http-io.ts";

/** What an attached client is shown besides a run's own events. */
export type LiveEvent =
  | StreamJsonEvent
  /** A message was sent to the session (by `author`, on a server with users). */
  | { type: "prompt"; text: string; author?: string; turn?: number }
  /** Who is attached now (user names; the administrator's token shows as `(administrator)`). */
  | { type: "presence"; users: string[]; joined?: string; left?: string }
  /** A message waits for the run in progress; `position` 1 runs next. */
  | { type: "queued"; queue_id: string; prompt: string; author?: string; position: number }
  /** A queued message left the queue: its run `started`, or it was `dropped` (its client left, nobody watching). */
  | { type: "unqueued"; queue_id: string; reason: "started" | "dropped" }
  /*
   * Read back from the log (a run on another host, or a resume): the same
   * types with the fields the log keeps, marked `from_log`.
   */
  | { type: "tool_start"; id: string; name: string; args: unknown; turn: number; from_log: true }
  | {
      type: "tool_end";
      id: string;
      name: string;
      is_error: boolean;
      output_bytes: number;
      preview: string;
      from_log: true;
    }
  | { type: "turn_end"; turn: number; stop_reason?: string; from_log: true }
  | { type: "text" | "thinking"; turn: number; text: string; from_log: true };

/** How the administrator (no user name) is shown in presence. */
export const ADMIN_NAME = "(administrator)";

/** Signals between hosts; `undefined` where the store has none (files). */
export interface LiveSignals {
  publish(payload: string): Promise<void>;
  subscribe(listener: (payload: string) => void): Promise<() => Promise<void>>;
}

export interface LiveSessionsOptions {
  /** This host's name (signals it sent itself are ignored). */
  holder: string;
  records(id: string, afterSeq: number): Promise<SessionRecord[]>;
  /** How large the session's log is now (files): a poll reads the log only when it grew. */
  logSize?: (id: string) => Promise<number | undefined>;
  signals?: LiveSignals | undefined;
  /** How often a session run elsewhere is read for new records, ms. */
  pollMs: number;
  /** Comment lines that keep idle streams open (and presence refreshed), ms. */
  keepAliveMs: number;
  /** The last user left a session: its run may have nobody to report to. */
  onUnwatched?: (id: string) => void;
  /** Another host forwarded an answer to a permission question (checked by the caller). */
  onAnswer?: (id: string, requestId: string, answer: unknown) => void;
  log?: (line: string) => void;
}

/** Events a run's host forwards to other hosts (small, and not kept in the log). */
const FORWARDED = new Set([
  "session",
  "permission_request",
  "permission",
  "retry",
  "warning",
  "todos",
  "result",
  "queued",
  "unqueued",
]);

/** Payloads a signal may carry (PostgreSQL refuses 8000 bytes and more). */
const SIGNAL_BYTES = 7000;

type Signal =
  | { s: string; h: string; k: "seq"; seq: number }
  | { s: string; h: string; k: "event"; w: number; e: LiveEvent }
  | { s: string; h: string; k: "presence"; users: string[]; ask?: boolean }
  | { s: string; h: string; k: "answer"; r: string; a: unknown };

/** An attached client. */
class Watcher {
  readonly user: string;
  readonly res: ServerResponse;
  /** The seq of the last record whose events were sent. */
  cursor: number;
  /** Events sent since that record. */
  sub = 0;
  /** Receiving a run of this host from its start: its events cover its records. */
  synced = false;
  #chain: Promise<void> = Promise.resolve();

  constructor(user: string, res: ServerResponse, cursor: number) {
    this.user = user;
    this.res = res;
    this.cursor = cursor;
  }

  get open(): boolean {
    return !this.res.writableEnded && !this.res.destroyed;
  }

  /** Runs `step` after every step before it (the events of one client stay in order). */
  after(step: () => Promise<void> | void): void {
    this.#chain = this.#chain.then(step).catch(() => {});
  }

  /** Sends an event that follows the record `seq` (undefined: the last one sent). */
  send(event: LiveEvent, seq?: number): void {
    if (!this.open) return;
    if (seq !== undefined && seq > this.cursor) {
      this.cursor = seq;
      this.sub = 0;
    } else this.sub++;
    const id = this.sub === 0 ? `${this.cursor}` : `${this.cursor}.${this.sub}`;
    this.res.write(`id: ${id}\ndata: ${redactedJson(event)}\n\n`);
  }
}

/** A session some client here watches, or that runs here. */
interface LiveSession {
  watchers: Set<Watcher>;
  /** Users attached on other hosts, by host, with when they were last said. */
  remote: Map<string, { users: string[]; at: number }>;
  /** A run of this host is in progress. */
  running: boolean;
  /** The run here's last safe point: every event of the records up to it was published. */
  boundary: number;
  /** Events of the run here that late comers must see (open permission questions, the queue). */
  standing: Map<string, LiveEvent>;
  poll?: NodeJS.Timeout;
  reading?: Promise<void>;
  /** The log's size at the last poll (files). */
  polledSize?: number;
}

export class LiveSessions {
  readonly #options: LiveSessionsOptions;
  readonly #sessions = new Map<string, LiveSession>();
  #unsubscribe: (() => Promise<void>) | undefined;
  #keepAlive: NodeJS.Timeout | undefined;

  constructor(options: LiveSessionsOptions) {
    this.#options = options;
  }

  /** Starts listening for other hosts' signals (when the store has them). */
  async start(): Promise<void> {
    const signals = this.#options.signals;
    if (signals !== undefined) this.#unsubscribe = await signals.subscribe((p) => this.#signal(p));
    this.#keepAlive = setInterval(() => this.#tick(), this.#options.keepAliveMs);
    this.#keepAlive.unref();
  }

  /** Ends every attached stream and stops listening. */
  async close(): Promise<void> {
    clearInterval(this.#keepAlive);
    for (const session of this.#sessions.values()) {
      clearInterval(session.poll);
      for (const w of session.watchers) w.res.end();
    }
    await this.#unsubscribe?.().catch(() => {});
  }

  /** Clients attached to the session, here and on other hosts. */
  watching(id: string): number {
    const session = this.#sessions.get(id);
    if (session === undefined) return 0;
    return session.watchers.size + [...this.#fresh(session)].reduce((n, [, e]) => n + e.users.length, 0);
  }

  /**
   * Attaches a client: the stream starts now (`from` undefined: with what
   * happens next; else with the records after seq `from`) and lasts until it
   * leaves. `latest` is the seq of the session's last record.
   */
  attach(id: string, user: string, res: ServerResponse, from: number | undefined, latest: number): void {
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
    const session = this.#session(id);
    const watcher = new Watcher(user, res, from ?? latest);
    session.watchers.add(watcher);
    res.once("close", () => this.#detach(id, session, watcher));
    // the records after the client's place, then the questions and queue of a run here
    watcher.after(() => this.#fill(id, watcher));
    watcher.after(() => {
      for (const event of session.standing.values()) watcher.send(event);
    });
    this.#presence(id, session, { joined: user });
    this.#follow(id, session);
  }

  /** A run of this host starts after the record `seq`: attached clients catch up to it, then take its events. */
  runStarted(id: string, seq: number): void {
    const session = this.#session(id);
    session.running = true;
    session.boundary = seq;
    clearInterval(session.poll);
    session.poll = undefined;
    for (const w of session.watchers) {
      w.after(async () => {
        await this.#fill(id, w, seq);
        w.synced = true;
      });
    }
  }

  /**
   * An event of a run here (or of its queue), sent once every record it
   * implies is stored; `seq` is the last stored record's.
   */
  publish(id: string, event: LiveEvent, seq: number): void {
    const session = this.#session(id);
    const boundary = session.boundary;
    if (event.type === "permission_request") session.standing.set(`permission:${event.request_id}`, event);
    if (event.type === "queued") session.standing.set(`queue:${event.queue_id}`, event);
    if (event.type === "unqueued") session.standing.delete(`queue:${event.queue_id}`);
    for (const w of session.watchers) {
      w.after(async () => {
        if (!w.synced) {
          // caught up from the log: it has every record up to `seq`
          await this.#fill(id, w, seq);
          if (session.running) w.synced = true;
          w.send(event, seq);
        } else w.send(event, boundary);
      });
    }
    if (this.#fresh(session).size > 0) {
      this.#signalOut({ s: id, h: this.#options.holder, k: "seq", seq });
      if (FORWARDED.has(event.type))
        this.#signalOut({ s: id, h: this.#options.holder, k: "event", w: seq, e: event });
    }
    if (!session.running) this.#forget(id, session);
  }

  /**
   * A safe point of the run here: every event of the records up to `seq`
   * has been published (a model request starts; the run ends).
   */
  mark(id: string, seq: number): void {
    const session = this.#sessions.get(id);
    if (session !== undefined && seq > session.boundary) session.boundary = seq;
  }

  /**
   * Sends an answer to a permission question to the host that runs the
   * session (the caller checked the user may answer); false without signals.
   */
  forward(id: string, requestId: string, answer: unknown): boolean {
    if (this.#options.signals === undefined) return false;
    this.#signalOut({ s: id, h: this.#options.holder, k: "answer", r: requestId, a: answer });
    return true;
  }

  /** A permission question of the run here was answered or withdrawn. */
  settled(id: string, requestId: string): void {
    this.#sessions.get(id)?.standing.delete(`permission:${requestId}`);
  }

  /** The run here ended (its `result` was published): clients follow the log again. */
  runEnded(id: string): void {
    const session = this.#sessions.get(id);
    if (session === undefined) return;
    session.running = false;
    for (const [key, e] of session.standing)
      if (e.type === "permission_request") session.standing.delete(key);
    for (const w of session.watchers)
      w.after(() => {
        w.synced = false;
      });
    this.#follow(id, session);
    this.#forget(id, session);
  }

  #session(id: string): LiveSession {
    let session = this.#sessions.get(id);
    if (session === undefined) {
      session = { watchers: new Set(), remote: new Map(), running: false, boundary: -1, standing: new Map() };
      this.#sessions.set(id, session);
    }
    return session;
  }

  /** Drops the session's state once nobody watches it and nothing runs here. */
  #forget(id: string, session: LiveSession): void {
    if (session.watchers.size > 0 || session.running || session.standing.size > 0) return;
    if (this.#fresh(session).size > 0) return;
    clearInterval(session.poll);
    this.#sessions.delete(id);
  }

  #detach(id: string, session: LiveSession, watcher: Watcher): void {
    if (!session.watchers.delete(watcher)) return;
    this.#presence(id, session, { left: watcher.user });
    if (session.watchers.size === 0) {
      clearInterval(session.poll);
      session.poll = undefined;
    }
    if (this.watching(id) === 0) this.#options.onUnwatched?.(id);
    this.#forget(id, session);
  }

  /** Reads the session's records periodically while clients watch it and it does not run here. */
  #follow(id: string, session: LiveSession): void {
    if (session.running || session.watchers.size === 0 || session.poll !== undefined) return;
    // with signals the poll only covers a lost one
    const every = this.#options.signals !== undefined ? this.#options.pollMs * 6 : this.#options.pollMs;
    session.poll = setInterval(() => this.#poll(id, session), every);
    session.poll.unref();
  }

  /** A poll: reads the log when it may have grown. */
  #poll(id: string, session: LiveSession): void {
    const logSize = this.#options.logSize;
    if (logSize === undefined) {
      this.#read(id, session);
      return;
    }
    if (session.reading !== undefined) return;
    void logSize(id).then(
      (size) => {
        if (size !== undefined && size === session.polledSize) return;
        session.polledSize = size;
        this.#read(id, session);
      },
      () => this.#read(id, session),
    );
  }

  /**
   * Sends every watcher of a session not run here the records it has not
   * seen: one read of the log for all of them (from the earliest place).
   */
  #read(id: string, session: LiveSession): void {
    if (session.running || session.reading !== undefined) return;
    const behind = [...session.watchers].filter((w) => !w.synced && w.open);
    if (behind.length === 0) return;
    const from = Math.min(...behind.map((w) => w.cursor));
    session.reading = this.#options
      .records(id, from)
      .then(
        (records) =>
          Promise.all(
            behind.map(
              (w) =>
                new Promise<void>((resolve) =>
                  w.after(async () => {
                    if (!w.synced) await this.#fill(id, w, Number.POSITIVE_INFINITY, records);
                    resolve();
                  }),
                ),
            ),
          ),
        (error: unknown) => {
          this.#options.log?.(`events of session ${id}: cannot read its records: ${errorMessage(error)}`);
        },
      )
      .then(() => {
        session.reading = undefined;
      });
  }

  /**
   * Sends a watcher the events of the records after its place (up to seq
   * `upTo`), read now unless `known` holds them.
   */
  async #fill(
    id: string,
    w: Watcher,
    upTo = Number.POSITIVE_INFINITY,
    known?: SessionRecord[],
  ): Promise<void> {
    if (!w.open || upTo <= w.cursor) return;
    let records: SessionRecord[];
    try {
      records = known ?? (await this.#options.records(id, w.cursor));
    } catch (error) {
      this.#options.log?.(`events of session ${id}: cannot read its records: ${errorMessage(error)}`);
      return;
    }
    for (const record of records) {
      if (record.seq <= w.cursor) continue;
      if (record.seq > upTo) break;
      const events = recordEvents(record);
      if (events.length === 0) {
        w.cursor = record.seq;
        w.sub = 0;
      }
      events.forEach((event, i) => {
        w.send(event, i === 0 ? record.seq : undefined);
      });
    }
  }

  /** Tells every client of a session who is attached, and the other hosts what this one has. */
  #presence(id: string, session: LiveSession, change: { joined?: string; left?: string }, ask = true): void {
    const users = this.#users(session);
    for (const w of session.watchers) w.after(() => w.send({ type: "presence", users, ...change }));
    this.#signalOut({
      s: id,
      h: this.#options.holder,
      k: "presence",
      users: [...session.watchers].map((w) => w.user),
      ...(ask ? { ask: true } : {}),
    });
  }

  /** The users attached to a session (here, and on other hosts as last said; `stale` ones too when asked). */
  #users(session: LiveSession, stale = false): string[] {
    const names = [...session.watchers].map((w) => w.user);
    for (const [, entry] of stale ? session.remote : this.#fresh(session)) names.push(...entry.users);
    return [...new Set(names)].sort();
  }

  /** The other hosts' attachments said recently enough to count. */
  #fresh(session: LiveSession): Map<string, { users: string[]; at: number }> {
    const oldest = Date.now() - 3 * this.#options.keepAliveMs;
    for (const [host, entry] of session.remote) {
      if (entry.at < oldest || entry.users.length === 0) session.remote.delete(host);
    }
    return session.remote;
  }

  /** Keep-alive comments, and this host's presence said again (so other hosts keep counting it). */
  #tick(): void {
    for (const [id, session] of this.#sessions) {
      for (const w of session.watchers) if (w.open) w.res.write(": keep-alive\n\n");
      if (session.watchers.size > 0) {
        this.#signalOut({
          s: id,
          h: this.#options.holder,
          k: "presence",
          users: [...session.watchers].map((w) => w.user),
        });
      }
      // another host that stopped saying who it has (it died) no longer counts
      const before = this.#users(session, true).join("\n");
      if (this.#users(session).join("\n") !== before) {
        this.#presence(id, session, {}, false);
        if (this.watching(id) === 0) this.#options.onUnwatched?.(id);
      }
      this.#forget(id, session);
    }
  }

  #signalOut(signal: Signal): void {
    const signals = this.#options.signals;
    if (signals === undefined) return;
    let payload = JSON.stringify(signal.k === "event" ? { ...signal, e: redactDeep(signal.e) } : signal);
    if (Buffer.byteLength(payload) > SIGNAL_BYTES && signal.k === "event") {
      // too large for a signal: a question goes without its arguments (its summary says what it is),
      // a result with the start of its text (the whole text is in the log)
      const e = signal.e;
      const smaller =
        e.type === "permission_request"
          ? { ...e, args: null, args_omitted: true }
          : e.type === "result"
            ? { ...e, text: e.text.slice(0, 2000), text_truncated: true }
            : undefined;
      if (smaller !== undefined) payload = JSON.stringify({ ...signal, e: redactDeep(smaller) });
    }
    if (Buffer.byteLength(payload) > SIGNAL_BYTES) return;
    signals.publish(payload).catch((error: unknown) => {
      this.#options.log?.(`cannot signal the other hosts: ${errorMessage(error)}`);
    });
  }

  /** A signal from another host. */
  #signal(payload: string): void {
    let signal: Signal;
    try {
      signal = JSON.parse(payload) as Signal;
    } catch {
      return;
    }
    if (signal.h === this.#options.holder || typeof signal.s !== "string") return;
    const session = this.#sessions.get(signal.s);
    if (signal.k === "presence") {
      // a host whose clients attach learns who is here, and (when it runs the session) what they must see
      const users = Array.isArray(signal.users) ? signal.users.filter((u) => typeof u === "string") : [];
      if (session === undefined && users.length === 0) return;
      const known = session ?? this.#session(signal.s);
      const before = this.#users(known).join("\n");
      known.remote.set(signal.h, { users, at: Date.now() });
      if (signal.ask && (known.watchers.size > 0 || known.running)) {
        this.#signalOut({
          s: signal.s,
          h: this.#options.holder,
          k: "presence",
          users: [...known.watchers].map((w) => w.user),
        });
        for (const event of known.standing.values()) {
          this.#signalOut({ s: signal.s, h: this.#options.holder, k: "event", w: -1, e: event });
        }
      }
      if (this.#users(known).join("\n") !== before) this.#presence(signal.s, known, {}, false);
      if (this.watching(signal.s) === 0) this.#options.onUnwatched?.(signal.s);
      this.#forget(signal.s, known);
      return;
    }
    if (signal.k === "answer") {
      if (session?.running && typeof signal.r === "string")
        this.#options.onAnswer?.(signal.s, signal.r, signal.a);
      return;
    }
    if (session === undefined || session.running || session.watchers.size === 0) return;
    if (signal.k === "seq") {
      this.#read(signal.s, session);
      return;
    }
    if (signal.k === "event") {
      for (const w of session.watchers) {
        w.after(async () => {
          if (signal.w >= 0) await this.#fill(signal.s, w, signal.w);
          w.send(signal.e, signal.w >= 0 ? signal.w : undefined);
        });
      }
    }
  }
}

/** Parses `Last-Event-ID` (`<seq>` or `<seq>.<n>`): the seq whose records were all seen. */
export function parseLastEventId(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const match = /^\s*(-?\d{1,15})(?:\.\d{1,15})?\s*$/.exec(value);
  if (!match) {
    throw new HttpError(
      400,
      "invalid_last_event_id",
      `Last-Event-ID ${JSON.stringify(value.slice(0, 40))} is not an event id of this stream (<seq> or <seq>.<n>); send the id of the last event received, or none to start with what happens next`,
    );
  }
  return Number(match[1]);
}

/**
 * The events a stored record tells, in the shapes a run streams, with the
 * fields the log keeps (a message arrives whole; a tool's end has no
 * duration). Records that no client needs (checkpoints, titles) tell none.
 */
export function recordEvents(record: SessionRecord): LiveEvent[] {
  switch (record.type) {
    case "user_input":
      return [
        {
          type: "prompt",
          text: record.text,
          ...(record.author !== undefined ? { author: record.author } : {}),
          ...(record.turn !== undefined ? { turn: record.turn } : {}),
        },
      ];
    case "item": {
      const { item } = record;
      const turn = record.turn ?? 0;
      if (record.reason !== "assistant" && record.reason !== "tool_result" && record.reason !== "synthetic")
        return [];
      if (item.type === "message" && item.role === "assistant") {
        const text = messageText(item);
        return text === "" ? [] : [{ type: "text", turn, text, from_log: true }];
      }
      if (item.type === "reasoning")
        return item.text === "" ? [] : [{ type: "thinking", turn, text: item.text, from_log: true }];
      if (item.type === "tool_call") {
        let args: unknown = item.arguments;
        try {
          args = JSON.parse(item.arguments);
        } catch {
          // a custom tool's free-form input stays text
        }
        return [{ type: "tool_start", id: item.callId, name: item.name, args, turn, from_log: true }];
      }
      if (item.type === "tool_result") {
        return [
          {
            type: "tool_end",
            id: item.callId,
            name: item.name ?? "",
            is_error: item.isError,
            output_bytes: Buffer.byteLength(item.output),
            preview: item.output.slice(0, 200),
            from_log: true,
          },
        ];
      }
      return [];
    }
    case "turn_end":
      return [
        {
          type: "turn_end",
          turn: record.turn ?? 0,
          ...(record.stopReason ? { stop_reason: record.stopReason } : {}),
          from_log: true,
        },
      ];
    case "alert":
      return [{ type: "alert", level: record.level, source: record.source, message: record.message }];
    case "error":
      return [{ type: "alert", level: "error", source: "run", message: record.message }];
    case "cancel":
      return [{ type: "alert", level: "warn", source: "cancel", message: record.reason ?? "cancelled" }];
    case "history_replaced":
      return record.reason === "compaction"
        ? [{ type: "compaction", reason: record.reason, items: record.history.length }]
        : [];
    default:
      return [];
  }
}
