/**
 * Permissions: rules from every config source (allow / deny / ask per tool
 * glob and a glob on the call's primary argument), the session's mode, then
 * the per-tool defaults (read-only tools allow, writes and bash ask). A deny
 * rule anywhere wins, then an ask rule, then an allow rule, whatever their
 * order or source. `ask` goes to the UI callback; with no callback the call
 * is denied (fail closed). Runs as a worker Hook, so a denial reaches the
 * model as an error result it can act on.
 *
 * bash lines are read with a real shell parser (shell-parse.ts): an allow
 * rule must cover every simple command of the line, every redirection is a
 * write checked like write_file (outside the scope: denied), and a line the
 * parser cannot classify asks.
 */

import { homedir } from "node:os";
import * as path from "node:path";
import type { Hook, HookToolAction, ToolCallInfo } from "@yoi/llm-worker";
import type { PermissionAction, PermissionMode, PermissionRule, PermissionsConfig } from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import type { ScopedFs } from "../fs/scoped-fs.ts";
import { abortable } from "../input/abortable.ts";
import { protectedPathReason } from "../sandbox/protected-paths.ts";
import { WEB_FETCH_TOOL_NAME, webFetchHost } from "../tools/web-fetch.ts";
import { PERMISSION_DEFAULTS, READ_ONLY_ASKING_TOOLS } from "./defaults.ts";
import { commandMatcher, pathMatcher } from "./matchers.ts";
import { PermissionModeError } from "./mode-error.ts";
import { analyzeShell, type ShellWrite } from "./shell-parse.ts";

export type PermissionDecision =
  | "allow"
  | "allow_always"
  | "deny"
  | PermissionDenial
  | PermissionPrefixGrant
  | PlanApproval
  | PermissionEdit;

/**
 * The answer to `exit_plan_mode`: the plan is approved and the session
 * leaves plan mode for `mode`. (A rejection is a `PermissionDenial` whose
 * reason is the user's feedback, or a plain `deny`.)
 */
export interface PlanApproval {
  action: "approve_plan";
  /** The mode the work goes on in. */
  mode: "acceptEdits" | "default";
}

/**
 * "Yes, with these arguments": the call runs with `args` instead of the
 * model's (checked against the tool's schema like the model's would be);
 * the committed tool call keeps what the model sent.
 */
export interface PermissionEdit {
  action: "allow";
  args: unknown;
}

/** A "no" with the user's reason, which the model gets in the denied call's result. */
export interface PermissionDenial {
  action: "deny";
  /** What the user wants the model to know (why not, what to do instead). */
  reason: string;
}

/**
 * "Always" for bash as prefix rules (`git status *`, see `bashPrefixRules`):
 * for the rest of the session a line is allowed when each of its simple
 * commands matches a granted prefix and it writes nothing through a
 * redirection; this call is allowed now.
 */
export interface PermissionPrefixGrant {
  action: "allow_always";
  /** Bash `match` globs, one per simple command, as `bashPrefixRules` derives them (or one). */
  rule: string | readonly string[];
}

/** A rule in force, as {@link PermissionPolicy.listRules} shows it. */
export interface PermissionRuleInfo extends PermissionRule {
  /** Its index (the `rule` of an outcome it decided). */
  index: number;
  /** Where it came from (a config file, `flag:--allow-tool`, a store of approvals), when known. */
  source?: string;
}

/**
 * An "always ... this session" answer: every call of `tool`, a bash prefix
 * rule (`match`, `git log *`), or one exact subject (`exact`: a bash line, a
 * web_fetch host).
 */
export interface SessionGrant {
  tool: string;
  match?: string;
  exact?: boolean;
}

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
  /** Why the call asks when that is not the plain default (no sandbox, a line the parser cannot read). */
  reason?: string;
  /** Aborted when the run is cancelled while the question is open. */
  signal: AbortSignal;
}

/** The UI callback. A rejected promise counts as `deny`. */
export type PermissionPrompt = (request: PermissionRequest) => Promise<PermissionDecision>;

/**
 * What decided a call: `rule` (a config rule), `default` (per-tool default),
 * `mode` (the permission mode), `scope` (a bash redirection outside the
 * scope), `sandbox` (bash without a sandbox always asks), `parse` (a bash
 * line the parser cannot classify asks), `protected` (a write to a path
 * whose content runs later, outside the sandbox: git hooks and config,
 * editor and agent settings, shell start-up files; it asks every time),
 * `session` (an earlier allow_always), `user`, `no_ui`, `tool` (the tool's
 * own check refused the call before anyone was asked: a file not read in
 * this session, a path outside the scope; the model gets the tool's error).
 */
