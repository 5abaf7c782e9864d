/**
 * The session's spend as an OpenTelemetry counter, `yoi.cost` (US dollars,
 * from the catalog's list prices), through `@opentelemetry/api` only: a
 * no-op until an application registers an SDK. Models without known prices
 * add nothing (a cost of zero would be a lie).
 */
import { type Counter, metrics } from "@opentelemetry/api";
import { genAiProviderName, type Usage } from "@yoi/llm-client";
import { costOf, findModel, type ModelInfo, PROVIDER_KINDS, type ProviderKind } from "@yoi/manifest";

let counter: Counter | undefined;
let counterFrom: unknown;

function costCounter(): Counter {
  const provider = metrics.getMeterProvider();
  if (counter === undefined || counterFrom !== provider) {
    counterFrom = provider;
    counter = provider.getMeter("@yoi/pod").createCounter("yoi.cost", {
      description: "Estimated cost of model calls from list prices",
      unit: "USD",
    });
  }
  return counter;
}

/** Adds the cost of one model call's `usage` by `provider`/`model` (looked up in `catalog`). */
export function recordCost(
  usage: Usage,
  provider: string,
  model: string,
  catalog: readonly ModelInfo[],
  agent: "main" | "subagent",
): void {
  if (!(PROVIDER_KINDS as readonly string[]).includes(provider)) return;
  const dollars = costOf(usage, findModel(provider as ProviderKind, model, catalog)?.pricing);
  if (dollars === undefined || dollars === 0) return;
  costCounter().add(dollars, {
    "gen_ai.provider.name": genAiProviderName(provider),
    "gen_ai.request.model": model,
    "yoi.agent": agent,
  });
}
