/**
 * The sessions a `yoi serve` process hosts. A session is created in the
 * store and released at once. Its first run on a host opens it (taking its
 * writer lease, replaying its log once); the host then keeps it open between
 * runs, so the next run continues without reading the log again and the
 * session's background commands keep running. A session left idle for
 * `idleMs` is closed and its lease released; until then another host asking
 * for it gets 409 naming this one. A run lives as long as its stream: a
 * client that disconnects cancels it, unless a member is attached to the
 * session's events (live.ts), who then sees it to its end. A run sent with
 * `queue: true` while another runs here waits for it (runs go in order;
 * the queue is kept in this host's memory). Only sessions whose directory lies inside
 * the server's root exist for the API: the others (the same user's CLI
 * sessions elsewhere, on the file store) answer 404 and are not listed.
 */
import { randomUUID } from "node:crypto";
import { realpath } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import * as path from "node:path";
import type { Item } from "@yoi/llm-client";
import { redactedJson } from "@yoi/llm-client";
import type { RunResult } from "@yoi/llm-worker";
import { ConfigError, type ProjectSettings } from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import {
  answerSources,
  createStreamTextRedaction,
  EXIT_PLAN_MODE_TOOL_NAME,
  jsonUsage,
  lastText,
  type PermissionDecision,
  Pod,
  type PodEvent,
  type StreamJsonEvent,
  toStreamJson,
  UsageLedger,
} from "@yoi/pod";
import {
  checkSessionId,
  type SessionAccess,
  SessionLogError,
  type SessionSummary,
} from "@yoi/worker-persistence";
import type { SessionFlags } from "../args.ts";
import { CliError } from "../cli-error.ts";
import { describeFailure } from "../describe-error.ts";
import { providerContext } from "../open-session.ts";
import { type ModelInputNames, type ModelSetup, setupModel } from "../session-setup.ts";
import {
  type CreateSessionBody,
  PermissionAnswerBody,
  type SessionMembers,
  type SessionView,
} from "./api-schemas.ts";
import { HttpError } from "./http-error.ts";
import { clientGone, SSE_HEADERS } from "./http-io.ts";
import { ADMIN_NAME, type LiveEvent, LiveSessions, parseLastEventId } from "./live.ts";
import type { ServeStore } from "./serve-store.ts";
import type { Principal } from "./users.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** A client's answer as the pod takes it: plans are approved in a mode, denials may carry feedback. */
function toDecision(tool: string, answer: PermissionAnswerBody): PermissionDecision {
  if (answer.decision === "deny")
    return answer.reason === undefined ? "deny" : { action: "deny", reason: answer.reason };
  if (tool === EXIT_PLAN_MODE_TOOL_NAME) return { action: "approve_plan", mode: answer.mode ?? "default" };
  return answer.decision;
}

/** What a host needs to rebuild a session's model and scope; kept in session_start's config. */
interface SessionSpec {
  /** `<provider>/<model>`. */
  model?: string;
  baseUrl?: string;
  cwd: string;
  /** The base URL came from a client: the server's keys are withheld from it. */
  keyless: boolean;
}

/** A session this host holds open: its pod keeps the writer lease (or the file lock) between runs. */
interface HeldSession {
  pod: Pod;
  setup: ModelSetup;
  /** What the project's untrusted settings would have set, said to the client at each run. */
  ignored: string[];
  /** The permission questions of the run in progress, by call id. */
  pending: Map<string, (answer: PermissionAnswerBody) => void>;
  /** Closes the session once it has been idle for `idleMs`. */
  idle?: NodeJS.Timeout;
  /** Why the session must not be reused (its lease was lost, its store failed): closed after its run. */
  lost?: string;
}

interface ActiveRun {
  held?: HeldSession;
  /** Who may reach the session, as read when the run started. */
  access?: SessionAccess;
  /** Aborts when the client that sent the run is gone. */
  gone: AbortSignal;
  done: Promise<void>;
}

/** A run sent with `queue: true` that waits for the run before it. */
interface QueuedRun {
  queueId: string;
  user: Principal;
  access: SessionAccess;
  prompt: string;
  res: ServerResponse;
  gone: AbortSignal;
  /** Its turn came: the run that is now its own, or undefined when it is not to run (the host stops). */
  start: (run: ActiveRun | undefined) => void;
}

export interface SessionHostOptions {
  store: ServeStore;
  /** Sessions' directories must lie inside one of these (symlinks resolved); the first is the default. */
  roots: readonly string[];
  /** Projects (and what lies under them) whose own settings apply; symlinks resolved. */
  trustedProjects?: readonly string[];
  /** Server defaults (`--model`, `--base-url`, the permission flags). */
  defaults: SessionFlags;
  /** A line for the server's log (never secrets). */
  log?: (line: string) => void;
  env: Env;
  appVersion: string;
  /** Where SSE comments keep idle streams open, ms. Default 15 000. */
  keepAliveMs?: number;
  /** How often an events stream reads the log of a session run elsewhere, ms. Default 500 (x6 with signals). */
  pollMs?: number;
  /**
   * How long a session stays open on this host after its run, ms; 0 closes
   * it after each run (any host may take the next one at once). Default 10 min.
   */
  idleMs?: number;
}

