import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient, type ProviderKind } from "@yoi/llm-client";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { ConfigSchema } from "@yoi/manifest";
import { afterEach, describe, expect, it } from "vitest";
import type { PodEvent } from "../src/events/pod-events.ts";
import { checkImage, IMAGE_MAX_BYTES, ImageError } from "../src/images/image-file.ts";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";
import { gif, jpeg, png, webp } from "./image-fixtures.ts";

const servers: ScriptedServer[] = [];
const pods: Pod[] = [];
afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.close().catch(() => {});
  for (const s of servers.splice(0)) await s.close();
});

const MODELS: Record<ProviderKind, string> = {
  anthropic: "claude-haiku-4-5",
  "openai-chat": "gpt-4.1",
  "openai-responses": "gpt-4.1",
  gemini: "gemini-2.5-flash",
};

async function podFor(
  provider: ProviderKind,
  files: Record<string, Buffer>,
  config: object = {},
  options: { script?: ScriptStep[]; model?: string } = {},
) {
  const root = await tempDir();
  for (const [name, bytes] of Object.entries(files)) await writeFile(path.join(root, name), bytes);
  const s = await startScriptedServer({
    provider,
    validate: true,
    script: options.script ?? [{ type: "reply", text: "a red square" }],
  });
  servers.push(s);
  const pod = await Pod.create({
    cwd: root,
    dataDir: path.join(root, ".data"),
    fsync: "never",
    config: ConfigSchema.parse(config),
    client: createClient({
      provider,
      model: options.model ?? MODELS[provider],
      apiKey: "k",
      baseURL: s.baseURL,
      retry: { maxAttempts: 1 },
    }),
  });
  pods.push(pod);
  const events: PodEvent[] = [];
  pod.subscribe((e) => events.push(e));
  const alerts = () => events.flatMap((e) => (e.type === "alert" ? [e.alert.message] : []));
  return { s, pod, alerts };
}

const red = png(3, 2);
const b64 = red.toString("base64");

/** Where each provider's request carries an inline PNG. */
const SHAPES: Record<ProviderKind, (body: unknown) => unknown> = {
  anthropic: (body) =>
    (body as { messages: { content: unknown[] }[] }).messages
      .flatMap((m) => m.content)
      .find((p) => (p as { type?: string }).type === "image"),
  "openai-chat": (body) =>
    (body as { messages: { content: unknown }[] }).messages
      .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .find((p) => (p as { type?: string }).type === "image_url"),
  "openai-responses": (body) =>
    (body as { input: { content?: unknown }[] }).input
      .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .find((p) => (p as { type?: string }).type === "input_image"),
  gemini: (body) =>
    (body as { contents: { parts: unknown[] }[] }).contents
      .flatMap((c) => c.parts)
      .find((p) => (p as { inlineData?: unknown }).inlineData !== undefined),
};

const EXPECTED: Record<ProviderKind, unknown> = {
  anthropic: { type: "image", source: { type: "base64", media_type: "image/png", data: b64 } },
  "openai-chat": { type: "image_url", image_url: { url: `data:image/png;base64,${b64}` } },
  "openai-responses": { type: "input_image", image_url: `data:image/png;base64,${b64}` },
  gemini: { inlineData: { mimeType: "image/png", data: b64 } },
};

describe("@pic.png attaches an image for every provider", () => {
  for (const provider of Object.keys(MODELS) as ProviderKind[]) {
    it(provider, async () => {
      const { s, pod, alerts } = await podFor(provider, { "pic.png": red });
      const result = await pod.run("what is in @pic.png ?");
      expect(result.status).toBe("completed");
      expect(s.rejections).toEqual([]);
      expect(alerts()).toEqual([]);
      expect(SHAPES[provider](s.requests[0])).toMatchObject(EXPECTED[provider] as object);
      expect(JSON.stringify(s.requests[0])).toContain("[Image: pic.png] (3×2, image/png, 73 B)");
    });
  }

  it("jpeg, gif and webp too", async () => {
    const { s, pod, alerts } = await podFor("anthropic", {
      "a.jpg": jpeg(),
      "b.gif": gif(),
      "c.webp": webp(),
    });
    await pod.run("compare @a.jpg @b.gif @c.webp");
    expect(alerts()).toEqual([]);
    const sent = JSON.stringify(s.requests[0]);
    for (const type of ["image/jpeg", "image/gif", "image/webp"])
      expect(sent).toContain(`"media_type":"${type}"`);
    expect(s.rejections).toEqual([]);
  });
});

