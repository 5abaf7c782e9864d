/**
 * Shrinks an image that is over the size limits (a 4K screenshot saved as
 * PNG is easily 8 MiB), in a worker thread running jimp, so attaching it
 * does not freeze the agent. WebP cannot be decoded by jimp: such files are
 * refused instead.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
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

/**
 * The thread's module file: beside this one (the .ts source, Node strips
 * the types; or the .js of `dist`), or, inside the CLI's esbuild bundle,
 * `downscale-worker.js` at the bundle's root (this code then sits in
 * `chunks/` or in `bin.js` itself).
 */
function workerFile(): URL {
  const candidates = [
    new URL(`./downscale-worker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url),
    new URL("../downscale-worker.js", import.meta.url),
  ];
  const found = candidates.find((url) => existsSync(fileURLToPath(url)));
  if (found === undefined)
    throw new Error("the image downscaler (downscale-worker.js) is missing from this install");
  return found;
}

/** Re-encodes `bytes` to fit {@link DOWNSCALE_MAX_SIDE}; rejects with an Error saying why it could not. */
export function downscaleImage(bytes: Uint8Array, maxSide = DOWNSCALE_MAX_SIDE): Promise<Downscaled> {
  return new Promise((resolve, reject) => {
    let worker: Worker;
    try {
      worker = new Worker(workerFile(), { workerData: { bytes, maxSide } });
    } catch (error) {
      reject(error);
      return;
    }
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
