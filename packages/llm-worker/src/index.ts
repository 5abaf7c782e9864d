export { type BlobId, type BlobStore, BlobStoreError, type BlobStoreErrorCode, type Content, isBlobId } from "./blob-store.ts";
export type {
  ContextCheckpoint,
  ContextPolicy,
  ContextState,
  HistoryReplacement,
} from "./context-policy.ts";
