/**
 * What the CLI says about a model without prices. The ledger itself
 * (`UsageLedger`) is the pod's: `query()` reports the same figures.
 */
import { parseModelRef } from "@yoi/manifest";

/** Where a model's prices are set, for the note next to a `$?`. */
export function pricingHint(model: string): string {
  const parsed = parseModelRef(model);
  const provider = parsed?.provider ?? "<provider>";
  const id = parsed?.model ?? model;
  return `no prices known for ${model}: set them in ~/.yoi/config.jsonc or .yoi/config.jsonc as "models": { "${id}": { "provider": "${provider}", "pricing": { "input": <USD per million>, "output": <USD per million> } } }`;
}
