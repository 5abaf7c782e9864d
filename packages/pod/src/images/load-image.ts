import type { ScopedFs } from "../scoped-fs.ts";
import { type CheckedImage, checkImage, IMAGE_MAX_BYTES, ImageError } from "./image-file.ts";

/**
 * Reads and checks the image at `path` through the scope. Rejects with
 * ScopeError (missing, out of scope) or ImageError (damaged, too large).
 */
export async function loadImage(fs: ScopedFs, path: string): Promise<CheckedImage & { real: string }> {
  const real = (await fs.resolve(path, "read")).real;
  // One byte past the cap tells an oversized file without reading all of it.
  const read = await fs.readFile(path, { maxBytes: IMAGE_MAX_BYTES + 1 });
  if (read.size > IMAGE_MAX_BYTES) {
    throw new ImageError(
      "too_large",
      `${path} is ${(read.size / 1024 / 1024).toFixed(1)} MiB; images over ${IMAGE_MAX_BYTES / 1024 / 1024} MiB are not sent (models refuse them): shrink or crop it first`,
    );
  }
  return { ...(await checkImage(read.bytes, path)), real };
}

/** The one-line label that goes with an image: `[Image: a.png] (3×2, image/png, 1.2 KiB)`. */
export function imageLabel(path: string, image: CheckedImage): string {
  const size = image.bytes < 1024 ? `${image.bytes} B` : `${(image.bytes / 1024).toFixed(1)} KiB`;
  return `[Image: ${path}] (${image.width}×${image.height}, ${image.mediaType}, ${size})`;
}
