/** Short, one-line renderings of tool calls and sizes for the UI. */

/** A call's arguments, parsed (undefined when the model sent invalid JSON). */
export function parseArgs(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}

/** The arguments of a call in a few words: the path, pattern or command, not the JSON. */
export function shortArgs(name: string, args: unknown): string {
  if (args === null || typeof args !== "object") return "";
  const a = args as Record<string, unknown>;
  const str = (key: string) => (typeof a[key] === "string" ? (a[key] as string) : undefined);
  const firstLine = (text: string) => {
    const [line = "", ...rest] = text.split("\n");
    return rest.length > 0 ? `${line} …` : line;
  };
  switch (name) {
    case "read_file": {
      const range =
        typeof a.offset === "number" || typeof a.limit === "number"
          ? `:${a.offset ?? 1}${typeof a.limit === "number" ? `+${a.limit}` : ""}`
          : "";
      return `${str("path") ?? ""}${range}`;
    }
    case "list_dir":
      return str("path") ?? ".";
    case "write_file":
    case "edit_file":
      return str("path") ?? "";
    case "glob":
      return `${str("pattern") ?? ""}${str("path") ? ` in ${str("path")}` : ""}`;
    case "grep":
      return `/${str("pattern") ?? ""}/${str("path") ? ` in ${str("path")}` : ""}${str("glob") ? ` (${str("glob")})` : ""}`;
    case "bash":
      return firstLine(str("command") ?? "");
    case "task":
      return `${str("description") ?? ""}${str("agent") ? ` (${str("agent")})` : ""}`;
    case "todo_write":
      return Array.isArray(a.todos) ? `${a.todos.length} item${a.todos.length === 1 ? "" : "s"}` : "";
    case "web_fetch":
      return str("url") ?? "";
    case "inspect":
      return `${str("blob_id") ?? ""}${str("selector") ? ` ${str("selector")}` : ""}`;
    default: {
      const strings = Object.values(a).filter((v): v is string => typeof v === "string");
      if (strings.length === 1 && strings[0] !== undefined) return firstLine(strings[0]);
      const json = JSON.stringify(a);
      return json === "{}" ? "" : json;
    }
  }
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * The size facts of a finished tool call: the bytes that entered the
 * context, and separately the whole output when it was larger (stored in a
 * blob, or cut): `506 B in context · 106.9 KB stored → blob <id>`.
 */
export function toolSize(contextBytes: number, fullBytes: number, blobId: string | undefined): string {
  const shown = formatBytes(contextBytes);
  if (blobId === undefined) {
    return fullBytes > contextBytes ? `${shown} in context of ${formatBytes(fullBytes)}` : shown;
  }
  return `${shown} in context · ${formatBytes(fullBytes)} stored → blob ${blobId}`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  return `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`;
}

export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}
