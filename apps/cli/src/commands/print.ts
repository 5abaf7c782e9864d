/**
 * Print mode (`yoi -p`, or input from a pipe): one prompt run to the end,
 * the answer on stdout as text, one JSON object, or a stream of JSON lines.
 * Diagnostics go to stderr, so stdout stays parseable.
 */
import { fstatSync } from "node:fs";
import { isatty } from "node:tty";
import { type Item, redactDeep, redactSecrets } from "@yoi/llm-client";
import type { RunResult } from "@yoi/llm-worker";
import {
  answerSources,
  createStreamTextRedaction,
  EXIT_PLAN_MODE_TOOL_NAME,
  GitChangesError,
  jsonUsage,
  lastText,
  type Pod,
  type PodEvent,
  type ReviewResult,
  type StreamJsonEvent,
  toStreamJson,
  UsageLedger,
} from "@yoi/pod";
import type { SessionSummary } from "@yoi/worker-persistence";
import type { Command } from "../args.ts";
import { usageError } from "../cli-error.ts";
import { captureConsole } from "../console-capture.ts";
import { describeAlert, describeError, describeFailure } from "../describe-error.ts";
import { EXIT } from "../exit-codes.ts";
import { type BoundedText, inputTooLarge, readBounded, STDIN_LIMIT_BYTES } from "../input-limit.ts";
import { checkFileRefs, openPodWith, restoreWarnings } from "../open-session.ts";
import { sandboxNotice } from "../permission-flags.ts";
import { WITHOUT_ASKING } from "../project-trust.ts";
import { broadScopeWarning } from "../scope-warning.ts";
import { applySessionFlags, loadProjectConfig, modelSetup, type SetupOptions } from "../session-setup.ts";
import { chatSessionPlan } from "../sessions/resume-target.ts";
import { markStartup } from "../startup/trace.ts";
import { createStyle } from "../style.ts";
import { exitAfterFlush } from "../telemetry/exit.ts";
import { jsonLine, sanitize } from "../terminal-text.ts";
import { reviewLines } from "../ui/changes-view.ts";
import { callsExtensionCommand, expandSlash } from "../ui/extension-commands.ts";
import { sourcesText } from "../ui/web-sources.ts";
import { pricingHint } from "../usage-ledger.ts";

