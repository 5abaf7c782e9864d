/**
 * `yoi rewind`: the shell's `/rewind`. Puts the files a session's tools
 * changed, and its conversation, back to before a turn (default: the last
 * session of this directory, before its last turn). Files changed outside
 * yoi since are only overwritten with `--force`.
 */
import * as path from "node:path";
import { listCheckpoints, RewindError, rewind, ScopedFs } from "@yoi/pod";
import {
  FsBlobStore,
  listSessions,
  loadSession,
  openSession,
  SessionLogError,
} from "@yoi/worker-persistence";
import type { Command } from "../args.ts";
import { CliError, usageError } from "../cli-error.ts";
import { EXIT } from "../exit-codes.ts";
import { projectRoot } from "../project-root.ts";
import { loadCliConfig } from "../session-setup.ts";
import { resolveSessionArg } from "../sessions/resume-target.ts";
import { checkpointLines } from "../sessions/slash-rewind.ts";
import { colorEnabled, createStyle } from "../style.ts";
import { sanitizeLine } from "../terminal-text.ts";
import { writeLines } from "../text-width.ts";

export async function rewindCommand(command: Extract<Command, { kind: "rewind" }>): Promise<number> {
  const cli = await loadCliConfig(command.flags);
  const here = await projectRoot(cli.cwd, cli.config.scope.root);
  let id: string;
  if (command.session !== undefined) {
    id = await resolveSessionArg(cli.dataDir, command.session);
  } else {
    const last = (await listSessions({ dir: cli.dataDir })).find(
      (s) => s.cwd === here && !s.failedBeforeOutput,
    );
    if (last === undefined)
      throw usageError(`no session in ${here} to rewind (yoi sessions --all lists every session)`);
    id = last.id;
  }
  if (command.list) {
    const points = listCheckpoints((await loadSession({ dir: cli.dataDir, id })).records);
    const style = createStyle(colorEnabled(process.stdout));
    writeLines(
      points.length === 0
        ? `session ${id} has no turns to rewind`
        : [...checkpointLines(points, style), "(yoi rewind --turn N goes back to before turn N)"],
    );
    return EXIT.ok;
  }
  let opened: Awaited<ReturnType<typeof openSession>>;
  try {
    opened = await openSession({ dir: cli.dataDir, id });
  } catch (error) {
    if (SessionLogError.isInstance(error) && error.code === "locked") {
      throw new CliError(
        `session ${id} is open in another yoi; use /rewind there, or leave it first`,
        EXIT.error,
      );
    }
    throw error;
  }
  const log = opened.log;
  try {
    const root = opened.meta.cwd ?? here;
    const scope = cli.config.scope;
    const fs = await ScopedFs.create({
      writeRoots: scope.writeRoots ? scope.writeRoots.map((d) => path.resolve(root, d)) : [root],
      readRoots: (scope.readRoots ?? []).map((d) => path.resolve(root, d)),
      cwd: root,
    });
    const { records } = await loadSession({ dir: cli.dataDir, id });
    let result: Awaited<ReturnType<typeof rewind>>;
    try {
      result = await rewind(
        {
          fs,
          blobStore: new FsBlobStore({ dir: cli.dataDir }),
          records,
          append: (record) => log.append(record),
          replaceHistory: async (history) => {
            await log.historyReplaced({ history, reason: "external", detail: { cause: "rewind" } });
          },
        },
        {
          target: command.turn !== undefined ? { kind: "turn", turn: command.turn } : { kind: "last_turn" },
          files: command.files,
          conversation: command.conversation,
          force: command.force,
        },
      );
    } catch (error) {
      if (RewindError.isInstance(error) && error.code === "conflict") {
        throw new CliError(
          `${error.message}; nothing was changed (add --force to overwrite them, or --conversation to rewind only the conversation)`,
          EXIT.error,
        );
      }
      if (RewindError.isInstance(error)) throw usageError(error.message);
      throw error;
    }
    const out = process.stdout;
    out.write(`rewound session ${id} to before turn ${result.checkpoint.turn}\n`);
    // File names are whatever the files are called: shown, never acted on by the terminal.
    for (const file of result.restored) out.write(`  restored ${sanitizeLine(fs.display(file))}\n`);
    for (const file of result.forced)
      out.write(`  overwrote ${sanitizeLine(fs.display(file))} (it had changed outside yoi)\n`);
    if (command.files && result.restored.length === 0) out.write("  no files to put back\n");
    if (result.history) out.write(`  conversation: ${result.history.length} items kept\n`);
    for (const failure of result.failed) {
      process.stderr.write(
        `yoi: could not restore ${sanitizeLine(fs.display(failure.path))}: ${sanitizeLine(failure.reason)}\n`,
      );
    }
    out.write(`undo this rewind with /rewind in yoi --resume ${id.slice(0, 13)}\n`);
    return result.failed.length > 0 ? EXIT.error : EXIT.ok;
  } finally {
    await log.close();
  }
}
