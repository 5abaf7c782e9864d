/**
 * Records a real provider stream in the fixture format of
 * `fixtures/provider-streams/`: one JSON payload per line, in order, exactly
 * as the official SDK yields it (no normalization), so new fixtures come
 * from the real APIs.
 */
import { randomUUID } from "node:crypto";
import { rename, rm, writeFile } from "node:fs/promises";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import { providerOfKind } from "@yoi/manifest";
import OpenAI from "openai";
import { LlmError } from "../errors.ts";
import type { ProviderKind } from "../item.ts";
import type { ToolSpec } from "../request.ts";

export interface RecordOptions {
  provider: ProviderKind;
  model: string;
  prompt: string;
  /** File to write (replaced atomically). */
  out: string;
  system?: string;
  maxTokens?: number;
  /** OpenAI reasoning effort. */
  effort?: "minimal" | "low" | "medium" | "high";
  /** Anthropic / Gemini thinking budget in tokens. */
  budgetTokens?: number;
  tools?: ToolSpec[];
  /** Default: the provider's usual environment variable. */
  apiKey?: string;
  /** Point the SDK at another server (tests, proxies). */
  baseURL?: string;
  /** Where API keys are looked up. Default `process.env`. */
  env?: Record<string, string | undefined>;
  signal?: AbortSignal;
}

export interface RecordResult {
  path: string;
  lines: number;
}

/**
 * Sends one request and writes every raw stream payload as one JSON line.
 * The key is read from the variable yoi reads for the provider (its row in
 * the provider registry); without one this rejects with an `LlmError` of
 * code `config` that names the variable.
 */
export async function recordStream(options: RecordOptions): Promise<RecordResult> {
  const variable = providerOfKind(options.provider).apiKeyEnv;
  const apiKey = options.apiKey ?? (options.env ?? process.env)[variable];
  if (!apiKey)
    throw new LlmError(
      "config",
      `recording from ${options.provider} needs an API key: set ${variable} (or pass apiKey)`,
      { provider: options.provider, retryable: false },
    );
  const lines: string[] = [];
  for await (const payload of rawStream(options, apiKey)) lines.push(JSON.stringify(payload));
  const tmp = `${options.out}.${randomUUID()}.tmp`;
  try {
    await writeFile(tmp, `${lines.join("\n")}\n`, { flag: "wx" });
    await rename(tmp, options.out);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  return { path: options.out, lines: lines.length };
}

async function* rawStream(options: RecordOptions, apiKey: string): AsyncGenerator<unknown> {
  const { model, prompt, system, tools = [], signal } = options;
  const maxTokens = options.maxTokens ?? 1024;
  const baseURL = options.baseURL;
  switch (options.provider) {
    case "anthropic": {
      const client = new Anthropic({ apiKey, maxRetries: 0, ...(baseURL ? { baseURL } : {}) });
      const stream = await client.messages.create(
        {
          model,
          max_tokens: maxTokens,
          stream: true,
          messages: [{ role: "user", content: prompt }],
          ...(system ? { system } : {}),
          ...(options.budgetTokens
            ? { thinking: { type: "enabled", budget_tokens: options.budgetTokens } }
            : {}),
          ...(tools.length > 0
            ? {
                tools: tools.map((t) => ({
                  name: t.name,
                  description: t.description,
                  input_schema: t.parameters as Anthropic.Tool.InputSchema,
                })),
              }
            : {}),
        },
        signal ? { signal } : {},
      );
      yield* stream;
      return;
    }
    case "openai-chat": {
      const client = new OpenAI({ apiKey, maxRetries: 0, ...(baseURL ? { baseURL } : {}) });
      const stream = await client.chat.completions.create(
        {
          model,
          stream: true,
          stream_options: { include_usage: true },
          max_completion_tokens: maxTokens,
          messages: [
            ...(system ? [{ role: "system" as const, content: system }] : []),
            { role: "user", content: prompt },
          ],
          ...(options.effort ? { reasoning_effort: options.effort } : {}),
          ...(tools.length > 0
            ? {
                tools: tools.map((t) => ({
                  type: "function" as const,
                  function: { name: t.name, description: t.description, parameters: t.parameters },
                })),
              }
            : {}),
        },
        signal ? { signal } : {},
      );
      yield* stream;
      return;
    }
    case "openai-responses": {
      const client = new OpenAI({ apiKey, maxRetries: 0, ...(baseURL ? { baseURL } : {}) });
      const stream = await client.responses.create(
        {
          model,
          stream: true,
          store: false,
          include: ["reasoning.encrypted_content"],
          input: prompt,
          max_output_tokens: maxTokens,
          ...(system ? { instructions: system } : {}),
          ...(options.effort ? { reasoning: { effort: options.effort, summary: "auto" } } : {}),
          ...(tools.length > 0
            ? {
                tools: tools.map((t) => ({
                  type: "function" as const,
                  name: t.name,
                  description: t.description,
                  parameters: t.parameters,
                  strict: false,
                })),
              }
            : {}),
        },
        signal ? { signal } : {},
      );
      yield* stream;
      return;
    }
    case "gemini": {
      const ai = new GoogleGenAI({ apiKey, ...(baseURL ? { httpOptions: { baseUrl: baseURL } } : {}) });
      const stream = await ai.models.generateContentStream({
        model,
        contents: prompt,
        config: {
          maxOutputTokens: maxTokens,
          automaticContinuation: false,
          automaticFunctionCalling: { disable: true },
          ...(system ? { systemInstruction: system } : {}),
          ...(options.budgetTokens
            ? { thinkingConfig: { thinkingBudget: options.budgetTokens, includeThoughts: true } }
            : {}),
          ...(tools.length > 0
            ? {
                tools: [
                  {
                    functionDeclarations: tools.map((t) => ({
                      name: t.name,
                      description: t.description,
                      parametersJsonSchema: t.parameters,
                    })),
                  },
                ],
              }
            : {}),
          ...(signal ? { abortSignal: signal } : {}),
        },
      });
      for await (const chunk of stream) {
        // The SDK adds the HTTP headers to each chunk; they are not part of the wire payload.
        const { sdkHttpResponse: _headers, ...payload } = chunk;
        yield payload;
      }
      return;
    }
  }
}
