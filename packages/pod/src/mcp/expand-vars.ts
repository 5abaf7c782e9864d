/**
 * `${VAR}` expansion in MCP server settings (headers, env, args, url), from
 * yoi's environment, so a token lives in the environment and never in a
 * config file. `${VAR:-default}` gives a fallback; a variable that is unset
 * and has no fallback is an error naming it (sending an empty bearer token
 * would fail later, less clearly).
 */
import { YoiError } from "@yoi/manifest/errors";

const VAR_RE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Thrown for `${VAR}` of an unset variable. */
export class MissingVariableError extends YoiError<"missing_variable"> {
  override readonly name = "MissingVariableError";
  static override readonly marker: symbol = Symbol.for("yoi.error.MissingVariableError");
  readonly variable: string;
  constructor(variable: string) {
    super(
      "missing_variable",
      `\${${variable}} is not set in the environment (set it, or write \${${variable}:-default})`,
    );
    this.variable = variable;
  }
}

/** `text` with every `${VAR}` / `${VAR:-default}` replaced. Throws MissingVariableError. */
export function expandVars(text: string, env: Readonly<Record<string, string | undefined>>): string {
  return text.replace(VAR_RE, (_whole, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== "") return value;
    if (fallback !== undefined) return fallback;
    throw new MissingVariableError(name);
  });
}

/** Every value of a string map expanded. */
export function expandMap(
  map: Readonly<Record<string, string>> | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> | undefined {
  if (map === undefined) return undefined;
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [k, expandVars(v, env)]));
}
