/**
 * The `lsp` section of the config: language servers whose diagnostics are
 * appended to the result of `write_file` and `edit_file`.
 *
 * yoi knows two servers by name (`typescript`: typescript-language-server,
 * `python`: pyright-langserver) and finds them in the project's
 * `node_modules/.bin` or on PATH; an entry under `servers` with the same
 * name changes or turns off the built-in one, another name adds a server.
 * A server is a command yoi runs, so a project's `lsp.servers` apply only
 * when the project is trusted (project-trust.ts).
 */
import * as z from "zod";
import { bool, expecting, intAtLeast, nonEmpty, positiveInt, text } from "./schema-helpers.ts";

/** How long an edit waits for the server's diagnostics of the file. */
export const LSP_TIMEOUT_MS = 3000;
/** Most diagnostics appended to one tool result. */
export const LSP_MAX_DIAGNOSTICS = 20;
/** Diagnostic severities, most severe first (the LSP's 1..4). */
export const LSP_SEVERITIES = ["error", "warning", "information", "hint"] as const;

/** Server names: shown by `yoi lsp status` and `/lsp`. */
export const LSP_SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

const strings = (what: string) => z.array(text("a string"), expecting(what));

export const LspServerSchema = z.strictObject(
  {
    command: nonEmpty('the program to run, like "typescript-language-server"').optional().meta({
      description:
        "The server's program: a path, or a name looked up in the project's node_modules/.bin, then PATH. Required for a server yoi does not know.",
    }),
    args: strings("an array of strings")
      .optional()
      .meta({ description: 'Arguments, like ["--stdio"] (replace the built-in ones).' }),
    extensions: z
      .array(
        text('a file extension like ".ts"').regex(/^\.[^./\\\s]+$/, expecting('a file extension like ".ts"')),
        expecting('an array of file extensions like [".ts", ".tsx"]'),
      )
      .optional()
      .meta({
        description: "Files the server checks, by extension. Required for a server yoi does not know.",
      }),
    languageId: z
      .record(
        text(),
        nonEmpty("a language id"),
        expecting('an object of extensions to language ids, like {".ts": "typescript"}'),
      )
      .optional()
      .meta({ description: "The LSP language id per extension. Default: the extension without its dot." }),
    env: z
      .record(text(), text("a string value"), expecting("an object of environment variables"))
      .optional()
      .meta({ description: "Added to the server's environment (which carries no API keys)." }),
    initializationOptions: z
      .record(text(), z.unknown(), expecting("an object"))
      .optional()
      .meta({ description: "Sent to the server in its initialize request." }),
    disabled: bool().optional().meta({ description: "Leave this server off." }),
  },
  expecting("an object"),
);

export const LspSchema = z.strictObject(
  {
    enabled: bool()
      .default(true)
      .meta({ description: "Append language-server diagnostics to write_file and edit_file results." }),
    timeoutMs: intAtLeast(100, "an integer of at least 100 (milliseconds)").default(LSP_TIMEOUT_MS).meta({
      description: "How long an edit waits for the file's diagnostics (the edit succeeds regardless).",
    }),
    maxDiagnostics: positiveInt()
      .default(LSP_MAX_DIAGNOSTICS)
      .meta({ description: "Most diagnostics appended to one tool result." }),
    severity: z
      .enum(LSP_SEVERITIES, expecting(`one of ${LSP_SEVERITIES.map((s) => `"${s}"`).join(", ")}`))
      .default("error")
      .meta({ description: 'The least severe diagnostic shown: "error" shows errors only.' }),
    servers: z
      .record(
        text().regex(LSP_SERVER_NAME_PATTERN, expecting("a server name of 1-32 letters, digits, '_' or '-'")),
        LspServerSchema,
        expecting("an object of server names to servers"),
      )
      .default(() => ({}))
      .meta({ description: "Servers by name; `typescript` and `python` change the built-in ones." }),
  },
  expecting("an object"),
);
