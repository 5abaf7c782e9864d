import type { WorkerEvent } from "@yoi/llm-worker";
import type { PermissionOutcome, PermissionRequest } from "../permissions/policy.ts";
import type { SubagentEventInfo } from "../tools/task.ts";
import type { TodoItem } from "../tools/todo-list.ts";
import type { Alert } from "./alerts.ts";

export interface AlertPodEvent {
  type: "alert";
  alert: Alert;
}

/** The pod is asking the UI callback about a tool call (informational; the callback answers). */
export interface PermissionRequestPodEvent {
  type: "permission_request";
  request: Omit<PermissionRequest, "signal">;
}

/** How a tool call's permission was decided. */
export interface PermissionOutcomePodEvent {
  type: "permission_outcome";
  outcome: PermissionOutcome;
}

/** Files re-attached after a compaction. */
export interface AutoReadPodEvent {
  type: "auto_read";
  paths: string[];
}

/** The todo list changed (`todo_write`); `todos` is the whole new list. */
export interface TodosPodEvent {
  type: "todos";
  todos: TodoItem[];
}

/** An event of a subagent (`task` call `callId`), nested: `event` is the child worker's. */
export interface SubagentPodEvent extends SubagentEventInfo {
  type: "subagent";
}

/** What a pod tells its UI: every worker event, plus alerts, permission traffic and auto-read. */
export type PodEvent =
  | WorkerEvent
  | AlertPodEvent
  | PermissionRequestPodEvent
  | PermissionOutcomePodEvent
  | AutoReadPodEvent
  | TodosPodEvent
  | SubagentPodEvent;

export type PodEventListener = (event: PodEvent) => void;
