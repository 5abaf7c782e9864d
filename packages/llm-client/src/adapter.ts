/**
 * `@yoi/llm-client/adapter`: what a provider that is not built in needs to
 * plug into the client. Write a {@link ProviderAdapter} whose `open` returns
 * the provider SDK's parsed stream with a {@link Normalizer} that maps each
 * payload to Events (or, for an adapter that makes Events itself,
 * {@link eventStream}), with its errors described as an {@link ErrorTable}), then hand its
 * factory to {@link createClientWithAdapter}: the client adds the retry
 * policy, timeouts, cancellation and the stream contract, exactly as for
 * the built-in providers. The adapter names its provider in
 * `ClientOptions.provider` (any string, e.g. `"ndjson"`; a {@link ProviderName}):
 * errors carry that name and its reasoning items are marked with it, so
 * {@link dropForeignReasoning} keeps only its own. test/example-adapter.test.ts
 * is a complete example.
 */
export {
  type AdapterFactory,
  type AdapterStream,
  eventStream,
  type Normalizer,
  type ProviderAdapter,
} from "./adapters/adapter.ts";
export {
  classifyNoResponse,
  classifyWithTable,
  codeForStatus,
  type ErrorTable,
  isContextOverflowMessage,
  type ProviderErrorInfo,
  STATUS_CODES,
} from "./adapters/classify.ts";
export { dropForeignReasoning, type ForeignReasoningResult } from "./adapters/foreign-reasoning.ts";
export {
  abortFailure,
  endAborted,
  errorEvent,
  failStream,
  incompleteStream,
  OpenBlocks,
} from "./adapters/stream-end.ts";
export { createClientWithAdapter } from "./client.ts";
export type { ProviderKind, ProviderName } from "./item.ts";
export { isProviderKind } from "./model-info.ts";
export { retryAfterFromHeaders } from "./retry.ts";
