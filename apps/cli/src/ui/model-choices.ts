/**
 * What `/model` offers: every model the effective catalog (built-in plus
 * config `models`) has for each declared provider, as `provider/model`
 * refs with the window and the list price, the current one first.
 */
import { buildModelCatalog, type Config } from "@yoi/manifest";
import { formatTokens } from "./tool-summary.ts";

export interface ModelChoice {
  ref: string;
  /** One line: the ref, window and price. */
  label: string;
}

export function modelChoices(config: Pick<Config, "providers" | "models">, current: string): ModelChoice[] {
  const catalog = buildModelCatalog(config);
  const seen = new Set<string>();
  const choices: ModelChoice[] = [];
  for (const [name, provider] of Object.entries(config.providers)) {
    for (const model of catalog) {
      if (!model.providers.includes(provider.kind)) continue;
      const ref = `${name}/${model.id}`;
      if (seen.has(ref)) continue;
      seen.add(ref);
      const price = model.pricing ? `$${model.pricing.input}/$${model.pricing.output} per Mtok` : "price ?";
      choices.push({
        ref,
        label: `${ref.padEnd(36)} ${formatTokens(model.contextWindow).padStart(6)}  ${price}`,
      });
    }
  }
  if (!seen.has(current)) choices.unshift({ ref: current, label: `${current.padEnd(36)} (current)` });
  const at = choices.findIndex((c) => c.ref === current);
  if (at > 0) choices.unshift(...choices.splice(at, 1));
  return choices;
}
