/**
 * Importing @yoi/llm-client loads no provider SDK; the first stream of a
 * client loads its provider's SDK and only that one. Checked in a fresh
 * Node process with a module resolve hook that records SDK modules.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const index = new URL("../src/index.ts", import.meta.url).href;

const script = `
import { registerHooks } from "node:module";
const seen = new Set();
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context);
    const m = /node_modules\\/(openai|@anthropic-ai\\/sdk|@google\\/genai)\\//.exec(result.url);
    if (m) seen.add(m[1]);
    return result;
  },
});
const { createClient } = await import(${JSON.stringify(index)});
const afterImport = [...seen];
const client = createClient({ provider: "anthropic", model: "m", apiKey: "k", baseURL: "http://127.0.0.1:9", retry: { maxAttempts: 1 } });
const afterCreate = [...seen];
const codes = [];
for await (const e of client.stream({ items: [{ type: "message", role: "user", content: [{ type: "text", text: "hi" }] }] })) {
  if (e.type === "error") codes.push(e.code);
}
console.log(JSON.stringify({ afterImport, afterCreate, afterStream: [...seen].sort(), codes }));
`;

it("loads no SDK on import and only the chosen provider's SDK on first stream", () => {
  const out = spawnSync(process.execPath, ["--conditions=@yoi/source", "--input-type=module", "-e", script], {
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(out.stderr).toBe("");
  const result = JSON.parse(out.stdout.trim().split("\n").pop()!);
  expect(result).toEqual({
    afterImport: [],
    afterCreate: [],
    afterStream: ["@anthropic-ai/sdk"],
    codes: ["network"],
  });
});
