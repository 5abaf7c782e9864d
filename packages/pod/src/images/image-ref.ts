/**
 * `@pic.png`: an image the user attaches to a message. It becomes a user
 * message holding a short `[Image: <path>]` label and the image itself, so
 * every provider sees it as input (images cannot live in system messages).
 */
import type { MessageItem } from "@yoi/llm-client";
import { FileRefError } from "../file-ref.ts";
import { ScopeError } from "../scope-error.ts";
import type { ScopedFs } from "../scoped-fs.ts";
import { checkImage, IMAGE_MAX_BYTES, ImageError } from "./image-file.ts";

export interface ResolvedImageRef {
  item: MessageItem;
  real: string;
  width: number;
  height: number;
  bytes: number;
}

/**
 * Reads and checks the image at `path`. `refuse` is set when the model
 * cannot take images (it is the reason given). Rejects with FileRefError.
 */
export async function resolveImageRef(
  fs: ScopedFs,
  path: string,
  options: { refuse?: string } = {},
): Promise<ResolvedImageRef> {
  if (options.refuse !== undefined) throw new FileRefError("unsupported", path, options.refuse);
  let read: { bytes: Buffer; size: number };
  let real: string;
  try {
    real = (await fs.resolve(path, "read")).real;
    // One byte past the cap tells an oversized file without reading all of it.
    read = await fs.readFile(path, { maxBytes: IMAGE_MAX_BYTES + 1 });
  } catch (error) {
    if (error instanceof ScopeError) {
      const code =
        error.code === "out_of_scope" ? "out_of_scope" : error.code === "not_found" ? "not_found" : "io";
      throw new FileRefError(code, path, error.message, { cause: error });
    }
    throw new FileRefError("io", path, `cannot read ${path}: ${String(error)}`, { cause: error });
  }
  if (read.size > IMAGE_MAX_BYTES) {
    throw new FileRefError(
      "too_large",
      path,
      `${path} is ${(read.size / 1024 / 1024).toFixed(1)} MiB; images over ${IMAGE_MAX_BYTES / 1024 / 1024} MiB are not sent (models refuse them): shrink or crop it first`,
    );
  }
  try {
    const image = await checkImage(read.bytes, path);
    return {
      item: {
        type: "message",
        role: "user",
        content: [
          { type: "text", text: `[Image: ${path}] (${image.width}×${image.height})` },
          { type: "image", mediaType: image.mediaType, data: image.data },
        ],
      },
      real,
      width: image.width,
      height: image.height,
      bytes: image.bytes,
    };
  } catch (error) {
    if (error instanceof ImageError) {
      throw new FileRefError(error.code === "too_large" ? "too_large" : "binary", path, error.message);
    }
    throw error;
  }
}
