/**
 * "Always for this project" answers of the permission question: allow
 * rules kept in the user's own `~/.yoi/approvals.json`, keyed by the
 * project's real path (a repository cannot write there, and a symlinked
 * checkout is the same project). Each session of the project starts with
 * them as rules (source {@link APPROVALS_SOURCE}); `yoi permissions` and
 * `/permissions` list them and remove them. Writes are atomic (a temp file
 * renamed over the old one) with mode 0600; a file that cannot be read as
 * approvals is an error naming it, and is never overwritten.
 */
import { realpathSync } from "node:fs";
import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { type PermissionRule, writePrivateFile } from "@yoi/manifest";
import type { PermissionPolicy, PermissionRequest } from "@yoi/pod";
import { CliError } from "./cli-error.ts";
import { EXIT } from "./exit-codes.ts";

/** One lasting approval: an allow rule for a tool (and its argument glob), and when it was given. */
export interface ProjectApproval {
  tool: string;
  match?: string;
  /** ISO date of the answer. */
  added: string;
}

/** The source rules from approvals carry (`yoi permissions`, denial messages). */
export const APPROVALS_SOURCE = "~/.yoi/approvals.json (this project)";

interface ApprovalsFile {
  version: 1;
  projects: Record<string, ProjectApproval[]>;
}

export function approvalsFile(homeDir: string): string {
  return path.join(homeDir, ".yoi", "approvals.json");
}

/** The key of a project: its real path (the path as given when it cannot be resolved). */
export function projectKey(root: string): string {
  try {
    return realpathSync(root);
  } catch {
    return path.resolve(root);
  }
}

/** The approvals of the project at `root`, oldest first. Throws a CliError naming a damaged file. */
export async function readApprovals(homeDir: string, root: string): Promise<ProjectApproval[]> {
  return (await readFileOf(homeDir)).projects[projectKey(root)] ?? [];
}

/** Adds an approval for the project (once: the same rule again changes nothing). */
export async function addApproval(
  homeDir: string,
  root: string,
  rule: Pick<PermissionRule, "tool" | "match">,
): Promise<ProjectApproval> {
  const all = await readFileOf(homeDir);
  const key = projectKey(root);
  const list = all.projects[key] ?? [];
  const same = list.find((a) => a.tool === rule.tool && a.match === rule.match);
  if (same !== undefined) return same;
  const approval: ProjectApproval = {
    tool: rule.tool,
    ...(rule.match !== undefined ? { match: rule.match } : {}),
    added: new Date().toISOString(),
  };
  all.projects[key] = [...list, approval];
  await writeFileOf(homeDir, all);
  return approval;
}

/**
 * Removes the project's approval of `rule` (matched by tool and argument
 * glob, so a list read a while ago still names the right one). Throws a
 * usage CliError when there is none (another yoi removed it).
 */
export async function removeApproval(
  homeDir: string,
  root: string,
  rule: Pick<PermissionRule, "tool" | "match">,
): Promise<void> {
  const all = await readFileOf(homeDir);
  const key = projectKey(root);
  const list = all.projects[key] ?? [];
  const rest = list.filter((a) => !(a.tool === rule.tool && a.match === rule.match));
  if (rest.length === list.length) throw new CliError("that approval is no longer there", EXIT.usage);
  if (rest.length === 0) delete all.projects[key];
  else all.projects[key] = rest;
  await writeFileOf(homeDir, all);
}

/** The rule an approval puts in force. */
export function approvalRule(approval: ProjectApproval): PermissionRule {
  return {
    tool: approval.tool,
    ...(approval.match !== undefined ? { match: approval.match } : {}),
    action: "allow",
  };
}

async function readFileOf(homeDir: string): Promise<ApprovalsFile> {
  const file = approvalsFile(homeDir);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { version: 1, projects: {} };
    throw damaged(file, (error as NodeJS.ErrnoException).code ?? "it cannot be read");
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw damaged(file, "it is not valid JSON");
  }
  const problem = shapeProblem(parsed);
  if (problem !== undefined) throw damaged(file, problem);
  return parsed as ApprovalsFile;
}

function shapeProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "it is not a JSON object";
  const projects = (value as { projects?: unknown }).projects;
  if (typeof projects !== "object" || projects === null || Array.isArray(projects))
    return 'it has no "projects" object';
  for (const [key, list] of Object.entries(projects)) {
    if (!Array.isArray(list)) return `"projects"."${key}" is not a list`;
    for (const entry of list) {
      const e = entry as Partial<ProjectApproval> | null;
      if (
        typeof e !== "object" ||
        e === null ||
        typeof e.tool !== "string" ||
        (e.match !== undefined && typeof e.match !== "string")
      )
        return `an entry of "projects"."${key}" is not { "tool": "...", "match": "..." }`;
    }
  }
  return undefined;
}

function damaged(file: string, why: string): CliError {
  return new CliError(
    `${file} cannot be read as approvals (${why}); fix it or delete it (lasting approvals are kept there)`,
    EXIT.usage,
  );
}

async function writeFileOf(homeDir: string, all: ApprovalsFile): Promise<void> {
  await writePrivateFile(approvalsFile(homeDir), `${JSON.stringify(all, null, 2)}\n`);
}

/**
 * The rules "always for this project" would store: bash, the prefix rule
 * of each simple command (or the exact line when it holds no glob
 * character); web_fetch, the host; another tool, every call of it. None for
 * a question that asks every time (no sandbox, a line the parser cannot
 * read, a protected path): no rule would answer it.
 */
export function projectRulesFor(
  request: PermissionRequest,
  prefixes: readonly string[] | undefined,
): PermissionRule[] | undefined {
  if (request.reason !== undefined) return undefined;
  const subject = request.subject?.trim();
  if (request.tool === "bash") {
    if (prefixes !== undefined) return prefixes.map((match) => ({ tool: "bash", match, action: "allow" }));
    if (subject === undefined || subject === "" || /[*?\n]/.test(subject)) return undefined;
    return [{ tool: "bash", match: subject, action: "allow" }];
  }
  if (request.tool === "web_fetch")
    return subject === undefined ? undefined : [{ tool: "web_fetch", match: subject, action: "allow" }];
  return [{ tool: request.tool, action: "allow" }];
}

/** `"git log *"`, `"git log *" and "head *"`. */
export function quoteRules(rules: readonly string[]): string {
  const quoted = rules.map((r) => `"${r}"`);
  return quoted.length <= 1 ? (quoted[0] ?? "") : `${quoted.slice(0, -1).join(", ")} and ${quoted.at(-1)}`;
}

/**
 * "Always for this project": the rules go to the approvals file for every
 * later session of the project and into this session's `policy` now.
 * Throws when the file cannot be written (the caller still allows the call once).
 */
export async function approveForProject(
  homeDir: string,
  root: string,
  policy: PermissionPolicy,
  rules: readonly PermissionRule[],
): Promise<void> {
  for (const rule of rules) {
    await addApproval(homeDir, root, rule);
    const known = policy
      .listRules()
      .some((r) => r.source === APPROVALS_SOURCE && r.tool === rule.tool && r.match === rule.match);
    if (!known) policy.addRule(rule, APPROVALS_SOURCE);
  }
}