describe("images that are not sent", () => {
  it("a text-only model gets a clear refusal, not a provider 400", async () => {
    const { s, pod, alerts } = await podFor(
      "anthropic",
      { "pic.png": red },
      { models: { "claude-haiku-4-5": { provider: "anthropic", capabilities: { vision: false } } } },
    );
    await pod.run("look at @pic.png");
    expect(alerts()).toEqual([
      "@pic.png was not attached: claude-haiku-4-5 does not accept images (the model catalog marks it text-only); switch to a model that does, or describe the image in words",
    ]);
    // The fact a UI words its own way (the CLI names /model or --model).
    expect(pod.alerts.recentAlerts().find((a) => a.source === "file_ref")?.code).toBe("unsupported");
    expect(JSON.stringify(s.requests[0])).not.toContain(b64);
    expect(s.rejections).toEqual([]);
  });

  it("corrupt, cut-off and mislabelled images are refused with the reason", async () => {
    const { s, pod, alerts } = await podFor("anthropic", {
      "notreally.png": Buffer.from("hello, I am text"),
      "cut.png": red.subarray(0, red.length - 20),
      "photo.gif": jpeg(),
    });
    await pod.run("@notreally.png @cut.png @photo.gif");
    const got = alerts().join("\n");
    expect(got).toContain("@notreally.png was not attached: notreally.png is not a valid PNG image");
    expect(got).toContain("@cut.png was not attached: cut.png is a damaged PNG image (the file is cut off)");
    // The bytes decide the format, so a JPEG named .gif is sent as what it is.
    expect(got).not.toContain("photo.gif");
    expect(JSON.stringify(s.requests[0])).toContain('"media_type":"image/jpeg"');
    expect(s.rejections).toEqual([]);
  });

  it("images over 5 MiB or 8000 px are downscaled in a worker thread, or refused when they cannot be", async () => {
    const noisy = png(1400, 1400, { noise: true });
    expect(noisy.length).toBeGreaterThan(IMAGE_MAX_BYTES);
    const bigWebp = Buffer.concat([webp(), Buffer.alloc(IMAGE_MAX_BYTES)]);
    const { s, pod, alerts } = await podFor("anthropic", {
      "noisy.png": noisy,
      "wide.png": png(9000, 20),
      "big.webp": bigWebp,
    });
    await pod.run("@noisy.png @wide.png @big.webp");
    expect(alerts()).toEqual([
      expect.stringMatching(
        /^@big\.webp was not attached: big\.webp is 5\.0 MiB; images over 5 MiB are not sent \(models refuse them\), and it could not be downscaled \(.+\): shrink or crop it first$/,
      ),
    ]);
    const sent = JSON.stringify(s.requests[0]);
    expect(sent).toMatch(
      /\[Image: noisy\.png\] \(1400×1400, image\/jpeg, [\d.]+ (KiB|MiB); downscaled from 1400×1400, [\d.]+ MiB\)/,
    );
    expect(sent).toMatch(
      /\[Image: wide\.png\] \(2048×5, image\/jpeg, [\d.]+ (B|KiB); downscaled from 9000×20, [\d.]+ (B|KiB)\)/,
    );
    expect(s.rejections).toEqual([]);
  }, 120_000);

  it("checkImage names what is wrong with bytes that are no image at all", async () => {
    await expect(checkImage(Buffer.from("GIF"), "x.bin")).rejects.toThrow(
      /x\.bin is not a PNG, JPEG, GIF or WebP image/,
    );
  });
});

