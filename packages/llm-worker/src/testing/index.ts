export { createMemoryBlobStore, type MemoryBlobStore } from "./memory-blob-store.ts";
export {
  createScriptedClient,
  delayedEvents,
  responseEvents,
  type ScriptedClient,
  type ScriptedClientOptions,
  type ScriptedResponse,
  type ScriptStep,
  type ScriptStepResult,
} from "./scripted-client.ts";
