import { createInspectTool, ToolError } from "@yoi/llm-worker";
import { FsBlobStore } from "@yoi/worker-persistence";
import type { Command } from "../args.ts";
import { CliError } from "../cli-error.ts";
import { EXIT } from "../exit-codes.ts";
import { loadCliConfig } from "../session-setup.ts";
import { sanitize } from "../terminal-text.ts";

/** Most bytes printed at once; a larger selection is cut with a note to narrow it. */
const MAX_OUTPUT_BYTES = 256 * 1024;

/**
 * `yoi inspect <blob-id> [selector]`: the worker's own `inspect` tool over
 * the blob store of the config, so the CLI and the model read blobs alike.
 */
export async function inspectCommand(command: Extract<Command, { kind: "inspect" }>): Promise<number> {
  const cli = await loadCliConfig(command.flags);
  // A blob is a tool's output: printed with its control characters made visible.
  const text = sanitize(await inspectBlob(cli.dataDir, command.blobId, command.selector));
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  return EXIT.ok;
}

export async function inspectBlob(dataDir: string, blobId: string, selector?: string): Promise<string> {
  const tool = createInspectTool(new FsBlobStore({ dir: dataDir }), { maxOutputBytes: MAX_OUTPUT_BYTES });
  try {
    const out = await tool.execute(
      { blob_id: blobId, ...(selector !== undefined ? { selector } : {}) },
      {
        callId: "cli",
        batchId: "cli",
        callIndex: 0,
        batchSize: 1,
        turnIndex: 0,
        signal: new AbortController().signal,
      },
    );
    return typeof out === "string" ? out : JSON.stringify(out);
  } catch (error) {
    if (ToolError.isInstance(error)) throw new CliError(`${error.message} (blobs in ${dataDir})`, EXIT.usage);
    throw error;
  }
}
