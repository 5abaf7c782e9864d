/**
 * The model a session talks to: one client for the session's lifetime
 * (a SwitchableClient, so the worker and the context policy keep theirs
 * across `/model`), the clients of other model refs (subagents, the
 * compaction model), and what the catalog says the current model can take.
 */
import { acceptsToolResultImages, createModelClient, type LlmClient } from "@yoi/llm-client";
import {
  buildModelCatalog,
  type Config,
  type Credentials,
  findModel,
  type ModelInfo,
  PROVIDER_KINDS,
  type ProviderKind,
  webSearchServerTool,
} from "@yoi/manifest";
import { SwitchableClient } from "./switchable-client.ts";

/** What `Pod.setModel` switches to: a model ref of the config (`provider/model`), or a ready client. */
export type ModelTarget = string | LlmClient;

export interface SessionModelOptions {
  config: Config;
  /** The client to start on. Default: a client for `config.model`. */
  client?: LlmClient;
  /** Environment for API keys. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Saved keys by variable name, used when the variable is not set (`yoi setup`'s). */
  credentials?: Credentials;
}

export class SessionModel {
  /** The session's client: the same object across switches. */
  readonly client: SwitchableClient;
  /** The catalog with the config's `models` entries. */
  readonly catalog: readonly ModelInfo[];
  readonly #options: SessionModelOptions;

  constructor(options: SessionModelOptions) {
    this.#options = options;
    this.catalog = buildModelCatalog(options.config);
    this.client = new SwitchableClient(options.client ?? this.#create(undefined));
  }

  /** A client for a model ref of the config (a subagent's model, the compaction model). */
  clientFor(ref: string): LlmClient {
    return this.#create(ref);
  }

  /**
   * Sends later calls to `target` (a ref resolved through the config, or a
   * client); returns the `provider/model` before and after. Throws for a
   * ref the config cannot resolve, and nothing changes then.
   */
  switchTo(target: ModelTarget): { previous: string; next: string } {
    const previous = `${this.client.provider}/${this.client.model}`;
    const next = typeof target === "string" ? this.#create(target) : target;
    this.client.switchTo(next);
    return { previous, next: `${next.provider}/${next.model}` };
  }

  /** The catalog's entry of the current model; undefined for a model or an outside provider it does not know. */
  catalogEntry(): ModelInfo | undefined {
    const provider = this.client.provider;
    if (!(PROVIDER_KINDS as readonly string[]).includes(provider)) return undefined;
    return findModel(provider as ProviderKind, this.client.model, this.catalog);
  }

  /**
   * The server tool that lets `client`'s model (default: the session's)
   * search the web at its provider, or undefined where it cannot (the
   * catalog decides, see `webSearchServerTool`). Read per request, so
   * `/model` switches follow.
   */
  webSearchTool(client: LlmClient = this.client): Record<string, unknown> | undefined {
    const provider = client.provider;
    if (!(PROVIDER_KINDS as readonly string[]).includes(provider)) return undefined;
    const info = findModel(provider as ProviderKind, client.model, this.catalog);
    return webSearchServerTool(provider as ProviderKind, info?.capabilities);
  }

  /** Why the current model cannot take an attached image, when the catalog marks it text-only. */
  imageRefusal(): string | undefined {
    const info = this.catalogEntry();
    if (info === undefined || info.capabilities.vision) return undefined;
    return `${this.client.model} does not accept images (the model catalog marks it text-only); switch to a model that does, or describe the image in words`;
  }

  /** Why read_file cannot hand the current model an image, if it cannot. */
  toolImageRefusal(): string | undefined {
    const { provider, model } = this.client;
    const info = this.catalogEntry();
    if (info !== undefined && !info.capabilities.vision)
      return `${model} does not accept images (the model catalog marks it text-only)`;
    if (!acceptsToolResultImages(provider, model))
      return `${provider} ${model} cannot take images in tool results; ask the user to attach it to a message with @<path> instead`;
    return undefined;
  }

  /** The one client factory (@yoi/llm-client), for `ref` or the config's model. */
  #create(ref: string | undefined): LlmClient {
    const { config, env, credentials } = this.#options;
    return createModelClient(config, {
      ...(ref !== undefined ? { ref } : {}),
      ...(env ? { env } : {}),
      ...(credentials ? { credentials } : {}),
    });
  }
}