export type PermissionDecider =
  | "tool"
  | "rule"
  | "default"
  | "mode"
  | "scope"
  | "sandbox"
  | "parse"
  | "protected"
  | "session"
  | "user"
  | "no_ui";

/** What decided a call, for logs and UIs. */
export interface PermissionOutcome {
  callId: string;
  tool: string;
  subject: string | undefined;
  action: "allow" | "deny";
  by: PermissionDecider;
  /** Index of the rule in the policy's rule list, when one decided. */
  rule?: number;
  /** Where that rule came from (a config file, `flag:--deny-tool`), when known. */
  source?: string;
  /** The mode the session was in. */
  mode?: PermissionMode;
  /** Why, in a few words (the scope violation, the unreadable construct). */
  reason?: string;
  /** The arguments the call runs with, when the one who allowed it changed them ({@link PermissionEdit}). */
  args?: unknown;
}

/** The static decision for a call, before anyone is asked. */
export interface PermissionEvaluation {
  action: PermissionAction;
  by: Exclude<PermissionDecider, "session" | "user" | "no_ui">;
  rule?: number;
  reason?: string;
}

/** Whether bash runs in an OS sandbox: `active`, `unavailable` (none here), `disabled` (the user opted out). */
export type SandboxStatus = "active" | "unavailable" | "disabled";

