/**
 * The one-line rule syntax of `--allow-tool` / `--deny-tool`: a tool name or
 * glob, optionally with its argument glob in parentheses: `edit_file`,
 * `mcp__*`, `bash(git status)`, `bash(npm run *)`, `write_file(src/**)`.
 */
import type { PermissionAction, PermissionRule } from "@yoi/manifest";
import { PermissionModeError } from "./mode-error.ts";

const RULE = /^([A-Za-z0-9_*?.\-[\]]+)(?:\((.*)\))?$/s;

/** Parses one rule; throws {@link PermissionModeError} (`invalid_rule`) saying what is wrong. */
export function parseRuleSpec(spec: string, action: PermissionAction): PermissionRule {
  const text = spec.trim();
  const m = RULE.exec(text);
  if (m === null) {
    throw new PermissionModeError(
      "invalid_rule",
      `"${spec}" is not a permission rule; write a tool name or glob, optionally with an argument in parentheses: edit_file, mcp__*, bash(git status *)`,
    );
  }
  const match = m[2]?.trim();
  if (m[2] !== undefined && match === "") {
    throw new PermissionModeError(
      "invalid_rule",
      `"${spec}" has empty parentheses; leave them out to match every call of ${m[1]}, or put a pattern inside: ${m[1]}(*)`,
    );
  }
  return { tool: m[1]!, ...(match !== undefined ? { match } : {}), action };
}

/** A rule in the same one-line syntax, for display. */
export function formatRuleSpec(rule: Pick<PermissionRule, "tool" | "match">): string {
  return rule.match === undefined ? rule.tool : `${rule.tool}(${rule.match})`;
}
