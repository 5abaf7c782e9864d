/**
 * The one secret redactor of yoi. Everything that leaves the process as
 * text (error messages, stderr, stream-json, session records, crash
 * reports) goes through {@link redactSecrets}. It removes:
 *
 * - values registered with {@link registerSecret}: API keys and custom
 *   header values (`createClient` registers its options'; the CLI registers
 *   what its config holds before anything is printed);
 * - credentials inside URLs: `user:password@` and the values of query
 *   parameters that carry keys (`key`, `api-key`, `token`, ...);
 * - things that look like keys wherever they appear: `sk-...`, `AIza...`,
 *   `Bearer ...`, `x-api-key: ...`, `api_key=...`.
 *
 * The registry is process-wide on purpose: a secret must be hidden on every
 * channel, including ones (a crash report) that never saw the client.
 */

/** Registered values shorter than this are ignored: redacting `true` or `1` everywhere would garble text. */
export const MIN_SECRET_LENGTH = 6;

/** What a secret becomes: the same mark `yoi config` shows for credentials. */
export const REDACTED = "<redacted>";
const MASK = REDACTED;
const secrets = new Set<string>();
/** Registered secrets, longest first (so a secret that contains another is masked whole). */
let ordered: string[] = [];

/** Registers a value to be masked wherever it appears. Ignores empty and very short values. */
export function registerSecret(value: string | undefined | null): void {
  if (typeof value !== "string") return;
  const trimmed = value.trim();
  if (trimmed.length < MIN_SECRET_LENGTH || secrets.has(trimmed)) return;
  secrets.add(trimmed);
  // A value may also appear percent-encoded (inside a URL).
  const encoded = encodeURIComponent(trimmed);
  if (encoded !== trimmed) secrets.add(encoded);
  ordered = [...secrets].sort((a, b) => b.length - a.length);
}

/**
 * Registers what a client configuration holds that must never be shown: the
 * API key, every custom header value and the credentials of the base URL.
 */
export function registerClientSecrets(options: {
  apiKey?: string | undefined;
  headers?: Record<string, string> | undefined;
  baseURL?: string | undefined;
}): void {
  registerSecret(options.apiKey);
  for (const value of Object.values(options.headers ?? {})) registerSecret(value);
  for (const value of urlCredentials(options.baseURL)) registerSecret(value);
}

/** Query parameters whose value is a credential. */
const SECRET_PARAMS =
  /([?&;](?:api[-_]?key|key|token|access[-_]?token|auth|authorization|secret|client[-_]?secret|password|pwd|sig|signature|x-goog-api-key)=)[^&#\s"'<>]*/gi;
/** `scheme://user:password@` and `scheme://token@`. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]+@/gi;
const KEY_LIKE: [RegExp, string][] = [
  [/\b(?:sk-ant-|sk-|pk-|rk-|AIza)[A-Za-z0-9_*.-]{6,}/g, MASK],
  [/\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, `$1${MASK}`],
  [
    /\b(x-api-key|x-goog-api-key|api[_-]?key|authorization)(["']?\s*[:=]\s*["']?)[^\s"',}&<]{8,}/gi,
    `$1$2${MASK}`,
  ],
];

/** `text` with every secret masked. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const secret of ordered) if (out.includes(secret)) out = out.split(secret).join(MASK);
  out = out.replace(URL_USERINFO, `$1${MASK}@`).replace(SECRET_PARAMS, `$1${MASK}`);
  for (const [pattern, replacement] of KEY_LIKE) out = out.replace(pattern, replacement);
  return out;
}

/** Deep copy of a JSON-like value with every string redacted (events handed to another owner). */
export function redactDeep<T>(value: T): T {
  if (typeof value === "string") return redactSecrets(value) as T;
  if (Array.isArray(value)) return value.map(redactDeep) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v);
    return out as T;
  }
  return value;
}

/**
 * The JSON text of a JSON-like value with every string redacted, for what
 * is written out at once (session records, SSE lines). Only the objects and
 * arrays on the way to a string that changed are copied: a record with
 * nothing to redact, the common case, is stringified as it is instead of
 * being copied whole on every write.
 */
export function redactedJson(value: unknown): string {
  return JSON.stringify(redactShared(value)) ?? "null";
}

/** `value` with every string redacted, sharing every part that has nothing to redact; never mutates it. */
function redactShared(value: unknown): unknown {
  if (typeof value === "string") return redactSecrets(value);
  if (value === null || typeof value !== "object") return value;
  // What JSON.stringify would call first: redact what it returns (a Date's string, a Buffer's object).
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") return redactShared(toJSON.call(value));
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const r = redactShared(v);
      if (r !== v) {
        out ??= value.slice();
        out[i] = r;
      }
    }
    return out ?? value;
  }
  let out: Record<string, unknown> | undefined;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const v = (value as Record<string, unknown>)[key];
    const r = redactShared(v);
    if (r !== v) {
      out ??= { ...value };
      out[key] = r;
    }
  }
  return out ?? value;
}

/** Whether a URL carries credentials (userinfo or a key-bearing query parameter). */
export function hasUrlCredentials(url: string | undefined): boolean {
  return urlCredentials(url).length > 0;
}

function urlCredentials(url: string | undefined): string[] {
  if (url === undefined) return [];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const out: string[] = [];
  if (parsed.username) out.push(decodeURIComponent(parsed.username));
  if (parsed.password) out.push(decodeURIComponent(parsed.password));
  for (const [name, value] of parsed.searchParams) {
    if (new RegExp(SECRET_PARAMS.source, "i").test(`?${name}=x`) && value) out.push(value);
  }
  return out;
}

/** Registered secrets, longest first (for the streaming redactor). */
export function registeredSecrets(): readonly string[] {
  return ordered;
}

/** Forgets every registered secret (tests). */
export function clearRegisteredSecrets(): void {
  secrets.clear();
  ordered = [];
}
