/**
 * `@yoi/llm-client/adapter`: what a provider that is not built in needs to
 * plug into the client. Write a {@link ProviderAdapter} (usually a
 * {@link Normalizer} driven by {@link pumpEvents} over the provider SDK's
 * stream, with its errors described as an {@link ErrorTable}), then hand its
 * factory to {@link createClientWithAdapter}: the client adds the retry
 * policy, timeouts, cancellation and the stream contract, exactly as for
 * the built-in providers. test/example-adapter.test.ts is a complete example.
 */
export type { AdapterFactory, ProviderAdapter } from "./adapters/adapter.ts";
export {
  classifyNoResponse,
  classifyWithTable,
  codeForStatus,
  type ErrorTable,
  isContextOverflowMessage,
  type ProviderErrorInfo,
  STATUS_CODES,
} from "./adapters/classify.ts";
export { type Normalizer, pumpEvents } from "./adapters/event-pump.ts";
export {
  abortFailure,
  endAborted,
  errorEvent,
  failStream,
  incompleteStream,
  OpenBlocks,
} from "./adapters/stream-end.ts";
export { createClientWithAdapter } from "./client.ts";
export { retryAfterFromHeaders } from "./retry.ts";