describe("read_file on an image", () => {
  const script: ScriptStep[] = [
    { type: "reply", toolCalls: [{ id: "call_img1", name: "read_file", arguments: { path: "pic.png" } }] },
    { type: "reply", text: "red" },
  ];
  /** Where each provider's second request carries the image inside the tool result. */
  const IN_RESULT: Record<string, (body: unknown) => unknown> = {
    anthropic: (body) =>
      (body as { messages: { content: unknown }[] }).messages
        .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
        .find((p) => (p as { type?: string }).type === "tool_result"),
    "openai-responses": (body) =>
      (body as { input: { type?: string }[] }).input.find((i) => i.type === "function_call_output"),
    gemini: (body) =>
      (body as { contents: { parts: { functionResponse?: unknown }[] }[] }).contents
        .flatMap((c) => c.parts)
        .find((p) => p.functionResponse !== undefined),
  };
  const cases: [ProviderKind, string, unknown][] = [
    [
      "anthropic",
      "claude-haiku-4-5",
      {
        type: "tool_result",
        content: [
          { type: "text", text: "[Image: pic.png] (3×2, image/png, 73 B)" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: b64 } },
        ],
      },
    ],
    [
      "openai-responses",
      "gpt-4.1",
      {
        type: "function_call_output",
        output: [
          { type: "input_text", text: "[Image: pic.png] (3×2, image/png, 73 B)" },
          { type: "input_image", image_url: `data:image/png;base64,${b64}` },
        ],
      },
    ],
    [
      "gemini",
      "gemini-3-pro-preview",
      {
        functionResponse: {
          name: "read_file",
          parts: [{ inlineData: { mimeType: "image/png", data: b64 } }],
        },
      },
    ],
  ];
  for (const [provider, model, expected] of cases) {
    it(`returns the image inside the tool result on ${provider} ${model}`, async () => {
      const { s, pod } = await podFor(provider, { "pic.png": red }, {}, { script, model });
      const result = await pod.run("read pic.png");
      expect(result.status).toBe("completed");
      expect(s.rejections).toEqual([]);
      expect(IN_RESULT[provider]!(s.requests[1])).toMatchObject(expected as object);
      const item = pod.history.find((i) => i.type === "tool_result");
      expect(item).toMatchObject({
        isError: false,
        images: [{ type: "image", mediaType: "image/png", data: b64 }],
      });
    });
  }

  for (const [provider, model] of [
    ["openai-chat", "gpt-4.1"],
    ["gemini", "gemini-2.5-flash"],
  ] as const) {
    it(`says clearly that ${provider} ${model} cannot take it`, async () => {
      const { s, pod } = await podFor(provider, { "pic.png": red }, {}, { script, model });
      await pod.run("read pic.png");
      const item = pod.history.find((i) => i.type === "tool_result");
      expect(item).toMatchObject({ isError: true });
      expect(item?.type === "tool_result" && item.output).toBe(
        `pic.png is an image, and ${provider} ${model} cannot take images in tool results; ask the user to attach it to a message with @<path> instead.`,
      );
      expect(JSON.stringify(s.requests[1])).not.toContain(b64);
      expect(s.rejections).toEqual([]);
    });
  }

  it("a damaged image is a clear tool error", async () => {
    const { pod } = await podFor("anthropic", { "pic.png": red.subarray(0, 30) }, {}, { script });
    await pod.run("read pic.png");
    const item = pod.history.find((i) => i.type === "tool_result");
    expect(item).toMatchObject({ isError: true });
    expect(item?.type === "tool_result" && item.output).toContain(
      "pic.png is a damaged PNG image (the file is cut off)",
    );
  });
});

describe("images handed over with the prompt (PodRunOptions.images)", () => {
  it("are sent after the prompt, each labelled; a text-only model refuses them before anything is logged", async () => {
    const { s, pod } = await podFor("anthropic", {});
    await pod.run("what is this?", { images: [{ data: red, label: "pasted.png" }] });
    const sent = JSON.stringify(s.requests[0]);
    expect(sent).toContain("what is this?");
    expect(sent).toContain("[Image: pasted.png");
    expect(sent).toContain(b64);
    expect(s.rejections).toEqual([]);

    const textOnly = await podFor(
      "anthropic",
      {},
      { models: { "claude-haiku-4-5": { provider: "anthropic", capabilities: { vision: false } } } },
    );
    const refused = await textOnly.pod
      .run("and this?", { images: [{ data: red, label: "x.png" }] })
      .catch((e) => e);
    expect(ImageError.isInstance(refused)).toBe(true);
    expect((refused as Error).message).toMatch(/does not accept images/);
    expect(textOnly.s.requests).toHaveLength(0);
    expect(textOnly.pod.log).toBeUndefined();
    const corrupt = await pod
      .run("and this?", { images: [{ data: Buffer.from("not an image"), label: "y.png" }] })
      .catch((e) => e);
    expect(ImageError.isInstance(corrupt)).toBe(true);
    expect(s.requests).toHaveLength(1);
  });
});
