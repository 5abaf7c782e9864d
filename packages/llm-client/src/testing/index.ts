export {
  closeServer,
  frameLines,
  type ReplayServer,
  type ReplayServerOptions,
  sdkBaseURL,
  startReplayServer,
} from "./replay-server.ts";
export {
  type ScriptedServer,
  type ScriptedServerOptions,
  type ScriptStep,
  type StreamEnd,
  startScriptedServer,
  WIRE_FORMATS,
} from "./scripted-server.ts";
export { anthropicWire } from "./wire-anthropic.ts";
export {
  chunkText,
  type ScriptedToolCall,
  type ScriptedTurnOptions,
  type WireFormat,
} from "./wire-format.ts";
export { geminiWire } from "./wire-gemini.ts";
export { openAIChatWire } from "./wire-openai-chat.ts";
export { openAIResponsesWire } from "./wire-openai-responses.ts";
