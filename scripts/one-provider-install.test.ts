/**
 * A one-provider install as a user makes it: `@yoi/llm-worker` and one SDK
 * from packed tarballs in a project of its own, installed offline from this
 * workspace's pnpm store. With the SDK, a request reaches a scripted server
 * on 127.0.0.1; without it, the run fails before any request with the error
 * that names the package and the install command.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packPackage, readPackageJson, root, run } from "./pack-kit.ts";

const PACKED = ["manifest", "llm-client", "timeline", "llm-worker"];
let work: string;
const tarballs = new Map<string, string>();

beforeAll(() => {
  const built = run(
    "pnpm",
    ["exec", "turbo", "run", "build", "--filter=@yoi/llm-worker...", "--output-logs=errors-only"],
    root,
  );
  if (!built.ok) throw new Error(`build failed:\n${built.out}`);
  work = mkdtempSync(join(tmpdir(), "yoi-one-provider-"));
  mkdirSync(join(work, "packs"));
  for (const name of PACKED) {
    const dir = join(root, "packages", name);
    const packed = packPackage(dir, join(work, "packs"));
    if (!packed.ok) throw new Error(`pnpm pack ${name} failed:\n${packed.out}`);
    tarballs.set(readPackageJson(dir).name, packed.path);
  }
}, 300_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** What the probe prints: the run's outcome and what the server saw. */
interface ProbeOutput {
  status: string;
  text: string;
  requests: number;
  error?: { code: string; message: string };
}

const PROBE = `
import { createClient } from "@yoi/llm-client";
import { startScriptedServer } from "@yoi/llm-client/testing";
import { Worker } from "@yoi/llm-worker";

const server = await startScriptedServer({
  provider: "openai-chat",
  script: [{ type: "reply", text: "hello from the scripted server" }],
});
try {
  const client = createClient({ provider: "openai-chat", model: "probe-model", apiKey: "sk-probe", baseURL: server.baseURL });
  const worker = new Worker({ client });
  let text = "";
  worker.subscribe((e) => { if (e.type === "text_delta") text += e.text; });
  const result = await worker.run("hi");
  console.log(JSON.stringify({
    status: result.status,
    text,
    requests: server.requests.length,
    ...(result.error ? { error: { code: result.error.code, message: result.error.message } } : {}),
  }));
} finally {
  await server.close();
}
`;

/** A project depending on `@yoi/llm-client` and `@yoi/llm-worker` (and `extra`) from the tarballs, installed offline. */
function installProject(name: string, extra: Record<string, string>): string {
  const dir = join(work, name);
  mkdirSync(dir);
  const file = (pkg: string) => `file:${tarballs.get(pkg)}`;
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({
      name: `probe-${name}`,
      private: true,
      type: "module",
      // What the README's smallest loop imports: a client and a worker.
      dependencies: {
        "@yoi/llm-client": file("@yoi/llm-client"),
        "@yoi/llm-worker": file("@yoi/llm-worker"),
        ...extra,
      },
    }),
  );
  // The other @yoi packages come from their tarballs too, not from a registry that has none.
  const overrides = PACKED.filter((p) => p !== "llm-worker")
    .map((p) => `  "@yoi/${p}": "${file(`@yoi/${p}`)}"`)
    .join("\n");
  writeFileSync(
    join(dir, "pnpm-workspace.yaml"),
    `overrides:\n${overrides}\nallowBuilds:\n  protobufjs: false\n`,
  );
  writeFileSync(join(dir, "probe.mjs"), PROBE);
  const installed = run("pnpm", ["install", "--offline"], dir);
  if (!installed.ok) throw new Error(`pnpm install --offline failed in ${dir}:\n${installed.out}`);
  return dir;
}

function probe(dir: string): ProbeOutput {
  const ran = run(process.execPath, ["probe.mjs"], dir);
  if (!ran.ok) throw new Error(`probe failed:\n${ran.out}`);
  return JSON.parse(ran.out.trim().split("\n").at(-1)!) as ProbeOutput;
}

/** Packages in the project's virtual store, and their bytes on disk. */
function footprint(dir: string): { packages: string[]; bytes: number } {
  const packages = readdirSync(join(dir, "node_modules", ".pnpm")).filter(
    (entry) => entry !== "node_modules" && entry !== "lock.yaml",
  );
  const du = run("du", ["-sb", join(dir, "node_modules")], dir);
  return { packages, bytes: Number(du.out.split(/\s/)[0]) };
}

const sdkRange = (name: string): string => {
  const range = readPackageJson(join(root, "packages", "llm-client")).peerDependencies?.[name];
  if (range === undefined) throw new Error(`${name} is not a peer dependency of @yoi/llm-client`);
  return range;
};

describe("a one-provider install from packed tarballs", () => {
  it("with its SDK installed, a request reaches the server and nothing of the other providers is installed", () => {
    const dir = installProject("with-openai", { openai: sdkRange("openai") });
    const output = probe(dir);
    expect(output).toMatchObject({
      status: "completed",
      text: "hello from the scripted server",
      requests: 1,
    });
    const { packages, bytes } = footprint(dir);
    expect(packages.some((p) => p.startsWith("openai@"))).toBe(true);
    expect(
      packages.filter((p) => p.startsWith("@anthropic-ai+sdk@") || p.startsWith("@google+genai@")),
    ).toEqual([]);
    console.log(
      `one-provider install (@yoi/llm-worker + openai): ${packages.length} packages, ${bytes} bytes`,
    );
  });

  it("without it, the run fails before any request, naming the package and the install command", () => {
    const dir = installProject("without-sdk", {});
    const output = probe(dir);
    expect(output.status).toBe("failed");
    expect(output.requests).toBe(0);
    // The client's LlmError (a YoiError) of code missing_sdk, as the worker reports it.
    expect(output.error?.code).toBe("missing_sdk");
    expect(output.error?.message).toMatch(
      /the package openai, an optional peer dependency of @yoi\/llm-client.*npm install openai/,
    );
    const { packages, bytes } = footprint(dir);
    expect(packages.some((p) => p.startsWith("openai@"))).toBe(false);
    console.log(`install without an SDK (@yoi/llm-worker only): ${packages.length} packages, ${bytes} bytes`);
  });
});
