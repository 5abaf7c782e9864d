import { YoiError } from "@yoi/manifest/errors";

const HTTP_ERROR = Symbol.for("yoi.error.HttpError");

/** An API failure with its HTTP status and a stable `code` (the `error` object of the body). */
export class HttpError extends YoiError {
  override readonly name = "HttpError";
  readonly [HTTP_ERROR] = true;
  readonly status: number;
  readonly extra: Record<string, unknown>;

  constructor(status: number, code: string, message: string, extra: Record<string, unknown> = {}) {
    super(code, message);
    this.status = status;
    this.extra = extra;
  }

  static override isInstance(value: unknown): value is HttpError {
    return YoiError.hasMarker(value, HTTP_ERROR);
  }
}
