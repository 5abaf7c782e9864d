/**
 * Who is asking: the bearer token of a request checked against the
 * administrator's `YOI_SERVE_TOKEN` and the users of `--token-file`
 * (`<name> <secret>` per line), in constant time. A server without either
 * answers only loopback requests and treats every caller as its one user.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { IncomingHttpHeaders } from "node:http";
import { errorMessage } from "@yoi/manifest/errors";
import { HttpError } from "./http-error.ts";

/** The caller of a request. */
export interface Principal {
  /** The token file's name for the user; undefined for the administrator (or a server without tokens). */
  name: string | undefined;
  /** Sees and acts on every session. */
  admin: boolean;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
/** Shortest secret accepted: a guessable token is a shared session. */
export const MIN_SECRET_LENGTH = 16;

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * Parses a token file: one `<name> <secret>` per line, `#` comments and
 * blank lines ignored. Throws an Error naming the file and line for a
 * malformed line, a name or secret given twice, or a short secret (the
 * secret itself is never quoted).
 */
export function parseTokenFile(text: string, file: string): Map<string, string> {
  const users = new Map<string, string>();
  const secrets = new Set<string>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const where = `${file}:${index + 1}`;
    const parts = line.split(/\s+/);
    if (parts.length !== 2) throw new Error(`${where}: a line is "<name> <secret>", separated by one space`);
    const [name, secret] = parts as [string, string];
    if (!NAME.test(name)) {
      throw new Error(
        `${where}: the name must be letters, digits, ".", "_", "@" or "-" (at most 64); got ${JSON.stringify(name.slice(0, 70))}`,
      );
    }
    if (secret.length < MIN_SECRET_LENGTH) {
      throw new Error(
        `${where}: the secret of ${name} is shorter than ${MIN_SECRET_LENGTH} characters; make one with: openssl rand -hex 32`,
      );
    }
    if (users.has(name)) throw new Error(`${where}: ${name} is named twice`);
    if (secrets.has(secret)) throw new Error(`${where}: the secret of ${name} is another user's too`);
    users.set(name, secret);
    secrets.add(secret);
  });
  return users;
}

export class ServeUsers {
  readonly #file: string | undefined;
  readonly #admin: Buffer | undefined;
  #users: { name: string; digest: Buffer }[] = [];

  /** `adminToken`: `YOI_SERVE_TOKEN`; `file`: `--token-file`. */
  constructor(options: { adminToken?: string | undefined; file?: string | undefined }) {
    this.#admin = options.adminToken === undefined ? undefined : digest(options.adminToken);
    this.#file = options.file;
  }

  /** Whether requests need a token (an administrator's or a user's). */
  get required(): boolean {
    return this.#admin !== undefined || this.#file !== undefined;
  }

  /** How many users the token file holds. */
  get count(): number {
    return this.#users.length;
  }

  /** Whether `name` is a user of the token file. */
  has(name: string): boolean {
    return this.#users.some((u) => u.name === name);
  }

  /**
   * (Re)reads the token file. On failure the users read before stay and the
   * error (naming the file and line, never a secret) is thrown.
   */
  async load(): Promise<void> {
    if (this.#file === undefined) return;
    let text: string;
    try {
      text = await readFile(this.#file, "utf8");
    } catch (error) {
      throw new Error(`cannot read the token file ${this.#file}: ${errorMessage(error)}`);
    }
    this.#users = [...parseTokenFile(text, this.#file)].map(([name, secret]) => ({
      name,
      digest: digest(secret),
    }));
  }

  /**
   * The caller of a request with `Authorization: Bearer <token>` (that
   * header only: a browser would send a cookie on any site's behalf). Every
   * known token is compared, each in constant time, whichever matches.
   */
  authenticate(headers: IncomingHttpHeaders): Principal {
    if (!this.required) return { name: undefined, admin: true };
    const header = headers.authorization ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (match) {
      const presented = digest(match[1] as string);
      let found: Principal | undefined;
      if (this.#admin !== undefined && timingSafeEqual(presented, this.#admin))
        found = { name: undefined, admin: true };
      for (const user of this.#users) {
        if (timingSafeEqual(presented, user.digest) && found === undefined)
          found = { name: user.name, admin: false };
      }
      if (found !== undefined) return found;
    }
    const hint = `send the token in the header Authorization: Bearer <token> (${this.#file !== undefined ? "a user's from the token file, or YOI_SERVE_TOKEN" : "YOI_SERVE_TOKEN"})`;
    throw new HttpError(
      401,
      "unauthorized",
      match
        ? "refused: wrong bearer token"
        : header !== ""
          ? `refused: the Authorization header is not a bearer token; ${hint}`
          : headers.cookie !== undefined
            ? `refused: no Authorization header (cookies are never read for the token); ${hint}`
            : `refused: no Authorization header; ${hint}`,
    );
  }
}