export async function printCommand(command: Extract<Command, { kind: "chat" }>): Promise<number> {
  const stdin = await readPipedStdin(command.prompt !== undefined);
  if (stdin?.binary !== undefined) {
    const { reason, cause } = stdin.binary;
    // UTF-16/32 text is converted (its reason says only UTF-8 is read); anything else is a file to attach.
    throw usageError(
      cause === "bom"
        ? `the input on stdin ${reason}; convert it first (iconv -t UTF-8)`
        : `the input on stdin ${reason}, and only text is read from there; save it to a file and attach it with @path (an image is shown to a model that takes images)`,
    );
  }
  const piped = stdin?.text;
  const prompt = [command.prompt, piped].filter((p) => p !== undefined && p.trim() !== "").join("\n\n");
  if (prompt === "" && !stdin?.overflow)
    throw usageError('no prompt: give one (yoi -p "explain src/index.ts") or pipe it on stdin');

  markStartup("print: prompt read");
  // Print mode cannot ask: a project's own settings that widen reach apply once trusted (YOI_TRUST_PROJECT=1, or a yes in interactive yoi).
  const trust: SetupOptions = { trust: WITHOUT_ASKING };
  let base = await loadProjectConfig(command.flags, trust);
  // The picker (only for `-r` without an id) is loaded when asked for: it lays out text, which print mode never does otherwise.
  const pick = async (sessions: SessionSummary[]) =>
    (await import("../sessions/session-picker.ts")).pickSession(sessions, createStyle(false));
  let plan = await chatSessionPlan(command, base, pick);
  if (plan.cwd !== undefined) {
    // The session ran in a worktree: it goes on there, with that checkout's config.
    base = await loadProjectConfig({ ...command.flags, cwd: plan.cwd }, trust);
    plan = await chatSessionPlan({ ...command, flags: { ...command.flags, cwd: plan.cwd } }, base, pick);
  }
  const setup = await modelSetup(await applySessionFlags(base, plan.flags));
  markStartup("print: config and model set up");
  if (stdin?.overflow) {
    const model = `${setup.resolved.providerName}/${setup.resolved.model}`;
    throw usageError(
      inputTooLarge(stdin.bytes, setup.window, model, { atLeast: true, what: "the prompt on stdin" }) ??
        `the prompt on stdin is more than ${STDIN_LIMIT_BYTES} bytes; nothing was sent`,
    );
  }
  // A ref that cannot be attached is the pod's warn alert (on stderr below); only a prompt too large stops here.
  const { tooLarge } = await checkFileRefs(setup, prompt);
  if (tooLarge !== undefined) throw usageError(tooLarge);

  const started = Date.now();
  const opened = await openPodWith(setup, plan.open);
  const { pod } = opened;
  markStartup("print: pod opened");
  // JSON stays JSON: escaped, so no control character reaches a terminal it is printed on.
  const emit = (event: StreamJsonEvent) => process.stdout.write(`${jsonLine(redactDeep(event))}\n`);
  const stream = command.output === "stream-json";
  // What a diagnostic quotes (a command, a server's message) is shown, never acted on.
  const diag = (line: string) => process.stderr.write(`yoi: ${sanitize(line)}\n`);

  const sandboxWarning = sandboxNotice(pod.sandbox);
  const scopeWarning = broadScopeWarning(pod.fs.writeRoots, setup.homeDir, pod.fs.cwd);
  if (stream) {
    emit({
      type: "session",
      session_id: pod.id,
      model: setup.resolved.model,
      provider: setup.resolved.providerName,
      cwd: pod.fs.cwd,
      resumed: opened.restored,
    });
    for (const note of setup.notes) emit({ type: "alert", level: "info", source: "cli", message: note });
    if (sandboxWarning) emit({ type: "alert", level: "warn", source: "sandbox", message: sandboxWarning });
    if (scopeWarning) emit({ type: "alert", level: "warn", source: "scope", message: scopeWarning });
  } else {
    for (const note of setup.notes) diag(`note: ${note}`);
    if (sandboxWarning) diag(`warn: ${sandboxWarning}`);
    if (scopeWarning) diag(`warn: ${scopeWarning}`);
  }
  for (const warning of restoreWarnings(pod)) {
    if (stream) emit({ type: "alert", level: "warn", source: "session_log", message: warning });
    else diag(`warn: ${warning}`);
  }

  const assistant: Item[] = [];
  const redactStreamed = createStreamTextRedaction();
  const model = `${setup.resolved.providerName}/${setup.resolved.model}`;
  const ledger = new UsageLedger(() => setup.config);
  pod.subscribe((event: PodEvent) => {
    ledger.record(event, () => model);
    if (event.type === "item_committed" && event.reason === "assistant") assistant.push(event.item);
    if (stream) {
      for (const shown of redactStreamed(event)) {
        const line = toStreamJson(shown, setup.window);
        if (line) emit(line);
      }
      return;
    }
    if (event.type === "retry") {
      const of = event.maxAttempts !== undefined ? ` of ${event.maxAttempts}` : "";
      diag(
        `retrying (attempt ${event.attempt}${of}) in ${(event.delayMs / 1000).toFixed(1)} s: ${event.reason.split("; retrying")[0]}`,
      );
    }
    // A call refused for want of someone to ask is said once, below, with the flag that allows it.
    const deniedNoUi = event.type === "alert" && event.alert.code === "denied_no_ui";
    if (event.type === "alert" && event.alert.level !== "info" && !deniedNoUi)
      diag(`${event.alert.level}: ${describeAlert(event.alert, "print")}`);
    // A plan that cannot be approved here is the pod's warn alert (above): no allow rule would change that.
    if (
      event.type === "permission_outcome" &&
      event.outcome.by === "no_ui" &&
      event.outcome.tool !== EXIT_PLAN_MODE_TOOL_NAME
    ) {
      const subject = event.outcome.subject ? `: ${event.outcome.subject.split("\n")[0]}` : "";
      const why = event.outcome.reason ? `; ${event.outcome.reason}` : "";
      diag(
        `denied ${event.outcome.tool}${subject} (print mode cannot ask${why}; allow it in .yoi/config.jsonc "permissions" or with --allow-tool)`,
      );
    }
  });

  const restoreConsole = captureConsole(
    (line) =>
      stream ? emit({ type: "alert", level: "warn", source: "sdk", message: line }) : diag(`warn: ${line}`),
    [setup.apiKey],
  );
  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    // A second Ctrl-C leaves now (after the telemetry flush, bounded, when telemetry is on).
    if (interrupts > 1) {
      exitAfterFlush(() => process.exit(EXIT.cancelled));
      return;
    }
    pod.cancel("cancelled by the user (Ctrl-C)");
  };
  process.on("SIGINT", onSigint);
  // `yoi -p "/review [base]"`: the built-in review, unless a command of the user's or the project's is named so.
  const review = /^\/review(?:\s+(\S+))?\s*$/.exec(prompt.trim());
  if (review && !callsExtensionCommand(pod, prompt)) {
    try {
      return await printReview(pod, review[1], {
        output: command.output,
        started,
        emit,
        diag,
        describe: (error) => describeError(error, opened.provider).message,
        ledger,
      });
    } finally {
      process.off("SIGINT", onSigint);
      await pod.close();
      restoreConsole();
    }
  }
  let result: RunResult;
  try {
    // `yoi -p "/review src/a.ts"`: a custom command or an MCP prompt expands to what it sends.
    let input = prompt;
    let allowTools: readonly string[] | undefined;
    if (callsExtensionCommand(pod, prompt)) {
      const expanded = await expandSlash(pod, prompt);
      if (expanded.kind === "error") throw usageError(`${expanded.message} — nothing was sent`);
      input = expanded.text;
      allowTools = expanded.allowTools;
    }
    result = await pod.run(input, allowTools ? { allowTools } : {});
  } finally {
    process.off("SIGINT", onSigint);
    await pod.close();
    restoreConsole();
  }

  const text = redactSecrets(lastText(assistant));
  const sources = redactDeep(answerSources(assistant));
  const resetAt = result.status === "failed" ? result.error?.resetAt : undefined;
  const error =
    result.status === "failed" && result.error
      ? {
          code: result.error.code,
          message: describeFailure(result.error, opened.provider),
          ...(resetAt !== undefined ? { reset_at: new Date(resetAt).toISOString() } : {}),
        }
      : undefined;
  if (command.output === "text") {
    // An answer the session log could not record is not shown as if it were done (the error says why).
    // The model's answer, to a terminal or a file someone will print later: control characters made visible.
    const shown = result.error?.code === "storage" ? "" : sanitize(text);
    if (shown !== "") process.stdout.write(shown.endsWith("\n") ? shown : `${shown}\n`);
    // What a web search found and the answer cites, under the answer, as peers print it.
    if (shown !== "" && sources.length > 0) process.stdout.write(`\n${sanitize(sourcesText(sources))}\n`);
  } else {
    const final: StreamJsonEvent = {
      type: "result",
      status: result.status,
      session_id: pod.id,
      text,
      turns: result.turns,
      usage: jsonUsage(result.usage),
      cost_usd: ledger.totalUsd() ?? null,
      models: ledger.json(),
      duration_ms: Date.now() - started,
      ...(sources.length > 0 ? { citations: sources } : {}),
      ...(error ? { error } : {}),
    };
    process.stdout.write(`${jsonLine(redactDeep(final))}\n`);
    for (const unpriced of ledger.unpriced()) diag(`note: cost_usd is null: ${pricingHint(unpriced)}`);
  }
  switch (result.status) {
    case "completed":
      return EXIT.ok;
    case "cancelled":
      diag("cancelled");
      return EXIT.cancelled;
    case "max_turns":
      diag(
        `stopped after ${result.turns} model calls (the most one prompt may take: --max-turns, or worker.maxTurns in the config); continue with yoi -c`,
      );
      return EXIT.error;
    case "paused":
      diag(`paused: ${result.reason ?? "by a hook"}; continue with yoi -c`);
      return EXIT.error;
    default:
      diag(error?.message ?? result.reason ?? "the run failed");
      return resetAt !== undefined ? EXIT.rateLimited : EXIT.error;
  }
}

