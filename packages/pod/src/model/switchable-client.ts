/**
 * An LlmClient that forwards to a client that can be replaced. The Worker
 * and the context policy hold one client for their lifetime; a model switch
 * (`Pod.setModel`) swaps what this one forwards to, so history, tools and
 * the session stay as they are and the next model call goes to the new model.
 */
import type { Event, LlmClient, Request, StreamOptions } from "@yoi/llm-client";

export class SwitchableClient implements LlmClient {
  #target: LlmClient;

  constructor(target: LlmClient) {
    this.#target = target;
  }

  get provider(): LlmClient["provider"] {
    return this.#target.provider;
  }

  get model(): string {
    return this.#target.model;
  }

  /** The client calls go to now. */
  get target(): LlmClient {
    return this.#target;
  }

  /** Sends later calls to `next`; a stream already started stays on its client. */
  switchTo(next: LlmClient): void {
    this.#target = next;
  }

  stream(request: Request, options?: StreamOptions): AsyncIterable<Event> {
    return this.#target.stream(request, options);
  }

  prepare(): Promise<void> {
    return this.#target.prepare?.() ?? Promise.resolve();
  }
}
