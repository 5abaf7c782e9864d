export {
  closeServer,
  frameLines,
  type ReplayServer,
  type ReplayServerOptions,
  sdkBaseURL,
  startReplayServer,
} from "./replay-server.ts";