/** How long a session stays open after its run by default: 10 minutes. */
export const DEFAULT_IDLE_MS = 600_000;
/** Idle sessions a host keeps open at most (each holds its history, a lease and maybe commands). */
const MAX_IDLE = 1000;
/** Queued runs a host holds at most (each is an open stream and a prompt in memory). */
const MAX_QUEUED = 1000;

const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)/i;

export class SessionHost {
  readonly #store: ServeStore;
  readonly #roots: readonly string[];
  readonly #trusted: readonly string[];
  readonly #defaults: SessionFlags;
  readonly #log: (line: string) => void;
  /** Project settings already said to be ignored (root and content hash), so the log says it once. */
  readonly #ignoredSaid = new Set<string>();
  readonly #env: Env;
  readonly #appVersion: string;
  readonly #keepAliveMs: number;
  readonly #specs = new Map<string, SessionSpec>();
  readonly #runs = new Map<string, ActiveRun>();
  readonly #idleMs: number;
  /** Sessions open on this host, running or idle. */
  readonly #held = new Map<string, HeldSession>();
  /** Sessions being closed: a run for one waits until its lease is released, then reopens it. */
  readonly #closing = new Map<string, Promise<void>>();
  /** Set when the server begins to shut down: new runs are refused, a run that ends closes its session. */
  #draining = false;
  /** Runs waiting for the run before them, by session, in order. */
  readonly #queues = new Map<string, QueuedRun[]>();
  #queued = 0;
  /** Clients attached to sessions' events. */
  readonly #live: LiveSessions;

