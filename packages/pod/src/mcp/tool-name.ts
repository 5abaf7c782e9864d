/**
 * Names of MCP tools and prompts as the model and the user see them:
 * `mcp__<server>__<name>`. Providers accept `^[a-zA-Z0-9_-]{1,64}$`, so
 * other characters become `_` and a long name is cut and given a short hash
 * of the original, keeping names distinct.
 */
import { createHash } from "node:crypto";

export const MCP_PREFIX = "mcp__";
const MAX = 64;

/** `mcp__<server>__<name>`, made valid for every provider. */
export function mcpName(server: string, name: string): string {
  const full = `${MCP_PREFIX}${server}__${name.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  if (full.length <= MAX) return full;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 8);
  return `${full.slice(0, MAX - 9)}_${hash}`;
}
