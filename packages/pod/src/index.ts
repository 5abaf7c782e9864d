/**
 * @yoi/pod: a hosted yoi session on a scoped filesystem. The Pod is in
 * `pod.ts`; everything else is grouped by concern, one folder each, and a
 * folder's `index.ts` names what the package exports of it (code inside the
 * package imports the files themselves).
 */
export * from "./agents/index.ts";
export * from "./checkpoints/index.ts";
export * from "./context/index.ts";
export * from "./environment/index.ts";
export * from "./events/index.ts";
export * from "./extensions/index.ts";
export * from "./fs/index.ts";
export * from "./images/index.ts";
export * from "./input/index.ts";
export * from "./instructions/index.ts";
export * from "./lsp/index.ts";
export * from "./mcp/index.ts";
export * from "./model/index.ts";
export * from "./permissions/index.ts";
export { Pod, type PodOptions, type PodRunOptions } from "./pod.ts";
export * from "./query/index.ts";
export * from "./review/index.ts";
export * from "./sandbox/index.ts";
export * from "./tools/index.ts";
export * from "./worktrees/index.ts";
