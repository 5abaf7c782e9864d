export { checkBlobId } from "./blob-content.ts";
export {
  type BlobInfo,
  DEFAULT_GC_GRACE_MS,
  type GcOptions,
  type GcResult,
  type ManagedBlobStore,
} from "./blob-gc.ts";
export { collectBlobRefs, sessionBlobRefs } from "./blob-refs.ts";
export { FileSessionAccess } from "./file-session-access.ts";
export { FileSessionStore } from "./file-session-store.ts";
export { type CleanupResult, FsBlobStore, type FsBlobStoreOptions } from "./fs-blob-store.ts";
export { itemProblem } from "./item-problem.ts";
export { MemoryBlobStore, type MemoryBlobStoreOptions } from "./memory-blob-store.ts";
export { checkSessionId, SessionLogError, type SessionLogErrorCode } from "./session-error.ts";
export { type FsyncPolicy, SessionLog, type SyncedBefore } from "./session-log.ts";
export {
  type AlertRecord,
  type CancelRecord,
  type CheckpointRecord,
  type ConfigChangeRecord,
  type ErrorRecord,
  type FileChangeRecord,
  type FileState,
  type HistoryReplacedRecord,
  type InputSegment,
  type ItemReason,
  type ItemRecord,
  type RewindRecord,
  recordProblem,
  SESSION_LOG_VERSION,
  type SessionRecord,
  type SessionRecordInput,
  type SessionRecordType,
  type SessionStartFields,
  type SessionStartRecord,
  type SubagentRecord,
  type TitleRecord,
  type TurnEndRecord,
  type UsageRecord,
  type UserInputRecord,
} from "./session-records.ts";
export { replayHistory, type SessionMeta, SessionReplay, titleFromInput } from "./session-replay.ts";
export { type ScanResult, type SessionWarning, scanSessionFile } from "./session-scan.ts";
export {
  type CreateSessionOptions,
  createSession,
  findSessionId,
  type LoadedSession,
  latestSession,
  listSessions,
  loadSession,
  type OpenedSession,
  type OpenSessionOptions,
  openSession,
  type ResumeSessionOptions,
  resumeSession,
  type SessionSummary,
  sessionPath,
  sessionsDir,
} from "./session-store.ts";
export type {
  NewSessionOptions,
  SessionAccess,
  SessionAccessStore,
  SessionStore,
  SessionWriter,
  StoreOpenedSession,
} from "./session-store-port.ts";
export {
  type RecordWorkerOptions,
  recordWorker,
  type SessionWrite,
  WorkerEventRecords,
  type WorkerEventSource,
  type WorkerRecorder,
} from "./worker-recorder.ts";