/** Runs `/review [base]` in print mode: findings as text, or in the `result` object's `review`. */
async function printReview(
  pod: Pod,
  base: string | undefined,
  io: {
    output: string;
    started: number;
    emit: (event: StreamJsonEvent) => void;
    diag: (line: string) => void;
    describe: (error: unknown) => string;
    /** What the reviewer's model calls cost, recorded from the pod's events. */
    ledger: UsageLedger;
  },
): Promise<number> {
  let result: ReviewResult | undefined;
  try {
    result = await pod.review(base !== undefined ? { base } : {});
  } catch (error) {
    if (GitChangesError.isInstance(error)) throw usageError(`/review: ${error.message}`);
    const message = io.describe(error);
    if (io.output !== "text") {
      io.emit({
        type: "result",
        status: "failed",
        session_id: pod.id,
        text: "",
        turns: 0,
        usage: jsonUsage(undefined),
        cost_usd: io.ledger.totalUsd() ?? null,
        models: io.ledger.json(),
        duration_ms: Date.now() - io.started,
        error: { code: "review_failed", message },
      });
    }
    io.diag(`review failed: ${message}`);
    return EXIT.error;
  }
  if (io.output === "text") {
    const text =
      result === undefined
        ? `nothing to review: no changes against ${base !== undefined ? `${base}...HEAD` : "HEAD"}`
        : reviewLines(result, createStyle(false)).join("\n");
    process.stdout.write(`${text}\n`);
  } else {
    io.emit({
      type: "result",
      status: "completed",
      session_id: pod.id,
      text: result?.summary ?? "",
      turns: 0,
      usage: jsonUsage(result?.usage),
      cost_usd: io.ledger.totalUsd() ?? null,
      models: io.ledger.json(),
      duration_ms: Date.now() - io.started,
      review: {
        against: result?.against ?? (base !== undefined ? `${base}...HEAD` : "HEAD"),
        files: result?.files ?? 0,
        findings: result === undefined ? [] : (result.findings ?? null),
        ...(result?.parseError !== undefined ? { parse_error: result.parseError } : {}),
      },
    });
  }
  if (result?.parseError !== undefined)
    io.diag(`warn: the review's findings could not be read: ${result.parseError}`);
  return EXIT.ok;
}

/**
 * Reads stdin when it is a pipe or a file. With a prompt on the command line
 * a socket is not read (a parent process that keeps our stdin open would
 * otherwise hang us); without one it is the only place a prompt can be.
 */
async function readPipedStdin(havePrompt: boolean): Promise<BoundedText | undefined> {
  // isatty, not process.stdin.isTTY: creating process.stdin builds a stream (some 0.3 ms), needed only to read.
  if (isatty(0)) return undefined;
  let kind: "fifo" | "file" | "socket" | "other" = "other";
  try {
    const st = fstatSync(0);
    kind = st.isFIFO() ? "fifo" : st.isFile() ? "file" : st.isSocket() ? "socket" : "other";
  } catch {
    return undefined;
  }
  if (havePrompt && kind !== "fifo" && kind !== "file") return undefined;
  return readBounded(process.stdin);
}
