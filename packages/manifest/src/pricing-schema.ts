/**
 * The `pricing` of a config `models` entry: list prices in US dollars per
 * million tokens, overriding the built-in catalog's (or giving prices to a
 * model it does not know). Costs shown by the CLI come from these.
 */
import * as z from "zod";

const EXPECTED = "a price in US dollars per million tokens (a number >= 0)";
const price = () =>
  z
    .number({ error: () => EXPECTED })
    .min(0, { error: () => EXPECTED })
    .finite();

export const ModelPricingSchema = z
  .strictObject(
    {
      input: price().meta({ description: "Input tokens not read from a cache, USD per million." }),
      output: price().meta({ description: "Output tokens, USD per million." }),
      cacheRead: price()
        .optional()
        .meta({ description: "Cached input tokens read, USD per million. Default: input." }),
      cacheWrite: price().optional().meta({
        description: "Input tokens written to the prompt cache, USD per million. Default: input.",
      }),
    },
    { error: () => 'an object like { "input": 3, "output": 15 } (USD per million tokens)' },
  )
  .meta({ description: "List prices in US dollars per million tokens; overrides the catalog's." });
