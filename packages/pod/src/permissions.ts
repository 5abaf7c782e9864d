/**
 * Permissions: manifest rules (allow / deny / ask per tool glob and a glob on
 * the call's primary argument), checked in order, first match wins; then the
 * per-tool defaults (read-only tools allow, writes and bash ask). `ask` goes
 * to the UI callback; with no callback the call is denied (fail closed).
 * Runs as a worker Hook, so a denial reaches the model as an error result it
 * can act on.
 */

import * as path from "node:path";
import type { Hook, HookToolAction, ToolCallInfo } from "@yoi/llm-worker";
import { PERMISSION_DEFAULTS, type PermissionAction, type PermissionsConfig } from "@yoi/manifest";
import picomatch from "picomatch";
import type { ScopedFs } from "./scoped-fs.ts";

export type PermissionDecision = "allow" | "allow_always" | "deny";

/** What the UI is asked to decide. */
export interface PermissionRequest {
  callId: string;
  tool: string;
  /** Parsed arguments of the call. */
  args: unknown;
  /** The primary argument shown to the user: a path for file tools, the command for bash. */
  subject: string | undefined;
  /** One line for the prompt, e.g. `bash: npm test`. */
  summary: string;
  /** Aborted when the run is cancelled while the question is open. */
  signal: AbortSignal;
}

/** The UI callback. A rejected promise counts as `deny`. */
export type PermissionPrompt = (request: PermissionRequest) => Promise<PermissionDecision>;

/** What decided a call, for logs and UIs. */
export interface PermissionOutcome {
  callId: string;
  tool: string;
  subject: string | undefined;
  action: "allow" | "deny";
  /** `rule` (a manifest rule), `default`, `session` (an earlier allow_always), `user`, `no_ui`. */
  by: "rule" | "default" | "session" | "user" | "no_ui";
  /** Index of the rule in `permissions.rules`, when one decided. */
  rule?: number;
}

export interface PermissionPolicyOptions {
  /** The UI callback for `ask`. Without one, `ask` denies. */
  ask?: PermissionPrompt;
  /** Used to show path arguments relative to the project and to see through symlinks. */
  fs?: ScopedFs;
  /** The signal of the current run (handed to the UI callback). */
  signal?: () => AbortSignal | undefined;
  /** Told every decision (the pod logs and forwards them). */
  onOutcome?: (outcome: PermissionOutcome) => void;
}

/** Tools whose primary argument is a path, and its key. */
const PATH_ARG: Record<string, string> = {
  read_file: "path",
  write_file: "path",
  edit_file: "path",
  list_dir: "path",
  glob: "path",
  grep: "path",
};

/** The primary argument of a call: a path for file tools, the command for bash. */
export function primaryArgument(tool: string, args: unknown): string | undefined {
  if (typeof args !== "object" || args === null) return undefined;
  const record = args as Record<string, unknown>;
  const key = tool === "bash" ? "command" : PATH_ARG[tool];
  if (key === undefined) return undefined;
  const value = record[key];
  if (typeof value === "string") return value;
  // File tools without a path act on the project root.
  return key === "path" ? "." : undefined;
}

