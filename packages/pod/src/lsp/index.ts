export { LspManager, type LspManagerOptions, type LspServerStatus } from "./lsp-manager.ts";
export { LspServerError, type LspServerState } from "./lsp-server.ts";
export { BUILTIN_LSP_SERVERS, type LspServerSpec } from "./server-spec.ts";
