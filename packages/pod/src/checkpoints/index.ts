export { type CheckpointInfo, historyBefore, listCheckpoints } from "./checkpoint-list.ts";
export { CheckpointRecorder, type CheckpointRecorderOptions, FILE_TOOLS } from "./checkpoint-recorder.ts";
export { CHECKPOINT_MAX_FILE_BYTES, loadBytes, observeFile, sha256, storeBytes } from "./file-state.ts";
export { type ForkOptions, forkSession } from "./fork.ts";
export {
  findCheckpoint,
  type RewindConflict,
  type RewindContext,
  RewindError,
  type RewindOptions,
  type RewindResult,
  type RewindTarget,
  rewind,
} from "./rewind.ts";
export type { ScanLimits } from "./scope-scan.ts";
