export { checkBlobId } from "./blob-content.ts";
export {
  type BlobInfo,
  DEFAULT_GC_GRACE_MS,
  type GcOptions,
  type GcResult,
  type ManagedBlobStore,
} from "./blob-gc.ts";
export { type CleanupResult, FsBlobStore, type FsBlobStoreOptions } from "./fs-blob-store.ts";
export { MemoryBlobStore, type MemoryBlobStoreOptions } from "./memory-blob-store.ts";
