import { YoiError } from "@yoi/manifest/errors";

/** An API failure with its HTTP status and a stable `code` (the `error` object of the body). */
export class HttpError extends YoiError {
  override readonly name = "HttpError";
  static override readonly marker: symbol = Symbol.for("yoi.error.HttpError");
  readonly status: number;
  readonly extra: Record<string, unknown>;

  /**
   * `cause`: what the server's log says of a 5xx besides `message` (a store's
   * own message naming its files or database, which the client is not shown).
   */
  constructor(
    status: number,
    code: string,
    message: string,
    extra: Record<string, unknown> = {},
    cause?: unknown,
  ) {
    super(code, message, cause === undefined ? {} : { cause });
    this.status = status;
    this.extra = extra;
  }
}
