/**
 * `yoi permissions`: the permission rules a session here starts with (the
 * config files' and the project's lasting approvals, each with its
 * source); `yoi permissions remove <n>` removes an approval.
 */
import type { Command } from "../args.ts";
import { EXIT } from "../exit-codes.ts";
import { ruleSources } from "../permission-flags.ts";
import { configEntries, formatEntries, removeEntry } from "../permission-list.ts";
import { projectRoot } from "../project-root.ts";
import { loadProjectConfig } from "../session-setup.ts";
import { colorEnabled, createStyle } from "../style.ts";
import { writeLines } from "../text-width.ts";

export async function permissionsCommand(
  command: Extract<Command, { kind: "permissions" }>,
): Promise<number> {
  const style = createStyle(colorEnabled(process.stdout));
  // As a session here would have them: a project's own allow rules count only once it is trusted.
  const cli = await loadProjectConfig(command.flags, { trust: {} });
  const root = await projectRoot(cli.cwd, cli.config.scope.root);
  const sources = ruleSources(cli);
  const rules = cli.config.permissions.rules.map((rule, index) => ({
    ...rule,
    index,
    ...(sources[index] !== undefined ? { source: sources[index] } : {}),
  }));
  const entries = await configEntries(rules, cli.homeDir, root);
  if (command.remove !== undefined) {
    const removed = await removeEntry(entries, command.remove, {
      homeDir: cli.homeDir,
      root,
      list: "yoi permissions",
    });
    writeLines(removed);
    return EXIT.ok;
  }
  writeLines([
    `${style.bold("permissions")} ${style.dim(`for ${root} (mode ${cli.config.permissions.mode})`)}`,
    ...formatEntries(entries, style),
    ...(entries.some((e) => e.kind === "project")
      ? [style.dim("yoi permissions remove <n> removes an approval")]
      : []),
  ]);
  return EXIT.ok;
}
