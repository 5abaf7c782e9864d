export { isScopeError, ScopeError, type ScopeErrorCode } from "./scope-error.ts";
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
