export { type Alert, AlertBus, type AlertLevel, type AlertListener, oneLine } from "./alerts.ts";
export type {
  AlertPodEvent,
  AutoReadPodEvent,
  PermissionOutcomePodEvent,
  PermissionRequestPodEvent,
  PodEvent,
  PodEventListener,
  SubagentPodEvent,
  TodosPodEvent,
} from "./pod-events.ts";
export {
  answerSources,
  contextTokens,
  type JsonModelUsage,
  type JsonSource,
  type JsonUsage,
  jsonUsage,
  lastText,
  type StreamJsonEvent,
  toStreamJson,
} from "./stream-json.ts";
export { createStreamTextRedaction } from "./stream-text-redaction.ts";
