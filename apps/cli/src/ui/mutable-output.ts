import { Writable } from "node:stream";

/**
 * readline's output, switchable off: while the model runs, keys typed ahead
 * still reach readline's line buffer but are not echoed over the streamed
 * answer; the prompt comes back with them when the turn ends.
 */
export class MutableOutput extends Writable {
  muted = false;
  readonly #target: NodeJS.WriteStream;

  constructor(target: NodeJS.WriteStream) {
    super({ decodeStrings: false });
    this.#target = target;
    target.on("resize", () => this.emit("resize"));
  }

  get isTTY(): boolean {
    return this.#target.isTTY === true;
  }

  get columns(): number {
    return this.#target.columns ?? 80;
  }

  get rows(): number {
    return this.#target.rows ?? 24;
  }

  override _write(chunk: unknown, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (!this.muted) this.#target.write(chunk as string | Uint8Array);
    callback();
  }
}
