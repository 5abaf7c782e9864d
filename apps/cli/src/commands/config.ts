import { formatConfig } from "@yoi/manifest";
import type { Command } from "../args.ts";
import { EXIT } from "../exit-codes.ts";
import { loadCliConfig } from "../session-setup.ts";
import { sanitize } from "../terminal-text.ts";

/** `yoi config`: the effective configuration, one value a line, with its source. */
export async function configCommand(command: Extract<Command, { kind: "config" }>): Promise<number> {
  const cli = await loadCliConfig(command.flags);
  const files = cli.loaded.files.length > 0 ? cli.loaded.files.join(", ") : "none (defaults only)";
  // Values come from config files, which a cloned repository writes: shown, never acted on by the terminal.
  process.stdout.write(sanitize(`# config files read: ${files}\n`));
  // On a terminal each line fits its width; into a pipe the values go as long as before.
  const width = process.stdout.isTTY ? process.stdout.columns : undefined;
  process.stdout.write(
    sanitize(`${formatConfig({ config: cli.config, sources: cli.sources }, { home: cli.homeDir, width })}\n`),
  );
  return EXIT.ok;
}
