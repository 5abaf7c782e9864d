import { errorMessage } from "@yoi/manifest/errors";
import type { ScopedFs } from "../fs/scoped-fs.ts";
import { downscaleImage } from "./downscale.ts";
import { type CheckedImage, ImageError, type ImageInfo, inspectImage, overLimits } from "./image-file.ts";

/** Largest file read as an image at all (larger ones are refused unread). */
export const IMAGE_READ_MAX_BYTES = 50 * 1024 * 1024;

/**
 * Reads and checks the image at `path` through the scope; one over the
 * size limits is downscaled (in a worker thread) to fit. Rejects with
 * ScopeError (missing, out of scope) or ImageError (damaged, or too large
 * and not downscalable).
 */
export async function loadImage(fs: ScopedFs, path: string): Promise<CheckedImage & { real: string }> {
  const { real, bytes, info } = await readImage(fs, path);
  return { ...(await fitImage(bytes, info, path)), real };
}

/**
 * An image's bytes ready to send (`info` from `inspectImage`): as they are
 * within the size limits, else downscaled in a worker thread to fit.
 * Rejects with ImageError when it cannot be made to fit. `display` names it.
 */
export async function fitImage(bytes: Buffer, info: ImageInfo, display: string): Promise<CheckedImage> {
  const over = overLimits(info, bytes.length);
  if (over === undefined) return { ...info, bytes: bytes.length, data: bytes.toString("base64") };
  let small: Awaited<ReturnType<typeof downscaleImage>>;
  try {
    small = await downscaleImage(bytes);
  } catch (error) {
    const why = errorMessage(error);
    throw new ImageError(
      "too_large",
      `${display} is ${over}, and it could not be downscaled (${why}): shrink or crop it first`,
    );
  }
  if (overLimits(small, small.bytes.length) !== undefined) {
    throw new ImageError(
      "too_large",
      `${display} is ${over}, and even downscaled it is too large: shrink or crop it first`,
    );
  }
  return {
    mediaType: small.mediaType,
    width: small.width,
    height: small.height,
    bytes: small.bytes.length,
    data: small.bytes.toString("base64"),
    downscaledFrom: { width: info.width, height: info.height, bytes: bytes.length },
  };
}

async function readImage(
  fs: ScopedFs,
  path: string,
): Promise<{ real: string; bytes: Buffer; info: ImageInfo }> {
  const real = (await fs.resolve(path, "read")).real;
  // One byte past the cap tells an oversized file without reading all of it.
  const read = await fs.readFile(path, { maxBytes: IMAGE_READ_MAX_BYTES + 1 });
  if (read.size > IMAGE_READ_MAX_BYTES) {
    throw new ImageError(
      "too_large",
      `${path} is ${(read.size / 1024 / 1024).toFixed(1)} MiB; image files over ${IMAGE_READ_MAX_BYTES / 1024 / 1024} MiB are not read: shrink or crop it first`,
    );
  }
  return { real, bytes: read.bytes, info: await inspectImage(read.bytes, path) };
}

/**
 * Checks that `path` is an image `loadImage` can take (in scope, whole, a
 * known format, not over 50 MiB) without downscaling it: the quick check a
 * UI makes before sending. Rejects like `loadImage`.
 */
export async function checkImageFile(fs: ScopedFs, path: string): Promise<ImageInfo> {
  return (await readImage(fs, path)).info;
}

/** The one-line label that goes with an image: `[Image: a.png] (3×2, image/png, 1.2 KiB)`. */
export function imageLabel(path: string, image: CheckedImage): string {
  const size = (n: number) =>
    n < 1024
      ? `${n} B`
      : n < 1024 * 1024
        ? `${(n / 1024).toFixed(1)} KiB`
        : `${(n / 1024 / 1024).toFixed(1)} MiB`;
  const from = image.downscaledFrom;
  const note = from ? `; downscaled from ${from.width}×${from.height}, ${size(from.bytes)}` : "";
  return `[Image: ${path}] (${image.width}×${image.height}, ${image.mediaType}, ${size(image.bytes)}${note})`;
}
