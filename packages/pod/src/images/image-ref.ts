/**
 * `@pic.png`: an image the user attaches to a message. It becomes a user
 * message holding a short `[Image: <path>]` label and the image itself, so
 * every provider sees it as input (images cannot live in system messages).
 */
import type { MessageItem } from "@yoi/llm-client";
import { errorMessage } from "@yoi/manifest/errors";
import { ScopeError } from "../fs/scope-error.ts";
import type { ScopedFs } from "../fs/scoped-fs.ts";
import { FileRefError } from "../input/file-ref.ts";
import { ImageError } from "./image-file.ts";
import { imageLabel, loadImage } from "./load-image.ts";

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
  try {
    const image = await loadImage(fs, path);
    return {
      item: {
        type: "message",
        role: "user",
        content: [
          { type: "text", text: imageLabel(path, image) },
          { type: "image", mediaType: image.mediaType, data: image.data },
        ],
      },
      real: image.real,
      width: image.width,
      height: image.height,
      bytes: image.bytes,
    };
  } catch (error) {
    throw imageRefError(error, path);
  }
}

/** An image ref's failure (an ImageError, a ScopeError, anything else) as the FileRefError it reports. */
export function imageRefError(error: unknown, path: string): FileRefError {
  if (FileRefError.isInstance(error)) return error;
  if (ImageError.isInstance(error)) {
    return new FileRefError(error.code === "too_large" ? "too_large" : "binary", path, error.message);
  }
  if (ScopeError.isInstance(error)) {
    const code =
      error.code === "out_of_scope" ? "out_of_scope" : error.code === "not_found" ? "not_found" : "io";
    return new FileRefError(code, path, error.message, { cause: error });
  }
  return new FileRefError("io", path, `cannot read ${path}: ${errorMessage(error)}`, { cause: error });
}
