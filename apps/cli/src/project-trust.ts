/**
 * The CLI's answer to whether a project's own settings that widen yoi's
 * reach may apply (which settings those are, and how they are left out
 * before the config is merged, is the config's business: @yoi/manifest).
 * YOI_TRUST_PROJECT=1 says yes for the process; otherwise an earlier yes
 * for these very settings, remembered per project directory and content
 * hash in the user's own ~/.yoi; otherwise interactive `yoi` asks (a yes is
 * remembered), and print mode, `yoi mcp` and `yoi serve` leave them out.
 * Remembering stays here, not in the manifest: it is the user's answer to
 * this program, and another host (`yoi serve` with its own flag, an
 * embedding application) decides in its own way.
 */
import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { type ProjectSettings, writePrivateFile } from "@yoi/manifest";
import { sanitize } from "./terminal-text.ts";

/** How a command takes part in the decision. */
export interface TrustPrompt {
  /** The command's own yes (`yoi serve --trust-project DIR`), for this process only: nothing is remembered. */
  given?: (settings: ProjectSettings) => boolean;
  /** Asks the user (interactive `yoi`); a yes is remembered. Without it, an unremembered project is not trusted. */
  ask?: (settings: ProjectSettings) => Promise<boolean>;
  /** Told when the settings are left out, before the config is merged (so before any error it may then have). */
  onIgnored?: (settings: ProjectSettings) => void;
}

/**
 * What a command that cannot ask says when a project's own settings were
 * left out; `where` is how it names the project's directory to its user.
 */
export function untrustedNote(settings: ProjectSettings, where: "here" | "there" = "here"): string {
  return `ignoring what ${settings.files.join(" and ")} set${settings.files.length > 1 ? "" : "s"} for providers, scope, session, permissions, MCP servers, language servers or hooks (${settings.lines.join("; ")}): this project is not trusted yet; run yoi ${where} once to trust it, or set YOI_TRUST_PROJECT=1`;
}

/**
 * How a command that cannot ask takes part (print mode, `yoi mcp`, `yoi lsp`):
 * only YOI_TRUST_PROJECT=1 or a remembered yes trusts the project, and what
 * was left out is said on stderr.
 */
export const WITHOUT_ASKING: TrustPrompt = {
  onIgnored: (settings) => process.stderr.write(`yoi: ${sanitize(untrustedNote(settings))}\n`),
};

/** The trust decision for `loadConfig({ trust })`. */
export function projectTrust(
  homeDir: string,
  env: Readonly<Record<string, string | undefined>>,
  prompt: TrustPrompt = {},
): (settings: ProjectSettings) => Promise<boolean> {
  return async (settings) => {
    if (env.YOI_TRUST_PROJECT === "1") return true;
    if (prompt.given?.(settings)) return true;
    if ((await readTrust(homeDir))[settings.root] === settings.hash) return true;
    if (prompt.ask !== undefined && (await prompt.ask(settings))) {
      await rememberTrust(homeDir, settings);
      return true;
    }
    prompt.onIgnored?.(settings);
    return false;
  };
}

/** In the user's own `~/.yoi`: never a directory the project's config could choose. */
function trustFile(homeDir: string): string {
  return path.join(homeDir, ".yoi", "trusted-projects.json");
}

async function readTrust(homeDir: string): Promise<Record<string, string>> {
  try {
    const parsed = JSON.parse(await readFile(trustFile(homeDir), "utf8")) as unknown;
    return parsed && typeof parsed === "object" ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}

async function rememberTrust(homeDir: string, settings: ProjectSettings): Promise<void> {
  const all = await readTrust(homeDir);
  all[settings.root] = settings.hash;
  await writePrivateFile(trustFile(homeDir), `${JSON.stringify(all, null, 2)}\n`);
}
