/**
 * The tools' own checks run before the permission question: an edit the
 * tool would refuse (a file not read in this session, one changed on disk
 * since it was read, a path outside the scope) is refused with the tool's
 * error and nobody is asked, so nothing is ever "allowed" and then refused.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient, type ToolResultItem } from "@yoi/llm-client";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { ConfigSchema } from "@yoi/manifest";
import { afterEach, describe, expect, it } from "vitest";
import type { PodEvent } from "../src/events/pod-events.ts";
import type { PermissionRequest } from "../src/permissions/index.ts";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

const servers: ScriptedServer[] = [];
const pods: Pod[] = [];
afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.close().catch(() => {});
  for (const server of servers.splice(0)) await server.close();
});

const edit = (id: string, file: string, from: string, to: string) => ({
  id,
  name: "edit_file",
  arguments: { path: file, old_string: from, new_string: to },
});

describe("checks before asking", () => {
  it("an unread, a changed and an out-of-scope write are refused without a question; a fresh one is asked", async () => {
    const base = await tempDir();
    const root = path.join(base, "project");
    await mkdir(root, { recursive: true });
    await writeFile(path.join(root, "a.txt"), "alpha\n");
    await writeFile(path.join(root, "b.txt"), "beta\n");

    const s = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        // First run: edits of files never read, and a write outside the scope, in one batch.
        {
          type: "reply",
          toolCalls: [
            edit("toolu_unread_edit", "a.txt", "alpha", "ALPHA"),
            { id: "toolu_unread_write", name: "write_file", arguments: { path: "b.txt", content: "B\n" } },
            { id: "toolu_outside", name: "write_file", arguments: { path: "../outside.txt", content: "x" } },
          ],
        },
        { type: "reply", toolCalls: [{ id: "toolu_read", name: "read_file", arguments: { path: "a.txt" } }] },
        // Read and unchanged: this one is asked (and allowed).
        { type: "reply", toolCalls: [edit("toolu_fresh_edit", "a.txt", "alpha", "ALPHA")] },
        { type: "reply", text: "Done." },
        // Second run, after a.txt changed on disk behind the session's back.
        { type: "reply", toolCalls: [edit("toolu_stale_edit", "a.txt", "ALPHA", "omega")] },
        { type: "reply", text: "It changed; I will read it again." },
      ],
    });
    servers.push(s);

    const questions: PermissionRequest[] = [];
    const events: PodEvent[] = [];
    const pod = await Pod.create({
      config: ConfigSchema.parse({ sandbox: false }),
      cwd: root,
      dataDir: path.join(base, "data"),
      client: createClient({
        provider: "anthropic",
        model: "claude-haiku-4-5",
        apiKey: "test-key",
        baseURL: s.baseURL,
        retry: { maxAttempts: 1 },
      }),
      fsync: "never",
      ask: async (request) => {
        questions.push(request);
        return "allow";
      },
    });
    pods.push(pod);
    pod.subscribe((event) => events.push(event));
    const results = () =>
      new Map(
        pod.history
          .filter((i): i is ToolResultItem => i.type === "tool_result")
          .map((r) => [r.callId, r] as const),
      );

    await pod.run("uppercase alpha in a.txt");
    let byId = results();
    expect(byId.get("toolu_unread_edit")).toMatchObject({
      isError: true,
      output:
        "a.txt exists but has not been read in this session; read_file it first so you do not overwrite content you have not seen",
    });
    expect(byId.get("toolu_unread_write")).toMatchObject({
      isError: true,
      output: expect.stringContaining("b.txt exists but has not been read in this session"),
    });
    expect(byId.get("toolu_outside")).toMatchObject({
      isError: true,
      output: expect.stringContaining("outside"),
    });
    expect(byId.get("toolu_fresh_edit")).toMatchObject({ isError: false });
    // Only the fresh edit was asked about, and it was the only permission decision.
    expect(questions.map((q) => q.callId)).toEqual(["toolu_fresh_edit"]);
    expect(events.filter((e) => e.type === "permission_request").map((e) => e.request.callId)).toEqual([
      "toolu_fresh_edit",
    ]);
    // The refused calls were no permission decision at all (the read was allowed by default, unasked).
    expect(events.flatMap((e) => (e.type === "permission_outcome" ? [e.outcome.callId] : []))).toEqual([
      "toolu_read",
      "toolu_fresh_edit",
    ]);
    expect(await readFile(path.join(root, "b.txt"), "utf8")).toBe("beta\n");
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("ALPHA\n");

    // Another process changes the file: the session's copy is stale, and the edit is refused unasked.
    await writeFile(path.join(root, "a.txt"), "ALPHA and more\n");
    const asked = events.filter((e) => e.type === "permission_request").length;
    await pod.run("now make it omega");
    byId = results();
    expect(byId.get("toolu_stale_edit")).toMatchObject({
      isError: true,
      output: "a.txt changed on disk since you last read it; read_file it again before changing it",
    });
    expect(events.filter((e) => e.type === "permission_request")).toHaveLength(asked);
    expect(questions).toHaveLength(1);
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("ALPHA and more\n");
    expect(s.rejections).toEqual([]);
  });
});
