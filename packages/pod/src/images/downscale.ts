/**
 * Shrinks an image that is over the size limits (a 4K screenshot saved as
 * PNG is easily 8 MiB), in a worker thread running jimp, so attaching it
 * does not freeze the agent. WebP cannot be decoded by jimp: such files are
 * refused instead.
 */
import { Worker } from "node:worker_threads";

/** Longest side of a downscaled image; what providers scale large images to anyway. */
export const DOWNSCALE_MAX_SIDE = 2048;
/** Longest a downscale may take. */
const DOWNSCALE_TIMEOUT_MS = 60_000;

export interface Downscaled {
  bytes: Buffer;
  mediaType: "image/png" | "image/jpeg";
  width: number;
  height: number;
}

type Reply =
  | { ok: true; bytes: Uint8Array; mediaType: Downscaled["mediaType"]; width: number; height: number }
  | { ok: false; message: string };

// From source the thread runs the .ts file (Node strips the types), from dist the .js one.
const WORKER_URL = new URL(
  `./downscale-worker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`,
  import.meta.url,
);

/** Re-encodes `bytes` to fit {@link DOWNSCALE_MAX_SIDE}; rejects with an Error saying why it could not. */
export function downscaleImage(bytes: Uint8Array, maxSide = DOWNSCALE_MAX_SIDE): Promise<Downscaled> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_URL, { workerData: { bytes, maxSide } });
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new Error(`it took longer than ${DOWNSCALE_TIMEOUT_MS / 1000} s`));
    }, DOWNSCALE_TIMEOUT_MS);
    const done = () => {
      clearTimeout(timer);
      void worker.terminate();
    };
    worker.once("message", (reply: Reply) => {
      done();
      if (reply.ok) {
        resolve({
          bytes: Buffer.from(reply.bytes),
          mediaType: reply.mediaType,
          width: reply.width,
          height: reply.height,
        });
      } else reject(new Error(reply.message));
    });
    worker.once("error", (error) => {
      done();
      reject(error);
    });
  });
}
