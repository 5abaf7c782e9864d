/**
 * The permission flags on top of the loaded (and trust-checked) config:
 * `--allow-tool` / `--deny-tool` add rules (after every file's, sourced
 * `flag:...`), `--permission-mode` sets the starting mode, `--no-sandbox`
 * turns the bash sandbox off. Flags are the user's own words, so they apply
 * whatever the project's trust.
 */
import { PERMISSION_MODES, type PermissionMode, type PermissionRule } from "@yoi/manifest";
import { PermissionModeError, type PodSandbox, parseRuleSpec } from "@yoi/pod";
import type { SessionFlags } from "./args.ts";
import { usageError } from "./cli-error.ts";
import type { CliConfig } from "./session-setup.ts";

export function applyPermissionFlags(cli: CliConfig, flags: SessionFlags): CliConfig {
  const config = structuredClone(cli.config);
  const sources = { ...cli.sources };
  if (flags.permissionMode !== undefined) {
    if (!(PERMISSION_MODES as readonly string[]).includes(flags.permissionMode)) {
      throw usageError(
        `--permission-mode must be one of ${PERMISSION_MODES.join(", ")}; got "${flags.permissionMode}"`,
      );
    }
    config.permissions.mode = flags.permissionMode as PermissionMode;
    sources["permissions.mode"] = "flag:--permission-mode";
  }
  const add = (specs: readonly string[] | undefined, action: "allow" | "deny", flag: string) => {
    for (const spec of specs ?? []) {
      let rule: PermissionRule;
      try {
        rule = parseRuleSpec(spec, action);
      } catch (error) {
        if (PermissionModeError.isInstance(error)) throw usageError(`${flag}: ${error.message}`);
        throw error;
      }
      if (config.permissions.rules.length === 0) delete sources["permissions.rules"];
      sources[`permissions.rules[${config.permissions.rules.length}]`] = `flag:${flag}`;
      config.permissions.rules.push(rule);
    }
  };
  add(flags.allowTools, "allow", "--allow-tool");
  add(flags.denyTools, "deny", "--deny-tool");
  if (flags.noSandbox) {
    config.sandbox = false;
    for (const key of Object.keys(sources))
      if (key === "sandbox" || key.startsWith("sandbox.")) delete sources[key];
    sources.sandbox = "flag:--no-sandbox";
  }
  return {
    ...cli,
    config,
    sources,
    ...(flags.bypassWithoutSandbox ? { allowUnsandboxedBypass: true } : {}),
  };
}

/**
 * What to say, once, when bash has no sandbox on this machine: every command
 * will ask, and the two ways to run it unsandboxed without asking.
 */
export function sandboxNotice(sandbox: Pick<PodSandbox, "status" | "reason">): string | undefined {
  if (sandbox.status !== "unavailable") return undefined;
  return `bash has no sandbox here: ${(sandbox.reason ?? "none was found").replace(/\.$/, "")}. ${SANDBOX_NOTICE_CLI_TAIL}`;
}

/** What follows the reason in the CLI's words (the pod's alert says it for the config alone): see describeAlert. */
export const SANDBOX_NOTICE_CLI_TAIL =
  'Every bash command will ask for approval (print mode refuses them). To run bash unsandboxed without asking, set "sandbox": false in ~/.yoi/config.jsonc or pass --no-sandbox.';

/** The source of each permission rule, in order (for denial messages). */
export function ruleSources(cli: Pick<CliConfig, "config" | "sources">): (string | undefined)[] {
  return cli.config.permissions.rules.map((_, i) => cli.sources[`permissions.rules[${i}]`]);
}
