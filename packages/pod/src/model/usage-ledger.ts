/**
 * Tokens and dollars of a session by model: every model call's usage,
 * counted for the model that served it (the session's model at the time,
 * or a subagent's own), priced from the effective catalog (the built-in
 * list prices, or a config `models` entry's `pricing`). `/cost`, the
 * `--output json` result, stream-json's result and `query()`'s read it.
 */
import type { Usage } from "@yoi/llm-client";
import { sumUsage } from "@yoi/llm-worker";
import { type Config, costOf, type ModelPricing, resolveModel } from "@yoi/manifest";
import type { PodEvent } from "../events/pod-events.ts";
import { type JsonModelUsage, jsonUsage } from "../events/stream-json.ts";

/** One model's share. */
export interface ModelUsage {
  /** `"<provider>/<model>"`. */
  model: string;
  usage: Usage;
  calls: number;
  /** Dollars, or undefined when the model's prices are unknown. */
  costUsd: number | undefined;
}

export class UsageLedger {
  readonly #rows = new Map<string, { usage: Usage; calls: number }>();
  readonly #config: () => Config;

  /** `config`: the config whose catalog prices the models (read at each look-up: `/model` may change it). */
  constructor(config: () => Config) {
    this.#config = config;
  }

  /** Adds `usage` of one call served by `model` (`"<provider>/<model>"`). */
  add(model: string, usage: Usage): void {
    const row = this.#rows.get(model) ?? { usage: {}, calls: 0 };
    this.#rows.set(model, { usage: sumUsage(row.usage, usage), calls: row.calls + 1 });
  }

  /**
   * Counts a pod event: a `usage` of the session's own worker for
   * `current()` (the model serving it now), a subagent's for its model.
   */
  record(event: PodEvent, current: () => string): void {
    if (event.type === "usage") this.add(current(), event.usage);
    else if (event.type === "subagent" && event.event.type === "usage")
      this.add(event.model, event.event.usage);
  }

  /** Every model so far, in the order first used. */
  rows(): ModelUsage[] {
    return [...this.#rows].map(([model, row]) => ({
      model,
      usage: row.usage,
      calls: row.calls,
      costUsd: costOf(row.usage, this.pricing(model)),
    }));
  }

  /** Dollars of every model; undefined when one of them has no known prices. */
  totalUsd(): number | undefined {
    let total = 0;
    for (const row of this.rows()) {
      if (row.costUsd === undefined) return undefined;
      total += row.costUsd;
    }
    return total;
  }

  /** Models used without known prices. */
  unpriced(): string[] {
    return this.rows()
      .filter((row) => row.costUsd === undefined)
      .map((row) => row.model);
  }

  /** `{ "<provider>/<model>": { input_tokens, ..., calls, cost_usd } }`. */
  json(): Record<string, JsonModelUsage> {
    return Object.fromEntries(
      this.rows().map((row) => [
        row.model,
        { ...jsonUsage(row.usage), calls: row.calls, cost_usd: row.costUsd ?? null },
      ]),
    );
  }

  /** The model's prices, or undefined when neither the catalog nor the config gives them. */
  pricing(model: string): ModelPricing | undefined {
    try {
      return resolveModel(this.#config(), model).info?.pricing;
    } catch {
      return undefined;
    }
  }
}
