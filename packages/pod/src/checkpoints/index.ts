export { type CheckpointInfo, listCheckpoints } from "./checkpoint-list.ts";
export { CheckpointRecorder, type CheckpointRecorderOptions } from "./checkpoint-recorder.ts";
export { type ForkOptions, forkSession } from "./fork.ts";
export {
  type RewindConflict,
  type RewindContext,
  RewindError,
  type RewindOptions,
  type RewindResult,
  type RewindTarget,
  rewind,
} from "./rewind.ts";
