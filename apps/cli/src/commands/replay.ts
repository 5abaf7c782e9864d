import { readFile } from "node:fs/promises";
import { createClient, userMessage } from "@yoi/llm-client";
import { startReplayServer } from "@yoi/llm-client/testing";
import { errorMessage } from "@yoi/manifest/errors";
import type { Command } from "../args.ts";
import { usageError } from "../cli-error.ts";
import { EXIT } from "../exit-codes.ts";
import { jsonLine } from "../terminal-text.ts";

/**
 * `yoi debug replay --provider <p> <file>`: serves a recorded stream (one
 * JSON payload per line, the fixture format) on 127.0.0.1 with the
 * provider's framing, reads it through the real SDK and llm-client, and
 * prints every normalized event as one JSON line. Exit 1 when the stream
 * ends failed.
 */
export async function replayCommand(command: Extract<Command, { kind: "replay" }>): Promise<number> {
  let text: string;
  try {
    text = await readFile(command.file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw usageError(
      code === "ENOENT"
        ? `${command.file}: no such file`
        : `${command.file}: cannot be read (${code ?? errorMessage(error)})`,
    );
  }
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  if (lines.length === 0) throw usageError(`${command.file}: empty; expected one JSON payload per line`);
  const bad = lines.findIndex((l) => !isJson(l));
  if (bad !== -1) {
    throw usageError(`${command.file}:${bad + 1}: not JSON; expected one recorded JSON payload per line`);
  }
  const server = await startReplayServer({ provider: command.provider, lines });
  let failed = false;
  try {
    const client = createClient({
      provider: command.provider,
      model: "replay",
      apiKey: "replay",
      baseURL: server.baseURL,
      retry: { maxAttempts: 1 },
    });
    for await (const event of client.stream({ items: [userMessage("replay")] })) {
      if (event.type === "status" && event.status === "failed") failed = true;
      process.stdout.write(`${jsonLine(event)}\n`);
    }
  } finally {
    await server.close();
  }
  return failed ? EXIT.error : EXIT.ok;
}

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}