export interface PermissionPolicyOptions {
  /** The UI callback for `ask`. Without one, `ask` denies. */
  ask?: PermissionPrompt;
  /** Used to resolve paths (and redirection targets) against the scope and to see through symlinks. */
  fs?: ScopedFs;
  /** The signal of the current run (handed to the UI callback). */
  signal?: () => AbortSignal | undefined;
  /** Told every decision (the pod logs and forwards them). */
  onOutcome?: (outcome: PermissionOutcome) => void;
  /** Source of each rule of `config.rules`, same order (for messages and `yoi config`). */
  sources?: readonly (string | undefined)[];
  /** The starting mode. Default `config.mode`, else `default`. */
  mode?: PermissionMode;
  /** Sandbox status of bash. Default `disabled` (no sandbox required: the caller decides). */
  sandbox?: SandboxStatus;
  /** The user passed the explicit flag that allows bypassPermissions without a sandbox. */
  allowUnsandboxedBypass?: boolean;
  /**
   * Whether `nextMode` (Shift+Tab) goes through bypassPermissions. Default:
   * only when the session starts in it or `allowUnsandboxedBypass` is given
   * (the user asked for it), never by cycling past plan by accident.
   */
  bypassInCycle?: boolean;
  /** Tools that only read (allowed in plan mode). Default: those the built-in defaults allow, and web_search. */
  readOnlyTools?: readonly string[];
  /** Home directory for `~` in redirection targets. Default `os.homedir()`. */
  home?: string;
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

/** Tools acceptEdits lets through inside the scope. */
const EDIT_TOOLS = new Set(["write_file", "edit_file"]);

/** Redirection targets that are not files in anyone's scope. */
const HARMLESS_TARGETS = /^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/;

/** Commands that change the directory later relative redirections resolve against. */
const CHANGES_DIRECTORY = /^(cd|pushd|popd)(\s|$)/;

/**
 * Modes in the order a UI cycles through them (`nextMode`);
 * bypassPermissions only in a session that may use it from the start (see
 * `PermissionPolicyOptions.bypassInCycle`).
 */
export const MODE_CYCLE: readonly PermissionMode[] = ["default", "acceptEdits", "plan", "bypassPermissions"];

/** The tool through which the model presents its plan in plan mode (tools/exit-plan-mode.ts). */
const EXIT_PLAN_MODE = "exit_plan_mode";

/** The primary argument of a call: a path for file tools, the command for bash. */
export function primaryArgument(tool: string, args: unknown): string | undefined {
  if (typeof args !== "object" || args === null) return undefined;
  const record = args as Record<string, unknown>;
  // web_fetch: the host, so rules read `web_fetch(docs.example.com)`.
  if (tool === WEB_FETCH_TOOL_NAME) return webFetchHost(record.url);
  const key = tool === "bash" ? "command" : PATH_ARG[tool];
  if (key === undefined) return undefined;
  const value = record[key];
  if (typeof value === "string") return value;
  // File tools without a path act on the project root.
  return key === "path" ? "." : undefined;
}

/**
 * Pieces of a shell line a deny rule may catch when the parser cannot read
 * the line: split at every operator, substitutions split open too.
 */
function roughFragments(command: string): string[] {
  return command
    .split(/&&|\|\||\$\(|<\(|>\(|[;&|\n`()]/)
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** Words that run the rest of their line as a command (`nohup rm x`): deny rules see through them. */
const WRAPPERS = /^(?:(?:sudo|nohup|time|nice|command|builtin|exec|env|xargs)\s+(?:-\S+\s+)*)+/;

interface CompiledRule {
  index: number;
  rule: PermissionRule;
  /** Removed during the session (`removeRule`): it matches nothing, its index stays. */
  removed?: boolean;
  tool: (name: string) => boolean;
  match: ((subject: string) => boolean) | undefined;
  action: PermissionAction;
  source: string | undefined;
}

type Verdict = { action: PermissionAction; rule: number } | undefined;

const STRICTNESS: Record<PermissionAction, number> = { allow: 0, ask: 1, deny: 2 };

/** A permission policy for one session. */
export class PermissionPolicy {
  private readonly rules: CompiledRule[] = [];
  private readonly defaults: Record<string, PermissionAction>;
  private readonly options: PermissionPolicyOptions;
  private readonly readOnly: ReadonlySet<string>;
  /** allow_always grants: a tool name -> `*` (any subject) or exact subjects. */
  private readonly grants = new Map<string, Set<string>>();
  /** bash prefix rules granted with "always" (`git status *`). */
  readonly #prefixGrants: { rule: string; match: (command: string) => boolean }[] = [];
  /** Tool-name globs pre-approved for a while (a custom command's `allowed-tools`). */
  private readonly preApproved = new Set<(tool: string) => boolean>();
  #mode: PermissionMode;
  #sandbox: SandboxStatus;
  readonly #bypassInCycle: boolean;
  readonly #modeListeners = new Set<(mode: PermissionMode) => void>();

  constructor(config: Partial<PermissionsConfig> = {}, options: PermissionPolicyOptions = {}) {
    this.options = options;
    this.#sandbox = options.sandbox ?? "disabled";
    this.defaults = { ...PERMISSION_DEFAULTS, ...(config.default ?? {}) };
    (config.rules ?? []).forEach((rule, index) => {
      this.addRule(rule, options.sources?.[index]);
    });
    this.readOnly = new Set(
      options.readOnlyTools ?? [
        ...Object.entries(PERMISSION_DEFAULTS)
          .filter(([tool, action]) => action === "allow" && tool !== "*")
          .map(([tool]) => tool),
        ...READ_ONLY_ASKING_TOOLS,
      ],
    );
    const mode = options.mode ?? config.mode ?? "default";
    this.#assertModeAllowed(mode);
    this.#mode = mode;
    this.#bypassInCycle =
      options.bypassInCycle ?? (mode === "bypassPermissions" || options.allowUnsandboxedBypass === true);
  }

  /** The current permission mode. */
  get mode(): PermissionMode {
    return this.#mode;
  }

  /** Whether bash runs in a sandbox here. */
  get sandbox(): SandboxStatus {
    return this.#sandbox;
  }

  /**
   * The sandbox as the probe settled it, where the session began with the
   * one it expected. Without an active sandbox, bypassPermissions (unless
   * the explicit opt-in allows it) falls back to `default`, before any
   * command runs in it: true when the mode changed so.
   */
  settleSandbox(status: SandboxStatus): boolean {
    this.#sandbox = status;
    if (this.modeAllowed(this.#mode)) return false;
    this.setMode("default");
    return true;
  }

  /**
   * Switches the mode. Throws {@link PermissionModeError} for
   * `bypassPermissions` without an active sandbox or the explicit opt-in.
   */
  setMode(mode: PermissionMode): void {
    this.#assertModeAllowed(mode);
    if (mode === this.#mode) return;
    this.#mode = mode;
    for (const listener of [...this.#modeListeners]) {
      try {
        listener(mode);
      } catch {
        // Observers must not change the mode.
      }
    }
  }

  /**
   * The next mode in `MODE_CYCLE` order that this session may enter:
   * default → acceptEdits → plan → default, with bypassPermissions after
   * plan only where `bypassInCycle` holds and the mode is allowed.
   */
  nextMode(): PermissionMode {
    const at = MODE_CYCLE.indexOf(this.#mode);
    for (let step = 1; step <= MODE_CYCLE.length; step++) {
      const next = MODE_CYCLE[(at + step) % MODE_CYCLE.length]!;
      if (next === "bypassPermissions" && !this.#bypassInCycle) continue;
      if (this.modeAllowed(next)) return next;
    }
    return this.#mode;
  }

  /** False for `bypassPermissions` when there is no sandbox and no explicit opt-in. */
  modeAllowed(mode: PermissionMode): boolean {
    return (
      mode !== "bypassPermissions" ||
      this.sandbox === "active" ||
      this.options.allowUnsandboxedBypass === true
    );
  }

  /** Tells `listener` every mode change; returns the unsubscribe function. */
  onModeChange(listener: (mode: PermissionMode) => void): () => void {
    this.#modeListeners.add(listener);
    return () => {
      this.#modeListeners.delete(listener);
    };
  }

  #assertModeAllowed(mode: PermissionMode): void {
    if (this.modeAllowed(mode)) return;
    throw new PermissionModeError(
      "bypass_without_sandbox",
      "bypassPermissions needs the bash sandbox, which is not active here",
    );
  }

  /**
   * Adds a rule for the rest of the session (after the config's), e.g. the
   * "always allow `git status *`" answer of a permission prompt. Returns its index.
   */
  addRule(rule: PermissionRule, source?: string): number {
    const index = this.rules.length;
    this.rules.push({
      index,
      rule: { ...rule },
      tool: pathMatcher(rule.tool),
      match:
        rule.match === undefined
          ? undefined
          : rule.tool === "bash"
            ? commandMatcher(rule.match)
            : pathMatcher(rule.match),
      action: rule.action,
      source,
    });
    return index;
  }

  /** Where rule `index` came from, when known. */
  ruleSource(index: number): string | undefined {
    return this.rules[index]?.source;
  }

  /** The rules in force, in order: the config's, then those added during the session. */
  listRules(): PermissionRuleInfo[] {
    return this.rules
      .filter((r) => !r.removed)
      .map((r) => ({ index: r.index, ...r.rule, ...(r.source !== undefined ? { source: r.source } : {}) }));
  }

  /**
   * Takes rule `index` out of force for the rest of the session (a removed
   * "always for this project" approval); the other rules keep their
   * indices. Returns whether it was in force.
   */
  removeRule(index: number): boolean {
    const rule = this.rules[index];
    if (rule === undefined || rule.removed) return false;
    rule.removed = true;
    rule.tool = () => false;
    return true;
  }

  /** What the "always ... this session" answers granted so far. */
  sessionGrants(): SessionGrant[] {
    const out: SessionGrant[] = [];
    for (const [tool, keys] of this.grants)
      for (const key of keys) out.push(key === "*" ? { tool } : { tool, match: key, exact: true });
    for (const grant of this.#prefixGrants) out.push({ tool: "bash", match: grant.rule });
    return out;
  }

  /** Withdraws a grant {@link sessionGrants} listed; returns whether it was there. */
  revokeSessionGrant(grant: SessionGrant): boolean {
    if (grant.tool === "bash" && grant.match !== undefined && grant.exact !== true) {
      const at = this.#prefixGrants.findIndex((g) => g.rule === grant.match);
      if (at < 0) return false;
      this.#prefixGrants.splice(at, 1);
      return true;
    }
    return this.grants.get(grant.tool)?.delete(grant.match ?? "*") ?? false;
  }

  /** The names a subject goes by: for paths, as written (normalized) and the real path. */
  private async names(tool: string, subject: string): Promise<string[]> {
    if (PATH_ARG[tool] === undefined) return [subject];
    const fs = this.options.fs;
    if (fs === undefined) return [path.normalize(subject)];
    const names = new Set<string>([fs.display(path.resolve(fs.cwd, subject))]);
    // Only a rule with a path pattern for this tool reads the names. Without one (the default config), the
    // real path, a realpath walk of every component on each call, would be resolved for nothing. Asked on
    // each call: an "always" answer adds rules during the session.
    if (!this.rules.some((rule) => rule.match !== undefined && rule.tool(tool))) return [...names];
    try {
      names.add(fs.display((await fs.resolve(subject, "read")).real));
    } catch {
      // Out of scope or invalid: the tool itself will refuse it.
    }
    return [...names];
  }

  /**
   * The strictest rule for a call: any deny, else any ask (each needs only one
   * name to match), else an allow that holds for every name.
   */
  private matchRules(
    tool: string,
    names: readonly string[] | undefined,
  ): { deny: Verdict; ask: Verdict; allow: Verdict } {
    let deny: Verdict;
    let ask: Verdict;
    let allow: Verdict;
    for (const rule of this.rules) {
      if (!rule.tool(tool)) continue;
      const match = rule.match;
      const hit =
        match === undefined
          ? true
          : names !== undefined && names.length > 0
            ? rule.action === "allow"
              ? names.every((n) => match(n))
              : names.some((n) => match(n))
            : false;
      if (!hit) continue;
      const verdict = { action: rule.action, rule: rule.index };
      if (rule.action === "deny") deny ??= verdict;
      else if (rule.action === "ask") ask ??= verdict;
      else allow ??= verdict;
    }
    return { deny, ask, allow };
  }

  /** The static decision for a call (rules, mode, defaults), before asking anyone. */
  async evaluate(tool: string, args: unknown): Promise<PermissionEvaluation> {
    // The plan is the user's to approve: no rule, mode or "always" answers it.
    if (tool === EXIT_PLAN_MODE) return { action: "ask", by: "default" };
    const subject = primaryArgument(tool, args);
    if (tool === "bash") return this.evaluateBash(subject);
    const names = subject === undefined ? undefined : await this.names(tool, subject);
    const guarded = EDIT_TOOLS.has(tool) && subject !== undefined ? await this.#guarded(subject) : undefined;
    return this.decide(tool, names, guarded);
  }

  /**
   * Why writing `target` is protected (protected-paths.ts), as written and
   * as its real path (a link into `.git/hooks` is a write to the hook).
   */
  async #guarded(target: string): Promise<string | undefined> {
    const fs = this.options.fs;
    if (fs === undefined) return protectedPathReason(path.resolve("/", target), ["/"]);
    const candidates = [path.resolve(fs.cwd, target)];
    try {
      candidates.push((await fs.resolve(target, "write")).real);
    } catch {
      // Out of scope or invalid: decided (and refused) elsewhere.
    }
    for (const candidate of candidates) {
      const reason = protectedPathReason(candidate, fs.writeRoots);
      if (reason !== undefined) return reason;
    }
    return undefined;
  }

  /**
   * `guarded`: why the call writes a protected path. Such a write asks in
   * every mode but bypassPermissions: neither acceptEdits, a default, an
   * "always" of this session nor a rule without a path allows it; a rule
   * that names the path (`match`) does, since rules that allow come only
   * from the user's own config or a project the user trusted.
   */
  private decide(tool: string, names: readonly string[] | undefined, guarded?: string): PermissionEvaluation {
    const { deny, ask, allow } = this.matchRules(tool, names);
    if (deny) return { action: "deny", by: "rule", rule: deny.rule };
    if (this.#mode === "plan" && !this.readOnly.has(tool))
      return { action: "deny", by: "mode", reason: "plan mode allows only read-only tools" };
    if (guarded !== undefined) {
      if (allow && !ask && this.rules[allow.rule]?.match !== undefined)
        return { action: "allow", by: "rule", rule: allow.rule };
      if (this.#mode === "bypassPermissions") return { action: "allow", by: "mode" };
      return { action: "ask", by: "protected", reason: guarded };
    }
    if (ask) return { action: "ask", by: "rule", rule: ask.rule };
    if (allow) return { action: "allow", by: "rule", rule: allow.rule };
    if (this.#mode === "bypassPermissions") return { action: "allow", by: "mode" };
    if (this.#mode === "acceptEdits" && EDIT_TOOLS.has(tool)) return { action: "allow", by: "mode" };
    return { action: this.defaults[tool] ?? this.defaults["*"] ?? "ask", by: "default" };
  }

  private async evaluateBash(line: string | undefined): Promise<PermissionEvaluation> {
    if (line === undefined) return this.decide("bash", undefined);
    const analysis = await analyzeShell(line);
    const commands = analysis.commands;
    // Deny and ask rules may catch any piece: the whole line, each simple command, each behind a wrapper.
    const pieces = new Set<string>([line.trim(), ...commands]);
    for (const c of commands) pieces.add(c.replace(WRAPPERS, ""));
    if (analysis.kind === "unclassifiable") for (const f of roughFragments(line)) pieces.add(f);
    const { deny, ask } = this.matchRules("bash", [...pieces]);
    if (deny) return { action: "deny", by: "rule", rule: deny.rule };
    if (this.#mode === "plan")
      return { action: "deny", by: "mode", reason: "plan mode allows only read-only tools" };
    if (ask) return { action: "ask", by: "rule", rule: ask.rule };

    let result: PermissionEvaluation;
    const wholeLine = this.rules.find((r) => r.action === "allow" && r.match === undefined && r.tool("bash"));
    if (analysis.kind === "unclassifiable") {
      result =
        this.#mode === "bypassPermissions"
          ? { action: "allow", by: "mode" }
          : wholeLine !== undefined
            ? { action: "allow", by: "rule", rule: wholeLine.index }
            : { action: "ask", by: "parse", reason: analysis.reason };
    } else {
      result = this.commandsDecision(commands);
      for (const write of analysis.writes) {
        const w = await this.evaluateWrite(write, commands);
        if (STRICTNESS[w.action] > STRICTNESS[result.action]) result = w;
        if (result.action === "deny") return result;
      }
    }
    if (
      result.action === "allow" &&
      this.sandbox === "unavailable" &&
      !(this.#mode === "bypassPermissions" && this.options.allowUnsandboxedBypass === true)
    ) {
      return {
        action: "ask",
        by: "sandbox",
        reason: "no sandbox is available here, so every bash command needs approval",
      };
    }
    return result;
  }

  /** Allowed when allow rules cover every simple command (several rules may share the work). */
  private commandsDecision(commands: readonly string[]): PermissionEvaluation {
    if (commands.length > 0) {
      let last = -1;
      const covered = commands.every((command) => {
        const rule = this.rules.find(
          (r) => r.action === "allow" && r.tool("bash") && (r.match?.(command) ?? true),
        );
        if (rule !== undefined) last = Math.max(last, rule.index);
        return rule !== undefined;
      });
      if (covered) return { action: "allow", by: "rule", rule: last };
    }
    if (this.#mode === "bypassPermissions") return { action: "allow", by: "mode" };
    return { action: this.defaults.bash ?? this.defaults["*"] ?? "ask", by: "default" };
  }

  /** A redirection is a write: outside the scope it is denied, inside it is decided like write_file. */
  private async evaluateWrite(write: ShellWrite, commands: readonly string[]): Promise<PermissionEvaluation> {
    const target = write.target;
    if (target === undefined)
      return {
        action: "ask",
        by: "parse",
        reason: `the redirection target ${write.raw} is only known when it runs`,
      };
    if (HARMLESS_TARGETS.test(target)) return { action: "allow", by: "default" };
    let written: string;
    if (target === "~" || target.startsWith("~/"))
      written = path.join(this.options.home ?? homedir(), target.slice(1));
    else if (target.startsWith("~"))
      return {
        action: "ask",
        by: "parse",
        reason: `the redirection target ${write.raw} names another user's home`,
      };
    else written = target;
    if (!path.isAbsolute(written) && commands.some((c) => CHANGES_DIRECTORY.test(c)))
      return {
        action: "ask",
        by: "parse",
        reason: `the line changes directory, so the redirection to ${write.raw} cannot be placed`,
      };
    const fs = this.options.fs;
    const outside: PermissionEvaluation = {
      action: "deny",
      by: "scope",
      reason: `the redirection ${write.operator} ${write.raw} writes outside the project scope`,
    };
    if (fs === undefined) {
      const normalized = path.normalize(written);
      if (path.isAbsolute(normalized) || normalized === ".." || normalized.startsWith(`..${path.sep}`))
        return outside;
      return this.decide("write_file", [normalized], await this.#guarded(normalized));
    }
    let real: string;
    try {
      real = (await fs.resolve(written, "write")).real;
    } catch {
      return outside;
    }
    const names = new Set([fs.display(path.resolve(fs.cwd, written)), fs.display(real)]);
    return this.decide("write_file", [...names], await this.#guarded(written));
  }

  /**
   * Decides a call, asking the UI when needed. Never throws. A call that
   * would be asked about and that the tool refuses anyway (its `precheck`)
   * is denied `by: "tool"` with the tool's refusal as `reason`, without a
   * question and without an outcome event: it is the tool's error, not a
   * permission decision, so nothing is ever approved and then refused.
   */
  async check(call: Pick<ToolCallInfo, "callId" | "name" | "args" | "precheck">): Promise<PermissionOutcome> {
    const tool = call.name;
    const subject = primaryArgument(tool, call.args);
    const base = { callId: call.callId, tool, subject, mode: this.#mode };
    const done = (outcome: PermissionOutcome) => {
      try {
        this.options.onOutcome?.(outcome);
      } catch {
        // Observers must not change a decision.
      }
      return outcome;
    };
    let evaluated: PermissionEvaluation;
    try {
      evaluated = await this.evaluate(tool, call.args);
    } catch (error) {
      // The parser failed to load or crashed: ask, never allow.
      evaluated = {
        action: "ask",
        by: "parse",
        reason: `the command could not be analysed (${errorMessage(error)})`,
      };
    }
    const ruleField =
      evaluated.rule === undefined
        ? {}
        : {
            rule: evaluated.rule,
            ...(this.rules[evaluated.rule]?.source !== undefined
              ? { source: this.rules[evaluated.rule]!.source }
              : {}),
          };
    const reasonField = evaluated.reason === undefined ? {} : { reason: evaluated.reason };
    // These ask every time: no earlier "always" and no custom command's allowed-tools answers them.
    const asksEveryTime =
      evaluated.by === "sandbox" ||
      evaluated.by === "parse" ||
      evaluated.by === "protected" ||
      tool === EXIT_PLAN_MODE;
    if (evaluated.action !== "ask")
      return done({ ...base, action: evaluated.action, by: evaluated.by, ...ruleField, ...reasonField });
    const refusal = await call.precheck?.().catch(() => undefined);
    if (refusal !== undefined) return { ...base, action: "deny", by: "tool", reason: refusal };
    const granted = this.grants.get(tool);
    if (
      !asksEveryTime &&
      ((granted !== undefined && (granted.has("*") || (subject !== undefined && granted.has(subject)))) ||
        (tool === "bash" && subject !== undefined && (await this.#prefixGranted(subject))))
    ) {
      return done({ ...base, action: "allow", by: "session" });
    }
    if (!asksEveryTime) {
      for (const approved of this.preApproved)
        if (approved(tool)) return done({ ...base, action: "allow", by: "session" });
    }
    const ask = this.options.ask;
    if (ask === undefined)
      return done({
        ...base,
        action: "deny",
        by: "no_ui",
        ...ruleField,
        ...(asksEveryTime ? reasonField : {}),
      });
    const signal = this.options.signal?.() ?? new AbortController().signal;
    let decision: PermissionDecision;
    try {
      // A cancelled run must not wait on a question nobody will answer: abort counts as deny.
      decision =
        (await abortable(
          ask({
            callId: call.callId,
            tool,
            args: call.args,
            subject,
            summary: subject === undefined ? tool : `${tool}: ${subject.split("\n")[0]}`,
            ...(asksEveryTime ? reasonField : {}),
            signal,
          }),
          signal,
        )) ?? "deny";
    } catch {
      decision = "deny";
    }
    if (typeof decision === "object") {
      if (decision.action === "deny")
        return done({ ...base, action: "deny", by: "user", reason: decision.reason });
      if (decision.action === "approve_plan") {
        if (tool !== EXIT_PLAN_MODE) return done({ ...base, action: "deny", by: "user" });
        // The plan hands over: the work goes on in the mode the user chose.
        this.setMode(decision.mode);
        return done({ ...base, action: "allow", by: "user" });
      }
      if (decision.action === "allow")
        return done({ ...base, action: "allow", by: "user", args: decision.args });
      if (tool === "bash")
        for (const rule of typeof decision.rule === "string" ? [decision.rule] : decision.rule)
          if (!this.#prefixGrants.some((g) => g.rule === rule))
            this.#prefixGrants.push({ rule, match: commandMatcher(rule) });
      return done({ ...base, action: "allow", by: "user" });
    }
    if (decision === "allow_always" && tool !== EXIT_PLAN_MODE) {
      // File tools: the tool for the rest of the session; bash: this exact command; web_fetch: this host.
      const key = tool === "bash" || tool === WEB_FETCH_TOOL_NAME ? (subject ?? "*") : "*";
      if (!this.grants.has(tool)) this.grants.set(tool, new Set());
      this.grants.get(tool)!.add(key);
    }
    return done({ ...base, action: decision === "deny" ? "deny" : "allow", by: "user" });
  }

  /** Whether every simple command of a bash line is covered by a prefix the user granted, and it writes nothing. */
  async #prefixGranted(line: string): Promise<boolean> {
    if (this.#prefixGrants.length === 0) return false;
    const analysis = await analyzeShell(line);
    if (analysis.kind !== "parsed" || analysis.writes.length > 0 || analysis.commands.length === 0)
      return false;
    return analysis.commands.every((command) => this.#prefixGrants.some((g) => g.match(command)));
  }

  /**
   * Approves calls of these tools (names or globs) that would be asked
   * about, until the returned function is called. Rules that deny still
   * deny, and so do the sandbox's and the shell parser's asks. Used for a
   * custom command's `allowed-tools` during its turn.
   */
  preApprove(tools: readonly string[]): () => void {
    const added = tools.map((glob) => pathMatcher(glob));
    for (const m of added) this.preApproved.add(m);
    return () => {
      for (const m of added) this.preApproved.delete(m);
    };
  }

  /** The message a denied call returns to the model. */
  static denialMessage(outcome: PermissionOutcome): string {
    const what =
      outcome.subject === undefined ? outcome.tool : `${outcome.tool} (${firstLine(outcome.subject)})`;
    const why = outcome.reason === undefined ? "" : ` (${outcome.reason})`;
    if (outcome.tool === EXIT_PLAN_MODE) return planDenialMessage(outcome);
    switch (outcome.by) {
      case "tool":
        return outcome.reason ?? `${what} was refused by the tool`;
      case "rule":
        return `Permission denied: ${what} is blocked by permission rule #${(outcome.rule ?? 0) + 1}${outcome.source === undefined ? "" : ` from ${outcome.source}`}. Do not retry it; choose another approach or ask the user to change the rule.`;
      case "scope":
        return `Permission denied: ${what}: ${outcome.reason ?? "it writes outside the project scope"}. Write inside the project instead.`;
      case "mode":
        return outcome.mode === "plan"
          ? `Permission denied: ${what} is not available in plan mode, which allows only read-only tools. Finish the plan and present it with exit_plan_mode; once the user approves it, you can carry it out.`
          : `Permission denied: ${what} is not allowed in ${outcome.mode ?? "this"} mode.`;
      case "default":
        return `Permission denied: ${what} is not allowed in this session. Do not retry it; choose another approach.`;
      case "no_ui":
        return `Permission denied: ${what} needs the user's approval${why}, and no one can approve it in this session. Do not retry it; finish what you can without it and tell the user what you would have run.`;
      default:
        if (outcome.by === "user" && outcome.reason !== undefined)
          return `Permission denied: the user declined ${what} and said: ${outcome.reason}`;
        return `Permission denied: the user declined ${what}. Do not retry the same call; ask the user how to proceed or choose another approach.`;
    }
  }

  /** The policy as a worker Hook: a denied call is not run and the model gets the denial message. */
  hook(): Hook {
    return {
      name: "permissions",
      beforeToolCall: async (call: ToolCallInfo): Promise<HookToolAction | undefined> => {
        const outcome = await this.check(call);
        if (outcome.action === "allow")
          return outcome.args === undefined ? undefined : { action: "continue", args: outcome.args };
        return { action: "deny", message: PermissionPolicy.denialMessage(outcome) };
      },
    };
  }
}

/** What the model hears when its plan was not approved: it stays in plan mode. */
function planDenialMessage(outcome: PermissionOutcome): string {
  switch (outcome.by) {
    case "tool":
      return outcome.reason ?? "exit_plan_mode was refused";
    case "no_ui":
      return "The plan cannot be approved in this session: no one can be asked (a non-interactive run). Plan mode stays on and nothing was changed. End your turn with the plan as your answer.";
    default:
      return outcome.reason !== undefined
        ? `The user rejected the plan and said: ${outcome.reason}\nYou are still in plan mode. Revise the plan with this in mind and present it again with exit_plan_mode.`
        : "The user rejected the plan. You are still in plan mode: ask the user what to change, then present a revised plan with exit_plan_mode.";
  }
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