/** A command glob: `*` matches anything (slashes and spaces included), `?` one character. */
function commandMatcher(glob: string): (command: string) => boolean {
  let re = "";
  for (const ch of glob) {
    if (ch === "*") re += "[\\s\\S]*";
    else if (ch === "?") re += "[\\s\\S]";
    else re += ch.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  const compiled = new RegExp(`^${re}$`);
  return (command) => compiled.test(command.trim());
}

/**
 * The simple commands of a shell line, split at `;`, `&&`, `||`, `|`, `&`
 * and newlines; undefined when it holds a substitution (`$(`, backticks,
 * process substitution), which no allow rule may vouch for.
 */
export function simpleCommands(command: string): string[] | undefined {
  if (/\$\(|`|<\(|>\(/.test(command)) return undefined;
  return command
    .split(/&&|\|\||[;&|\n]/)
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** Every piece of a shell line a deny rule may catch, substitutions split open too. */
function commandFragments(command: string): string[] {
  return command
    .split(/&&|\|\||\$\(|<\(|>\(|[;&|\n`()]/)
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** A path glob as a one-argument predicate (picomatch's matcher takes a second, truthy-index argument). */
function pathMatcher(glob: string): (subject: string) => boolean {
  const isMatch = picomatch(glob, { dot: true });
  return (subject) => isMatch(subject);
}

interface CompiledRule {
  index: number;
  tool: (name: string) => boolean;
  match: ((subject: string) => boolean) | undefined;
  action: PermissionAction;
}

/** A permission policy for one session. */
export class PermissionPolicy {
  private readonly rules: CompiledRule[];
  private readonly defaults: Record<string, PermissionAction>;
  private readonly options: PermissionPolicyOptions;
  /** allow_always grants: a tool name -> `*` (any subject) or exact subjects. */
  private readonly grants = new Map<string, Set<string>>();

  constructor(config: Partial<PermissionsConfig> = {}, options: PermissionPolicyOptions = {}) {
    this.options = options;
    this.defaults = { ...PERMISSION_DEFAULTS, ...(config.default ?? {}) };
    this.rules = (config.rules ?? []).map((rule, index) => ({
      index,
      tool: pathMatcher(rule.tool),
      match:
        rule.match === undefined
          ? undefined
          : rule.tool === "bash"
            ? commandMatcher(rule.match)
            : pathMatcher(rule.match),
      action: rule.action,
    }));
  }

  /** The names a subject goes by: for paths, as written (normalized) and the real path. */
  private async names(tool: string, subject: string): Promise<string[]> {
    if (PATH_ARG[tool] === undefined) return [subject];
    const fs = this.options.fs;
    if (fs === undefined) return [path.normalize(subject)];
    const names = new Set<string>([fs.display(path.resolve(fs.cwd, subject))]);
    try {
      names.add(fs.display((await fs.resolve(subject, "read")).real));
    } catch {
      // Out of scope or invalid: the tool itself will refuse it.
    }
    return [...names];
  }

  /**
   * The static decision for a call (rules, then defaults), before asking
   * anyone. A rule that allows must hold for every name of the subject
   * (each simple command of a shell line, the written and the real path);
   * a rule that denies or asks needs only one.
   */
  async evaluate(tool: string, args: unknown): Promise<{ action: PermissionAction; rule?: number }> {
    const subject = primaryArgument(tool, args);
    let names: string[] | undefined;
    if (subject !== undefined) {
      names = tool === "bash" ? [subject, ...commandFragments(subject)] : await this.names(tool, subject);
    }
    // A shell line is allowed once allow rules cover each of its simple commands (several rules may share the work).
    const bashParts = tool === "bash" && subject !== undefined ? simpleCommands(subject) : undefined;
    const covered = new Set<number>();
    for (const rule of this.rules) {
      if (!rule.tool(tool)) continue;
      const match = rule.match;
      if (match === undefined) return { action: rule.action, rule: rule.index };
      if (subject === undefined || names === undefined) continue;
      if (rule.action !== "allow") {
        // Tightening: one name or fragment is enough.
        if (names.some((n) => match(n))) return { action: rule.action, rule: rule.index };
        continue;
      }
      if (tool === "bash") {
        if (bashParts === undefined || bashParts.length === 0) continue;
        bashParts.forEach((part, i) => {
          if (match(part)) covered.add(i);
        });
        if (covered.size === bashParts.length) return { action: "allow", rule: rule.index };
      } else if (names.every((n) => match(n))) {
        // Loosening: the path as written and its real path must both match.
        return { action: "allow", rule: rule.index };
      }
    }
    return { action: this.defaults[tool] ?? this.defaults["*"] ?? "ask" };
  }

  /** Decides a call, asking the UI when needed. Never throws. */
  async check(call: Pick<ToolCallInfo, "callId" | "name" | "args">): Promise<PermissionOutcome> {
    const tool = call.name;
    const subject = primaryArgument(tool, call.args);
    const base = { callId: call.callId, tool, subject };
    const done = (outcome: PermissionOutcome) => {
      try {
        this.options.onOutcome?.(outcome);
      } catch {
        // Observers must not change a decision.
      }
      return outcome;
    };
    const evaluated = await this.evaluate(tool, call.args);
    const by = evaluated.rule === undefined ? "default" : "rule";
    const ruleField = evaluated.rule === undefined ? {} : { rule: evaluated.rule };
    if (evaluated.action !== "ask") return done({ ...base, action: evaluated.action, by, ...ruleField });
    const granted = this.grants.get(tool);
    if (granted !== undefined && (granted.has("*") || (subject !== undefined && granted.has(subject)))) {
      return done({ ...base, action: "allow", by: "session" });
    }
    const ask = this.options.ask;
    if (ask === undefined) return done({ ...base, action: "deny", by: "no_ui", ...ruleField });
    const signal = this.options.signal?.() ?? new AbortController().signal;
    let decision: PermissionDecision;
    try {
      // A cancelled run must not wait on a question nobody will answer: abort counts as deny.
      decision = await untilAborted(
        ask({
          callId: call.callId,
          tool,
          args: call.args,
          subject,
          summary: subject === undefined ? tool : `${tool}: ${subject.split("\n")[0]}`,
          signal,
        }),
        signal,
      );
    } catch {
      decision = "deny";
    }
    if (decision === "allow_always") {
      // File tools: the tool for the rest of the session; bash: this exact command.
      const key = tool === "bash" ? (subject ?? "*") : "*";
      if (!this.grants.has(tool)) this.grants.set(tool, new Set());
      this.grants.get(tool)!.add(key);
    }
    return done({ ...base, action: decision === "deny" ? "deny" : "allow", by: "user" });
  }

  /** The message a denied call returns to the model. */
  static denialMessage(outcome: PermissionOutcome): string {
    const what =
      outcome.subject === undefined ? outcome.tool : `${outcome.tool} (${firstLine(outcome.subject)})`;
    switch (outcome.by) {
      case "rule":
        return `Permission denied: ${what} is blocked by permission rule #${(outcome.rule ?? 0) + 1} of this project. Do not retry it; choose another approach or ask the user to change the rule.`;
      case "default":
        return `Permission denied: ${what} is not allowed in this session. Do not retry it; choose another approach.`;
      case "no_ui":
        return `Permission denied: ${what} needs the user's approval, and no one can approve it in this session. Do not retry it; finish what you can without it and tell the user what you would have run.`;
      default:
        return `Permission denied: the user declined ${what}. Do not retry the same call; ask the user how to proceed or choose another approach.`;
    }
  }

  /** The policy as a worker Hook: a denied call is not run and the model gets the denial message. */
  hook(): Hook {
    return {
      name: "permissions",
      beforeToolCall: async (call: ToolCallInfo): Promise<HookToolAction | undefined> => {
        const outcome = await this.check(call);
        if (outcome.action === "allow") return undefined;
        return { action: "deny", message: PermissionPolicy.denialMessage(outcome) };
      },
    };
  }
}

function untilAborted(answer: Promise<PermissionDecision>, signal: AbortSignal): Promise<PermissionDecision> {
  if (signal.aborted) return Promise.resolve("deny");
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve("deny");
    signal.addEventListener("abort", onAbort, { once: true });
    answer.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
