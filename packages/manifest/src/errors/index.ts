/**
 * `@yoi/manifest/errors`: the error base of every yoi package,
 * `errorMessage`, and `closest` (the "did you mean" of a typo). A subpath
 * of its own so that code which only recognises or words errors (an
 * argument parser, a worker thread, an embedder's error handler) loads
 * these small files and not the config schema.
 */
export { closest } from "./closest.ts";
export { errorMessage, rootCauseMessage } from "./error-message.ts";
export { YoiError, type YoiErrorOptions } from "./yoi-error.ts";
