/**
 * The downscaler's thread: decodes an image with jimp (pure JavaScript),
 * scales it to fit `maxSide`, and encodes it again (JPEG, or PNG when it has
 * transparency). Decoding a 5000×3000 PNG takes seconds, so it runs here,
 * off the main thread. It gets bytes and returns bytes; it opens no file.
 */
import { parentPort, workerData } from "node:worker_threads";
import { errorMessage } from "@yoi/manifest/errors";

interface Job {
  bytes: Uint8Array;
  maxSide: number;
}

const job = workerData as Job;
try {
  const { Jimp } = await import("jimp");
  const image = await Jimp.read(Buffer.from(job.bytes));
  if (image.width > job.maxSide || image.height > job.maxSide) {
    image.scaleToFit({ w: job.maxSide, h: job.maxSide });
  }
  const png = image.hasAlpha();
  const out = png ? await image.getBuffer("image/png") : await image.getBuffer("image/jpeg", { quality: 85 });
  parentPort?.postMessage({
    ok: true,
    bytes: out,
    mediaType: png ? "image/png" : "image/jpeg",
    width: image.width,
    height: image.height,
  });
} catch (error) {
  parentPort?.postMessage({ ok: false, message: errorMessage(error) });
}
