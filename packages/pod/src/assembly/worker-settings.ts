/** What the worker is built with from the config, for the session's worker and its subagents alike. */
import type { RequestSettings } from "@yoi/llm-client";
import type { ResponseBounds, Tool } from "@yoi/llm-worker";
import type { Config } from "@yoi/manifest";

/** The default system prompt: the project root and the tools. */
export function defaultSystem(
  root: string,
  tools: readonly Tool[],
  roots: { write: readonly string[]; read: readonly string[] } = { write: [root], read: [root] },
): string {
  // Directories of the scope besides the root (scope.writeRoots / readRoots, the CLI's --add-dir).
  const writable = roots.write.filter((r) => r !== root);
  const readOnly = roots.read.filter((r) => r !== root && !roots.write.includes(r));
  const scope =
    writable.length === 0 && readOnly.length === 0
      ? `Project root: ${root}. Paths are relative to it; nothing outside it can be read or written.`
      : [
          `Project root: ${root}. Paths are relative to it.`,
          ...(writable.length > 0
            ? [`Also readable and writable (by absolute path): ${writable.join(", ")}.`]
            : []),
          ...(readOnly.length > 0
            ? [`Also readable, not writable (by absolute path): ${readOnly.join(", ")}.`]
            : []),
          ...(roots.write.includes(root) ? [] : ["The project root itself is not writable."]),
          "Nothing outside these can be read or written.",
        ].join(" ");
  return [
    "You are yoi, a coding agent working in a user's project.",
    scope,
    `Tools: ${tools.map((t) => t.name).join(", ")}.`,
    "A system message (or `<system-reminder>` text) starting with `[File: <path>]` holds a file the user attached with @<path> or one re-attached after a compaction; its body may be truncated (read_file reads the rest).",
    "A user message starting with `[Image: <path>]` holds an image the user attached.",
    "Read a file before editing it. Keep changes minimal and explain what you did.",
  ].join("\n");
}

export function toolOutputLimits(config: Config) {
  return {
    maxBytes: config.toolOutput.maxBytes,
    inlineThresholdBytes: config.toolOutput.inlineThresholdBytes,
    summaryMaxBytes: config.toolOutput.summaryMaxBytes,
    summaryHeadLines: config.toolOutput.headLines,
    summaryTailLines: config.toolOutput.tailLines,
  };
}

/** What one model response may make the worker do (`worker.*` limits), for the session and its subagents. */
export function workerBounds(config: Config): ResponseBounds {
  return {
    maxToolCallsPerResponse: config.worker.maxToolCallsPerResponse,
    toolConcurrency: config.worker.toolConcurrency,
    maxResponseBytes: config.worker.maxResponseBytes,
    maxToolArgumentBytes: config.worker.maxToolArgumentBytes,
  };
}

export function settingsFrom(config: Config): RequestSettings {
  const w = config.worker;
  const settings: RequestSettings = { maxTokens: w.maxTokens };
  if (w.temperature !== undefined) settings.temperature = w.temperature;
  if (w.topP !== undefined) settings.topP = w.topP;
  const r = w.reasoning;
  if (r !== undefined) {
    const reasoning: NonNullable<RequestSettings["reasoning"]> = {};
    if (r.effort !== undefined && r.effort !== "none") reasoning.effort = r.effort;
    if (r.budgetTokens !== undefined) reasoning.budgetTokens = r.budgetTokens;
    if (Object.keys(reasoning).length > 0) settings.reasoning = reasoning;
  }
  return settings;
}
