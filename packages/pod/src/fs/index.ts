export type { FileAccess } from "./file-access.ts";
export { BinaryFileError, PodFsView, type ReadTextOptions, type TextRead } from "./fs-view.ts";
export { KeyedMutex } from "./keyed-mutex.ts";
export { type ReadRecord, ReadTracker } from "./read-tracker.ts";
export { ScopeError, type ScopeErrorCode } from "./scope-error.ts";
export {
  HOME_CREDENTIAL_STORES,
  privatePaths,
  scopeFromConfig,
  yoiPrivatePaths,
} from "./scope-from-config.ts";
export {
  type AccessMode,
  type DirEntry,
  type EntryKind,
  isInside,
  type ResolvedPath,
  ScopedFs,
  type ScopedFsOptions,
  type ScopedReadHandle,
  type ScopedStat,
  type WriteOptions,
} from "./scoped-fs.ts";
export { type Classification, classifyBytes, SNIFF_BYTES } from "./text-sniff.ts";
