/**
 * The permissions in force, as `yoi permissions` and `/permissions` show
 * them: one numbered line each (action, rule, where it comes from), and
 * `remove <n>` for those yoi keeps itself (an "always for this project"
 * approval, an "always ... this session" answer). A rule from a config
 * file or a flag is the user's own text: removing it is editing that.
 */
import type { PermissionPolicy, PermissionRuleInfo, SessionGrant } from "@yoi/pod";
import { formatRuleSpec } from "@yoi/pod";
import { usageError } from "./cli-error.ts";
import {
  APPROVALS_SOURCE,
  type ProjectApproval,
  readApprovals,
  removeApproval,
} from "./project-approvals.ts";
import type { Style } from "./style.ts";
import { sanitizeLine } from "./terminal-text.ts";

/** One line of the list. */
export type PermissionEntry =
  | { kind: "rule"; rule: PermissionRuleInfo }
  | { kind: "project"; approval: ProjectApproval; rule?: number }
  | { kind: "session"; grant: SessionGrant };

/**
 * The entries of a session's policy: its rules (config files, flags; the
 * project's approvals) in order, then this session's grants.
 */
export async function sessionEntries(
  policy: PermissionPolicy,
  homeDir: string,
  root: string,
): Promise<PermissionEntry[]> {
  const approvals = await readApprovals(homeDir, root);
  const entries: PermissionEntry[] = [];
  for (const rule of policy.listRules()) {
    if (rule.source !== APPROVALS_SOURCE) {
      entries.push({ kind: "rule", rule });
      continue;
    }
    const index = approvals.findIndex((a) => a.tool === rule.tool && a.match === rule.match);
    // An approval removed by another yoi since this session started: no longer listed.
    if (index >= 0) entries.push({ kind: "project", approval: approvals[index]!, rule: rule.index });
  }
  for (const grant of policy.sessionGrants()) entries.push({ kind: "session", grant });
  return entries;
}

/** The entries without a session: the config's rules with their sources, then the project's approvals. */
export async function configEntries(
  rules: readonly PermissionRuleInfo[],
  homeDir: string,
  root: string,
): Promise<PermissionEntry[]> {
  const approvals = await readApprovals(homeDir, root);
  return [
    ...rules.map((rule): PermissionEntry => ({ kind: "rule", rule })),
    ...approvals.map((approval): PermissionEntry => ({ kind: "project", approval })),
  ];
}

/** One line per entry, numbered from 1; a line saying there are none when the list is empty. */
export function formatEntries(entries: readonly PermissionEntry[], style: Style): string[] {
  if (entries.length === 0)
    return [style.dim("no permission rules or approvals: tools ask as their defaults say")];
  const width = String(entries.length).length;
  return entries.map((entry, i) => {
    const n = String(i + 1).padStart(width);
    const { action, spec, source } = describe(entry);
    const tint = action === "deny" ? style.red : action === "ask" ? style.yellow : style.green;
    return `${n}  ${tint(action.padEnd(5))} ${sanitizeLine(spec)}  ${style.dim(sanitizeLine(source))}`;
  });
}

function describe(entry: PermissionEntry): { action: string; spec: string; source: string } {
  switch (entry.kind) {
    case "rule":
      return {
        action: entry.rule.action,
        spec: formatRuleSpec(entry.rule),
        source: entry.rule.source ?? "config",
      };
    case "project":
      return {
        action: "allow",
        spec: formatRuleSpec(entry.approval),
        source: `${APPROVALS_SOURCE}, ${entry.approval.added.slice(0, 10)}`,
      };
    case "session":
      return {
        action: "allow",
        spec: formatRuleSpec({
          tool: entry.grant.tool,
          ...(entry.grant.match ? { match: entry.grant.match } : {}),
        }),
        source: "this session",
      };
  }
}

/**
 * Parses `remove <n>` against `entries` and removes that entry: an approval
 * from the file (and from `policy` when given), a session grant from
 * `policy`. Returns what was removed, for a line on screen. Throws a usage
 * CliError for a bad number or an entry yoi does not keep.
 */
export async function removeEntry(
  entries: readonly PermissionEntry[],
  arg: string,
  where: { homeDir: string; root: string; policy?: PermissionPolicy; list: string },
): Promise<string> {
  const n = Number(arg);
  if (!/^\d+$/.test(arg.trim()) || n < 1 || n > entries.length) {
    throw usageError(
      entries.length === 0
        ? "there is nothing to remove"
        : `remove takes a number from 1 to ${entries.length} (see ${where.list}); got "${arg}"`,
    );
  }
  const entry = entries[n - 1]!;
  const { spec } = describe(entry);
  switch (entry.kind) {
    case "rule":
      throw usageError(
        `#${n} (${spec}) comes from ${entry.rule.source ?? "the config"}; edit it there (yoi removes only the approvals it keeps)`,
      );
    case "project":
      await removeApproval(where.homeDir, where.root, entry.approval);
      if (entry.rule !== undefined) where.policy?.removeRule(entry.rule);
      return `removed ${spec} (always in this project)`;
    case "session":
      where.policy?.revokeSessionGrant(entry.grant);
      return `removed ${spec} (this session)`;
  }
}
