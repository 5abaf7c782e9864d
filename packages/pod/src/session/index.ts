/**
 * The session log as the pod writes it (session-log.ts: the queue, the lazy
 * creation of a new session's log, the failure path) and the shapes of the
 * pod's own records. Nothing here is part of the public API.
 */
export {};
