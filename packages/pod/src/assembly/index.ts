/**
 * How a Pod is put together: what a session stands on (session-base.ts:
 * config, scope, stores, sandbox, extensions, agents) and the wiring of its
 * parts (assemble-session.ts). Nothing here is part of the public API; the
 * Pod is.
 */
export {};
