/**
 * The event a module emits on `process` right before it changes a V8 flag
 * while yoi runs (`v8.setFlagsFromString`). V8 stamps code caches with a
 * hash of its flags, so a cache made after the change is refused by the
 * next start: the chunk loader (chunk-loader.ts) writes its code pack when
 * it hears this, while the caches it takes are still good ones.
 */
export const BEFORE_V8_FLAGS_EVENT = "yoi:before-v8-flags";

/** Tells the chunk loader (when there is one: not under `node --conditions` tests) to write its pack now. */
export function beforeV8FlagsChange(): void {
  (process.emit as (event: string) => boolean)(BEFORE_V8_FLAGS_EVENT);
}
