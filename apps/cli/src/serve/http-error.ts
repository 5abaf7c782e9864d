import { YoiError } from "@yoi/manifest/errors";

/** An API failure with its HTTP status and a stable `code` (the `error` object of the body). */
export class HttpError extends YoiError {
  override readonly name = "HttpError";
  static override readonly marker: symbol = Symbol.for("yoi.error.HttpError");
  readonly status: number;
  readonly extra: Record<string, unknown>;

  constructor(status: number, code: string, message: string, extra: Record<string, unknown> = {}) {
    super(code, message);
    this.status = status;
    this.extra = extra;
  }
}