  constructor(options: SessionHostOptions) {
    this.#store = options.store;
    this.#roots = options.roots;
    this.#trusted = options.trustedProjects ?? [];
    this.#defaults = options.defaults;
    this.#log = options.log ?? (() => {});
    this.#env = options.env;
    this.#appVersion = options.appVersion;
    this.#keepAliveMs = options.keepAliveMs ?? 15_000;
    this.#idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    this.#live = new LiveSessions({
      holder: this.#store.holder,
      records: (id, afterSeq) => this.#store.sessions.recordsAfter(id, afterSeq),
      ...(this.#store.logSize
        ? { logSize: (id: string) => this.#store.logSize?.(id) ?? Promise.resolve(undefined) }
        : {}),
      signals: this.#store.signals,
      pollMs: options.pollMs ?? 500,
      keepAliveMs: this.#keepAliveMs,
      onUnwatched: (id) => this.#unwatched(id),
      onAnswer: (id, requestId, answer) => {
        const body = PermissionAnswerBody.safeParse(answer);
        if (body.success) this.#forwarded(id, requestId, body.data);
      },
      log: this.#log,
    });
  }

  /** Starts listening for the other hosts of the store (PostgreSQL). */
  start(): Promise<void> {
    return this.#live.start();
  }

  get holder(): string {
    return this.#store.holder;
  }

  /** Runs in progress on this host. */
  get running(): number {
    return this.#runs.size;
  }

  /**
   * The store took a session from this host (its lease was lost, e.g. the
   * database was unreachable past the lease): an idle session is closed now,
   * a running one when its run ends (its appends are refused meanwhile).
   */
  leaseLost(id: string, reason: string): void {
    const held = this.#held.get(id);
    if (held === undefined) return;
    held.lost = reason;
    if (!this.#runs.has(id)) void this.#close(id, held);
  }

  async create(user: Principal, body: CreateSessionBody): Promise<{ id: string }> {
    const cwd = await this.#scopedCwd(body.cwd);
    const model = body.model ?? this.#defaults.model;
    const baseUrl = body.baseUrl ?? this.#defaults.baseURL;
    const spec: SessionSpec = {
      ...(model !== undefined ? { model } : {}),
      ...(baseUrl !== undefined ? { baseUrl } : {}),
      cwd,
      keyless: body.baseUrl !== undefined,
    };
    const setup = await this.#setup(spec);
    spec.model = `${setup.resolved.providerName}/${setup.resolved.model}`;
    const writer = await this.#store.sessions
      .create({
        model: setup.resolved.model,
        provider: setup.resolved.providerName,
        cwd,
        config: { serve: spec },
        appVersion: this.#appVersion,
      })
      .catch((error: unknown) => Promise.reject(storeError(error)));
    await writer.close();
    if (user.name !== undefined) {
      await this.#store.access
        .setOwner(writer.id, user.name)
        .catch((error: unknown) => Promise.reject(storeError(error)));
    }
    this.#remember(writer.id, spec);
    return { id: writer.id };
  }

  /** The sessions inside the roots that `user` may see, the most recently updated first. */
  async list(user: Principal, limit: number | undefined): Promise<SessionSummary[]> {
    const mine = user.admin
      ? undefined
      : await this.#store.access
          .visibleTo(user.name as string)
          .catch((error: unknown) => Promise.reject(storeError(error)));
    // The store cannot filter by directory: read more until enough are inside.
    let want = limit === undefined ? undefined : Math.max(limit * 2, 50);
    for (;;) {
      const all = await this.#store.sessions
        .list(want === undefined ? {} : { limit: want })
        .catch((error: unknown) => Promise.reject(storeError(error)));
      const inside = await Promise.all(
        all.map(async (s) => s.cwd !== undefined && (await this.#place(s.cwd)).inside),
      );
      const visible = all.filter((s, i) => inside[i] && (mine === undefined || mine.has(s.id)));
      if (limit === undefined || want === undefined || visible.length >= limit || all.length < want) {
        return limit === undefined ? visible : visible.slice(0, limit);
      }
      want *= 4;
    }
  }

  async view(user: Principal, id: string): Promise<SessionView> {
    const access = await this.#allowed(user, id);
    const loaded = await this.#load(id);
    const { meta } = loaded;
    // A session this host only keeps open is not running; another host's lease may be either.
    const runningOn = this.#runs.has(id)
      ? this.holder
      : this.#held.has(id)
        ? undefined
        : await this.#store.leaseHolder(id).catch(() => undefined);
    return {
      id,
      items: loaded.history,
      ...(meta.title !== undefined ? { title: meta.title } : {}),
      ...(meta.model !== undefined ? { model: meta.model } : {}),
      ...(meta.provider !== undefined ? { provider: meta.provider } : {}),
      ...(meta.cwd !== undefined ? { cwd: meta.cwd } : {}),
      ...(meta.createdAt !== undefined ? { createdAt: meta.createdAt } : {}),
      ...(meta.updatedAt !== undefined ? { updatedAt: meta.updatedAt } : {}),
      turns: meta.turns,
      records: meta.records,
      usage: meta.usage,
      ...(runningOn !== undefined ? { runningOn } : {}),
      ...(access.owner !== undefined ? { owner: access.owner } : {}),
      ...(access.members.length > 0 ? { members: access.members } : {}),
      warnings: loaded.warnings.map((w) => (w.line > 0 ? `record ${w.line}: ${w.message}` : w.message)),
    };
  }

  /** Cancels the session's run on this host; 409 naming the holder when it runs elsewhere. */
  async cancel(user: Principal, id: string): Promise<void> {
    await this.#allowed(user, id);
    const run = this.#runs.get(id);
    if (run?.held) {
      run.held.pod.cancel("cancelled through the API");
      return;
    }
    await this.#notHere(id, "cancel");
  }

  /**
   * Answers a permission question of the session's run on this host. For
   * `exit_plan_mode`, `allow` approves the plan (in `mode`, default
   * `default`); `deny` with a `reason` hands the model that feedback.
   */
  async answer(
    user: Principal,
    id: string,
    requestId: string,
    body: PermissionAnswerBody,
  ): Promise<"answered" | "forwarded"> {
    await this.#allowed(user, id);
    const run = this.#runs.get(id);
    if (run === undefined) {
      // on PostgreSQL the host running it takes the answer from here
      const holder = await this.#store.leaseHolder(id).catch(() => undefined);
      if (holder !== undefined && holder !== this.holder && this.#live.forward(id, requestId, body)) {
        return "forwarded";
      }
      return this.#notHere(id, "answer a permission question of");
    }
    const resolve = run.held?.pending.get(requestId);
    if (resolve === undefined) {
      throw new HttpError(404, "not_found", `session ${id} has no open permission question ${requestId}`);
    }
    run.held?.pending.delete(requestId);
    this.#live.settled(id, requestId);
    resolve(body);
    return "answered";
  }

  /** An answer another host forwarded: applied when the question still waits here. */
  #forwarded(id: string, requestId: string, body: PermissionAnswerBody): void {
    const held = this.#runs.get(id)?.held;
    const resolve = held?.pending.get(requestId);
    if (held === undefined || resolve === undefined) return;
    held.pending.delete(requestId);
    this.#live.settled(id, requestId);
    resolve(body);
  }

  /**
   * Attaches a member to the session's events (SSE) until they leave:
   * every run's events, here or on another host; `lastEventId` resumes
   * after the records its client saw.
   */
  async events(
    user: Principal,
    id: string,
    lastEventId: string | undefined,
    res: ServerResponse,
  ): Promise<void> {
    const from = parseLastEventId(lastEventId);
    await this.#allowed(user, id);
    await this.#spec(id); // 404 for a session outside the roots
    const log = this.#held.get(id)?.pod.log;
    let latest = from ?? -1;
    if (log !== undefined) latest = log.nextSeq - 1;
    else if (from === undefined) {
      const records = await this.#store.sessions
        .recordsAfter(id, -1)
        .catch((error: unknown) => Promise.reject(storeError(error, id)));
      latest = records.at(-1)?.seq ?? -1;
    }
    this.#live.attach(id, user.name ?? ADMIN_NAME, res, from, latest);
  }

  /** Nobody watches the session any more: a run (or queued run) whose client left is not kept for them. */
  #unwatched(id: string): void {
    const run = this.#runs.get(id);
    if (run?.gone.aborted) run.held?.pod.cancel("the client disconnected and no member is attached");
    const queue = this.#queues.get(id);
    for (const waiting of [...(queue ?? [])]) if (waiting.gone.aborted) this.#drop(id, waiting);
  }

  /** The seq of the session's last stored record on this host, -1 when it is not open here. */
  #seqNow(id: string): number {
    const log = this.#held.get(id)?.pod.log;
    return log ? log.nextSeq - 1 : -1;
  }

  /** Takes a queued run out of the queue: its client left and nobody watches. */
  #drop(id: string, waiting: QueuedRun): void {
    const queue = this.#queues.get(id);
    const at = queue?.indexOf(waiting) ?? -1;
    if (queue === undefined || at < 0) return;
    queue.splice(at, 1);
    this.#queued--;
    if (queue.length === 0) this.#queues.delete(id);
    this.#live.publish(
      id,
      { type: "unqueued", queue_id: waiting.queueId, reason: "dropped" },
      this.#seqNow(id),
    );
    waiting.start(undefined);
  }

  /** Starts the first queued run after the one that ended (none when the host stops: each is told). */
  #next(id: string): void {
    const queue = this.#queues.get(id);
    let head = queue?.shift();
    while (head !== undefined && this.#draining) {
      this.#queued--;
      head.start(undefined);
      head = queue?.shift();
    }
    if (queue === undefined || head === undefined) {
      this.#queues.delete(id);
      return;
    }
    this.#queued--;
    if (queue.length === 0) this.#queues.delete(id);
    let finish!: () => void;
    const run: ActiveRun = {
      access: head.access,
      gone: head.gone,
      done: new Promise<void>((r) => (finish = r)),
    };
    this.#finishers.set(run, finish);
    this.#runs.set(id, run);
    this.#live.publish(id, { type: "unqueued", queue_id: head.queueId, reason: "started" }, this.#seqNow(id));
    head.start(run);
  }

  /** How each active run's `done` is settled. */
  readonly #finishers = new WeakMap<ActiveRun, () => void>();

  /**
   * Grants the session to `member` (a user of the token file, checked by
   * the caller); only its owner or an administrator may.
   */
  async grant(user: Principal, id: string, member: string): Promise<SessionMembers> {
    const access = await this.#allowed(user, id);
    if (!user.admin && access.owner !== user.name) {
      throw new HttpError(
        403,
        "forbidden",
        `only the owner of session ${id}${access.owner !== undefined ? ` (${access.owner})` : ""} or an administrator may add members`,
      );
    }
    await this.#store.access
      .grant(id, member)
      .catch((error: unknown) => Promise.reject(storeError(error, id)));
    const now = await this.#store.access
      .get(id)
      .catch((error: unknown) => Promise.reject(storeError(error, id)));
    return { ...(now.owner !== undefined ? { owner: now.owner } : {}), members: now.members };
  }

  /**
   * The session's users when `user` may reach it (an administrator, its
   * owner, a member); otherwise 404, as for a session that does not exist.
   */
  async #allowed(user: Principal, id: string): Promise<SessionAccess> {
    checkId(id);
    const may = (access: SessionAccess) =>
      user.admin || access.owner === user.name || access.members.includes(user.name as string);
    // A run on this host knows who may reach it: cancelling or answering it needs no store (which may be down).
    const known = this.#runs.get(id)?.access;
    if (known !== undefined && may(known)) return known;
    const access = await this.#store.access
      .get(id)
      .catch((error: unknown) => Promise.reject(storeError(error, id)));
    if (may(access)) return access;
    throw new HttpError(404, "not_found", `no session ${id}`);
  }

  async #notHere(id: string, what: string): Promise<never> {
    await this.#load(id); // 404 for an unknown session
    const holder = await this.#store.leaseHolder(id).catch(() => undefined);
    if (holder !== undefined && holder !== this.holder) {
      throw new HttpError(409, "session_busy", `session ${id} is open on ${holder}; ${what} it there`, {
        holder,
      });
    }
    throw new HttpError(409, "not_running", `session ${id} has no run in progress`);
  }

  /**
   * Runs a prompt and streams it. Errors before the stream starts are
   * thrown as HttpErrors (404, 409 with the holder, 503 for the store);
   * after that, failures are events and the stream ends with `result`.
   */
  async run(user: Principal, id: string, prompt: string, res: ServerResponse, queue = false): Promise<void> {
    // Taken first: a client that leaves while the session is being restored
    // must still cancel the run (unless a member watches it).
    const gone = clientGone(res);
    const access = await this.#allowed(user, id);
    if (this.#draining) {
      throw new HttpError(
        503,
        "shutting_down",
        `this host (${this.holder}) is shutting down and starts no new runs; send the run again (another host, or this one once restarted, continues the session)`,
      );
    }
    let run: ActiveRun | undefined;
    if (this.#runs.has(id) || this.#queues.has(id)) {
      if (!queue) {
        throw new HttpError(
          409,
          "session_busy",
          `session ${id} is already running on this host (${this.holder}); send the run with "queue": true to run it after the one in progress`,
          { holder: this.holder },
        );
      }
      run = await this.#wait(id, user, access, prompt, res, gone);
      if (run === undefined) return;
    } else {
      let finish!: () => void;
      run = { access, gone, done: new Promise<void>((r) => (finish = r)) };
      this.#finishers.set(run, finish);
      this.#runs.set(id, run);
    }
    try {
      await this.#stream(id, prompt, user, run, gone, res);
    } finally {
      this.#runs.delete(id);
      this.#finishers.get(run)?.();
      this.#next(id);
    }
  }

  /**
   * Queues a run behind the one in progress: its stream starts now with a
   * `queued` event and continues with the run once its turn comes.
   * Undefined when it is not to run (dropped, or the host stops).
   */
  async #wait(
    id: string,
    user: Principal,
    access: SessionAccess,
    prompt: string,
    res: ServerResponse,
    gone: AbortSignal,
  ): Promise<ActiveRun | undefined> {
    if (this.#queued >= MAX_QUEUED) {
      throw new HttpError(
        503,
        "queue_full",
        `this host (${this.holder}) already holds ${MAX_QUEUED} queued runs; send the run again later`,
      );
    }
    const queue = this.#queues.get(id) ?? [];
    this.#queues.set(id, queue);
    let start!: (run: ActiveRun | undefined) => void;
    const turn = new Promise<ActiveRun | undefined>((r) => (start = r));
    const waiting: QueuedRun = { queueId: randomUUID(), user, access, prompt, res, gone, start };
    queue.push(waiting);
    this.#queued++;
    res.writeHead(200, SSE_HEADERS);
    const event: LiveEvent = {
      type: "queued",
      queue_id: waiting.queueId,
      prompt,
      ...(user.name !== undefined ? { author: user.name } : {}),
      position: queue.length,
    };
    res.write(`data: ${redactedJson(event)}\n\n`);
    this.#live.publish(id, event, this.#seqNow(id));
    gone.addEventListener("abort", () => {
      if (this.#live.watching(id) === 0) this.#drop(id, waiting);
    });
    const keepAlive = setInterval(() => {
      if (!res.writableEnded && !res.destroyed) res.write(": keep-alive\n\n");
    }, this.#keepAliveMs);
    keepAlive.unref();
    const run = await turn.finally(() => clearInterval(keepAlive));
    if (run === undefined && !res.writableEnded) {
      if (this.#draining && !res.destroyed) {
        const final: StreamJsonEvent = {
          type: "result",
          status: "failed",
          session_id: id,
          text: "",
          turns: 0,
          usage: jsonUsage(undefined),
          cost_usd: null,
          models: {},
          duration_ms: 0,
          error: {
            code: "shutting_down",
            message: `this host (${this.holder}) shut down before the queued run's turn; send it again`,
          },
        };
        res.write(`data: ${JSON.stringify(final)}\n\n`);
      }
      res.end();
    }
    return run;
  }

  async #stream(
    id: string,
    prompt: string,
    user: Principal,
    run: ActiveRun,
    gone: AbortSignal,
    res: ServerResponse,
  ) {
    // nobody to report to: the client left and no member is attached
    const abandoned = () => gone.aborted && this.#live.watching(id) === 0;
    const spec = await this.#spec(id);
    if (abandoned()) return;
    const held = await this.#open(id, spec);
    run.held = held;
    const { pod, setup } = held;
    if (abandoned()) {
      // left while the session was opened: nothing ran
      await this.#rest(id, held);
      return;
    }
    const started = Date.now();
    if (!res.headersSent) res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
    this.#live.runStarted(id, this.#seqNow(id));
    // An event goes out only once every record it implies is stored; its
    // SSE id is the seq of the last stored record, the client's acknowledgement.
    let chain: Promise<void> = Promise.resolve();
    const send = (event: LiveEvent): void => {
      chain = chain.then(async () => {
        await pod.flush();
        const seq = pod.log ? pod.log.nextSeq - 1 : -1;
        // members attached to the session's events see it too
        this.#live.publish(id, event, seq);
        if (res.writableEnded || res.destroyed) return;
        res.write(`${seq >= 0 ? `id: ${seq}\n` : ""}data: ${redactedJson(event)}\n\n`);
      });
    };
    // what was asked, and by whom: for the members watching (the run's client knows)
    chain = chain.then(() =>
      this.#live.publish(
        id,
        { type: "prompt", text: prompt, ...(user.name !== undefined ? { author: user.name } : {}) },
        this.#seqNow(id),
      ),
    );
    // what the client should know before the run: project settings that do not apply here
    for (const message of held.ignored)
      send({ type: "alert", level: "warn", source: "project_trust", message });
    const keepAlive = setInterval(() => {
      if (!res.writableEnded && !res.destroyed) res.write(": keep-alive\n\n");
    }, this.#keepAliveMs);
    keepAlive.unref();
    let ended = false;
    gone.addEventListener("abort", () => {
      if (ended) return;
      if (this.#live.watching(id) === 0) pod.cancel("the client disconnected");
      else this.#log(`session ${id}: the run's client left; it goes on for the members attached`);
    });
    let storeFailure: string | undefined;
    const assistant: Item[] = [];
    const redactStreamed = createStreamTextRedaction();
    const model = `${setup.resolved.providerName}/${setup.resolved.model}`;
    const ledger = new UsageLedger(() => setup.config);
    const unsubscribe = pod.subscribe((event: PodEvent) => {
      ledger.record(event, () => model);
      if (event.type === "request_start") {
        // A safe point to resume attached clients from: the records appended so far (taken now,
        // not once stored, when later ones may be in) had their events emitted before this one.
        const seq = this.#seqNow(id);
        chain = chain.then(async () => {
          await pod.flush();
          this.#live.mark(id, seq);
        });
      }
      if (event.type === "item_committed" && event.reason === "assistant") assistant.push(event.item);
      if (event.type === "alert" && event.alert.source === "session_log" && event.alert.level === "error") {
        // The log is the product here: a run whose records cannot be stored stops.
        storeFailure ??= event.alert.message;
        pod.cancel(`the session store failed: ${event.alert.message}`);
      }
      for (const shown of redactStreamed(event)) {
        const line = toStreamJson(shown, setup.window);
        if (line) send(line);
      }
    });
    send({
      type: "session",
      session_id: id,
      model: setup.resolved.model,
      provider: setup.resolved.providerName,
      cwd: pod.fs.cwd,
      resumed: pod.history.length > 0,
    });
    for (const note of setup.notes) send({ type: "alert", level: "info", source: "serve", message: note });
    let result: RunResult | undefined;
    let crash: unknown;
    try {
      result = await pod.run(prompt, user.name !== undefined ? { author: user.name } : {});
    } catch (error) {
      crash = error;
    }
    try {
      await chain;
      const failure =
        storeFailure !== undefined
          ? {
              code: "store_unavailable",
              message: `the session store failed; the run was stopped: ${storeFailure}`,
            }
          : crash !== undefined
            ? { code: "internal", message: errorMessage(crash) }
            : result?.status === "failed" && result.error
              ? { code: result.error.code, message: describeFailure(result.error, providerContext(setup)) }
              : undefined;
      const sources = answerSources(assistant);
      const final: StreamJsonEvent = {
        type: "result",
        status:
          failure && (storeFailure !== undefined || crash !== undefined)
            ? "failed"
            : (result?.status ?? "failed"),
        session_id: id,
        text: lastText(assistant),
        turns: result?.turns ?? 0,
        usage: jsonUsage(result?.usage),
        cost_usd: ledger.totalUsd() ?? null,
        models: ledger.json(),
        duration_ms: Date.now() - started,
        ...(sources.length > 0 ? { citations: sources } : {}),
        ...(failure ? { error: failure } : {}),
      };
      const seq = pod.log ? pod.log.nextSeq - 1 : -1;
      // every event of the run was sent: the end is a safe point
      this.#live.mark(id, seq);
      this.#live.publish(id, final, seq);
      if (!res.writableEnded && !res.destroyed) {
        res.write(`${seq >= 0 ? `id: ${seq}\n` : ""}data: ${JSON.stringify(final)}\n\n`);
      }
    } finally {
      ended = true;
      clearInterval(keepAlive);
      unsubscribe();
      for (const resolve of held.pending.values()) resolve({ decision: "deny" });
      held.pending.clear();
      this.#live.runEnded(id);
      // A session whose store failed, or whose run crashed, is not kept: the
      // next run reopens it from what the store holds.
      if (storeFailure !== undefined || crash !== undefined) held.lost ??= "its run failed";
      // Settled before the stream ends: a client that has read `result` can
      // send the next run here, or (with idleMs 0) to any host, at once.
      await this.#rest(id, held);
      res.end();
    }
  }

  /**
   * Refuses new runs from now on and waits up to `graceMs` for the running
   * ones to finish; resolves with how many are still running then.
   * `stopWaiting` ends the wait early (a second signal).
   */
  async drain(graceMs: number, stopWaiting?: AbortSignal): Promise<number> {
    this.#draining = true;
    const runs = [...this.#runs.values()];
    if (runs.length > 0 && graceMs > 0 && !stopWaiting?.aborted) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(runs.map((r) => r.done)),
        new Promise((r) => {
          timer = setTimeout(r, graceMs);
          stopWaiting?.addEventListener("abort", r, { once: true });
        }),
      ]);
      clearTimeout(timer);
    }
    return this.#runs.size;
  }

  /**
   * Cancels every run and waits (up to `timeoutMs`) for their streams to
   * end, then closes every session this host holds (background commands
   * stopped). What each run stored stays in the session log, and the leases
   * are released, so another host (or this one restarted) continues them.
   */
  async shutdown(timeoutMs = 10_000): Promise<void> {
    this.#draining = true;
    const runs = [...this.#runs.values()];
    for (const run of runs) run.held?.pod.cancel("the server is shutting down");
    await Promise.race([
      Promise.all(runs.map((r) => r.done)),
      new Promise((r) => setTimeout(r, timeoutMs).unref()),
    ]);
    await Promise.all([...this.#held].map(([id, held]) => this.#close(id, held)));
    await Promise.all(this.#closing.values());
    await this.#live.close();
  }

  /**
   * The session open on this host, or opened now: the lease is taken and
   * the log replayed only when this host does not hold it already.
   */
  async #open(id: string, spec: SessionSpec): Promise<HeldSession> {
    await this.#closing.get(id);
    // Read again for every run: a project whose config was edited since the session was opened
    // here gets what its files say now (the kept pod is closed and the session reopened).
    const ignored: string[] = [];
    const setup = await this.#setup(spec, (message) => ignored.push(message));
    const kept = this.#held.get(id);
    if (kept !== undefined) {
      clearTimeout(kept.idle);
      kept.idle = undefined;
      if (sameSetup(kept.setup, setup)) {
        kept.ignored = ignored;
        return kept;
      }
      await this.#close(id, kept);
    }
    const env = spec.keyless ? withoutSecrets(this.#env) : this.#env;
    const pending: HeldSession["pending"] = new Map();
    let pod: Pod;
    try {
      // The pod makes the client for the config's model, its key from `env`.
      pod = await Pod.restore(id, {
        config: setup.config,
        cwd: setup.cwd,
        dataDir: setup.dataDir,
        env,
        sessionStore: this.#store.sessions,
        blobStore: this.#store.blobs,
        ...(setup.contextWindow !== undefined ? { contextWindow: setup.contextWindow } : {}),
        ask: (request) =>
          new Promise<PermissionDecision>((resolve) => {
            pending.set(request.callId, (answer) => resolve(toDecision(request.tool, answer)));
            request.signal.addEventListener(
              "abort",
              () => {
                pending.delete(request.callId);
                this.#live.settled(id, request.callId);
              },
              { once: true },
            );
          }),
      });
    } catch (error) {
      throw storeError(error, id);
    }
    const held: HeldSession = { pod, setup, ignored, pending };
    this.#held.set(id, held);
    return held;
  }

  /** After a run: keeps the session open for `idleMs`, or closes it (lease lost, run failed, shutting down, idleMs 0). */
  async #rest(id: string, held: HeldSession): Promise<void> {
    if (held.lost !== undefined || this.#draining || this.#idleMs === 0) return this.#close(id, held);
    clearTimeout(held.idle);
    held.idle = setTimeout(() => void this.#close(id, held), this.#idleMs);
    // an idle session must not keep a stopping process alive
    held.idle.unref();
    // most recently used last; past MAX_IDLE idle sessions the least recently used is closed
    this.#held.delete(id);
    this.#held.set(id, held);
    let idle = 0;
    for (const other of this.#held.values()) if (other.idle !== undefined) idle++;
    for (const [oldId, old] of this.#held) {
      if (idle <= MAX_IDLE) break;
      if (old.idle === undefined) continue;
      idle--;
      void this.#close(oldId, old);
    }
  }

  /** Closes a held session: background commands stopped, log flushed, lease released. Never throws. */
  #close(id: string, held: HeldSession): Promise<void> {
    clearTimeout(held.idle);
    if (this.#held.get(id) !== held) return this.#closing.get(id) ?? Promise.resolve();
    this.#held.delete(id);
    const closing = held.pod
      .close()
      .catch(() => {})
      .finally(() => {
        if (this.#closing.get(id) === closing) this.#closing.delete(id);
      });
    this.#closing.set(id, closing);
    return closing;
  }

  /** Caches a session's spec; the oldest go first past 10 000 (they reload from the store). */
  #remember(id: string, spec: SessionSpec): void {
    this.#specs.delete(id);
    this.#specs.set(id, spec);
    if (this.#specs.size > 10_000) {
      const oldest = this.#specs.keys().next().value;
      if (oldest !== undefined) this.#specs.delete(oldest);
    }
  }

  /** Loads a session; 404 for one that is unknown or whose directory is outside the root. */
  async #load(id: string) {
    checkId(id);
    const loaded = await this.#store.sessions
      .load(id)
      .catch((error: unknown) => Promise.reject(storeError(error, id)));
    const cwd = loaded.meta.cwd;
    if (cwd === undefined || !(await this.#place(cwd)).inside) {
      throw new HttpError(404, "not_found", `no session ${id} in this server's ${this.#rootsText()}`);
    }
    return loaded;
  }

  async #spec(id: string): Promise<SessionSpec> {
    checkId(id);
    const known = this.#specs.get(id);
    if (known) return known;
    const { meta } = await this.#load(id);
    const saved = (meta.config as { serve?: Partial<SessionSpec> } | undefined)?.serve;
    const cwd = await this.#scopedCwd(saved?.cwd ?? meta.cwd);
    const model =
      typeof saved?.model === "string"
        ? saved.model
        : meta.provider !== undefined && meta.model !== undefined
          ? `${meta.provider}/${meta.model}`
          : undefined;
    const spec: SessionSpec = {
      cwd,
      ...(model !== undefined ? { model } : {}),
      ...(typeof saved?.baseUrl === "string" ? { baseUrl: saved.baseUrl } : {}),
      keyless: saved?.keyless === true,
    };
    this.#remember(id, spec);
    return spec;
  }

  /**
   * The session's model and config. `ignored` is told what a project's own
   * settings set that were left out because the project is not trusted.
   */
  async #setup(spec: SessionSpec, ignored?: (message: string) => void): Promise<ModelSetup> {
    const env = spec.keyless ? withoutSecrets(this.#env) : this.#env;
    const { permissionMode, allowTools, denyTools, noSandbox, bypassWithoutSandbox } = this.#defaults;
    const flags: SessionFlags = {
      cwd: spec.cwd,
      ...(spec.model !== undefined ? { model: spec.model } : {}),
      ...(spec.baseUrl !== undefined ? { baseURL: spec.baseUrl } : {}),
      // the server's permission flags hold for every session, as the CLI's for its one
      ...(permissionMode !== undefined ? { permissionMode } : {}),
      ...(allowTools !== undefined ? { allowTools } : {}),
      ...(denyTools !== undefined ? { denyTools } : {}),
      ...(noSandbox ? { noSandbox } : {}),
      ...(bypassWithoutSandbox ? { bypassWithoutSandbox } : {}),
    };
    const trust = {
      // A project's own settings that widen reach apply once trusted: YOI_TRUST_PROJECT=1, a yes in
      // interactive yoi (remembered in ~/.yoi), or `--trust-project` naming it or a directory above it.
      given: (settings: ProjectSettings) => this.#trusted.some((dir) => within(dir, settings.root)),
      onIgnored: (settings: ProjectSettings) => {
        const message = `ignoring what ${settings.files.join(" and ")} set${settings.files.length > 1 ? "" : "s"} (${settings.lines.join("; ")}): the project is not trusted by this server; an administrator trusts it with yoi serve --trust-project ${settings.root}`;
        ignored?.(message);
        const key = `${settings.root}\0${settings.hash}`;
        if (!this.#ignoredSaid.has(key)) {
          this.#ignoredSaid.add(key);
          this.#log(message);
        }
      },
    };
    try {
      return await setupModel(flags, { env, cwd: spec.cwd, trust, names: BODY_NAMES });
    } catch (error) {
      if (CliError.isInstance(error) || ConfigError.isInstance(error)) {
        throw new HttpError(400, "invalid_session", error.message.split("\n")[0] as string);
      }
      throw error;
    }
  }

  /** Resolves a session directory inside the root (symlinks resolved); 400 outside it or missing. */
  async #scopedCwd(cwd: string | undefined): Promise<string> {
    const place = await this.#place(cwd ?? ".");
    if (!place.exists) throw new HttpError(400, "invalid_body", `cwd: ${place.wanted} does not exist`);
    if (!place.inside) {
      throw new HttpError(
        400,
        "invalid_body",
        `cwd: ${place.wanted} is outside the server's ${this.#rootsText()}`,
      );
    }
    return place.real;
  }

  /** Where a directory is (a relative one against the first root), and whether it lies in a root. */
  async #place(dir: string) {
    const place = await placeIn(this.#roots[0] as string, dir);
    return { ...place, inside: this.#roots.some((root) => within(root, place.real)) };
  }

  #rootsText(): string {
    return this.#roots.length === 1 ? `root ${this.#roots[0]}` : `roots ${this.#roots.join(", ")}`;
  }
}

/**
 * Where a directory (a relative one against `root`) really is, symlinks
 * resolved, and whether that lies inside `root`; a directory that no longer
 * exists is judged by its path.
 */
async function placeIn(
  root: string,
  dir: string,
): Promise<{ wanted: string; real: string; exists: boolean; inside: boolean }> {
  const wanted = path.resolve(root, dir);
  const real = await realpath(wanted).catch(() => undefined);
  const where = real ?? wanted;
  return {
    wanted,
    real: where,
    exists: real !== undefined,
    inside: within(root, where),
  };
}

/** Whether `dir` is `root` or lies under it (both absolute, symlinks resolved). */
function within(root: string, dir: string): boolean {
  return dir === root || dir.startsWith(root.endsWith(path.sep) ? root : `${root}${path.sep}`);
}

function checkId(id: string): void {
  try {
    checkSessionId(id);
  } catch {
    throw new HttpError(404, "not_found", `no session ${JSON.stringify(id.slice(0, 80))}`);
  }
}

/** The environment without anything that looks like a secret (for client-chosen base URLs). */
function withoutSecrets(env: Env): Env {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !SECRET_NAME.test(name)));
}

/** The model and base URL of a session as the request body gives them, for messages about them. */
const BODY_NAMES: ModelInputNames = {
  model: "model",
  baseURL: "baseUrl",
  example: (model, baseURL) =>
    JSON.stringify({ model, ...(baseURL === undefined ? {} : { baseUrl: baseURL }) }),
};

/** Whether a kept session's pod was made from the same settings: config, model and server. */
function sameSetup(a: ModelSetup, b: ModelSetup): boolean {
  const key = (setup: ModelSetup) =>
    JSON.stringify([setup.config, setup.resolved, setup.baseURL, setup.contextWindow, setup.apiKey]);
  return key(a) === key(b);
}

/**
 * Maps a session store failure to its HTTP answer, in words for the
 * client: the store's own message names the server's files or database,
 * which are the server's business, so it goes to the server's log (as the
 * cause of a 503) and the client gets the session id and what to do.
 */
export function storeError(error: unknown, id?: string): unknown {
  if (HttpError.isInstance(error)) return error;
  if (SessionLogError.isInstance(error)) {
    const session = id === undefined ? "the session" : `session ${id}`;
    switch (error.code) {
      case "not_found":
      case "invalid_id":
        return new HttpError(
          404,
          "not_found",
          id === undefined ? "no such session" : `no session ${JSON.stringify(id.slice(0, 80))}`,
        );
      case "locked":
        return new HttpError(
          409,
          "session_busy",
          `${session} is open on ${error.holder ?? "another host or process"} (running, or kept for its next run); send the run there, or again once it has let the session go`,
          error.holder ? { holder: error.holder } : {},
        );
      case "exists":
        return new HttpError(409, "exists", `${session} exists already`);
      case "io":
        return new HttpError(
          503,
          "store_unavailable",
          `the session store cannot be used now${error.errno ? ` (${error.errno})` : ""}; try again later (the server's log says why)`,
          {},
          error,
        );
    }
  }
  return error;
}
