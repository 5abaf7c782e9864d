/**
 * The building blocks of the config schemas (config-schema.ts and the
 * sections in their own files).
 *
 * Every schema carries its own "expected ..." phrase as the zod error
 * message, so a problem reads `worker.maxTurns: expected a positive integer,
 * found "ten"` without a second table of descriptions to keep in sync.
 */
import * as z from "zod";

/** zod's `error` parameter that makes `text` the message of every problem the schema finds. */
export const expecting = (text: string) => ({ error: () => text });

/**
 * A zod schema is immutable (`.optional()`, `.default()` and `.meta()` make
 * new ones), so every field of the same kind and message shares one: the
 * config has some 60 such fields, and each distinct schema is objects that
 * every process builds when it loads this package.
 */
const built = new Map<string, z.ZodType>();
function shared<T extends z.ZodType>(key: string, build: () => T): T {
  let schema = built.get(key) as T | undefined;
  if (schema === undefined) {
    schema = build();
    built.set(key, schema);
  }
  return schema;
}

/** An integer greater than 0. */
export function positiveInt(what = "a positive integer") {
  return shared(`positiveInt ${what}`, () => {
    const e = expecting(what);
    return z.int(e).positive(e);
  });
}

/** An integer of 0 or more. */
export function nonNegativeInt(what = "a non-negative integer") {
  return shared(`nonNegativeInt ${what}`, () => {
    const e = expecting(what);
    return z.int(e).nonnegative(e);
  });
}

/** An integer of `min` or more. */
export function intAtLeast(min: number, what = `an integer of at least ${min}`) {
  return shared(`intAtLeast ${min} ${what}`, () => {
    const e = expecting(what);
    return z.int(e).min(min, e);
  });
}

/** A number with `gt`/`gte` and `lte` bounds, all problems reported as `what`. */
export function boundedNumber(what: string, bounds: { gt?: number; gte?: number; lte: number }) {
  const e = expecting(what);
  const number = z.number(e);
  return (bounds.gt !== undefined ? number.gt(bounds.gt, e) : number.gte(bounds.gte ?? 0, e)).lte(
    bounds.lte,
    e,
  );
}

export const bool = () => shared("bool", () => z.boolean(expecting("true or false")));
export const text = (what = "a string") => shared(`text ${what}`, () => z.string(expecting(what)));
/** A string of at least one character. */
export const nonEmpty = (what: string) =>
  shared(`nonEmpty ${what}`, () => {
    const e = expecting(what);
    return z.string(e).min(1, e);
  });

/** A string with something other than white space in it. */
export const nonBlank = (what: string) =>
  shared(`nonBlank ${what}`, () => {
    const e = expecting(what);
    return z.string(e).regex(/\S/, e);
  });
