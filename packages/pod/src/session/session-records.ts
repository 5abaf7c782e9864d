/** The shapes of the pod's own records: what session_start keeps of the config, and the user_input record. */
import type { Config } from "@yoi/manifest";
import type { Segment } from "../input/segments.ts";

/** Longest text a `user_input` record keeps (the full prompt is in the item record that follows). */
const USER_INPUT_PREVIEW_CHARS = 200;

/** The `user_input` record's text (a preview) and segments (only the `@path` refs). */
export function inputRecord(text: string, segments: readonly Segment[]): [string, Segment[] | undefined] {
  const refs = segments.filter((s) => s.type === "file_ref");
  const preview =
    text.length > USER_INPUT_PREVIEW_CHARS ? `${text.slice(0, USER_INPUT_PREVIEW_CHARS)}…` : text;
  return [preview, refs.length > 0 ? refs : undefined];
}

/** The config for the session_start record, without anything that could hold a secret (headers). */
export function configSnapshot(config: Config): Record<string, unknown> {
  const providers: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(config.providers)) {
    providers[name] = {
      kind: p.kind,
      ...(p.baseURL ? { baseURL: p.baseURL } : {}),
      ...(p.apiKeyEnv ? { apiKeyEnv: p.apiKeyEnv } : {}),
    };
  }
  const mcpServers: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(config.mcpServers ?? {})) {
    const { env: _env, headers: _headers, ...rest } = entry as Record<string, unknown>;
    mcpServers[name] = rest;
  }
  return { ...config, providers, mcpServers } as Record<string, unknown>;
}
