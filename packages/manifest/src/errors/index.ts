/**
 * `@yoi/manifest/errors`: the error base of every yoi package and
 * `errorMessage`. A subpath of its own so that code which only recognises
 * or words errors (an argument parser, a worker thread, an embedder's error
 * handler) loads these two small files and not the config schema.
 */
export { errorMessage, rootCauseMessage } from "./error-message.ts";
export { YoiError, type YoiErrorOptions } from "./yoi-error.ts";
