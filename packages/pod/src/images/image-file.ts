/**
 * Image files the model can see: png, jpeg, gif and webp, recognised by
 * their bytes (not only their name), checked for damage and for the size
 * limits every provider shares, before anything is sent.
 */
import { errorMessage, YoiError } from "@yoi/manifest/errors";

/** The formats all four providers accept. */
export type ImageMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/**
 * Largest image sent, in bytes: Anthropic's per-image cap, the smallest of
 * the four providers (OpenAI and Gemini take more), so one limit holds for all.
 */
export const IMAGE_MAX_BYTES = 5 * 1024 * 1024;
/** Largest side in pixels (Anthropic refuses images over 8000 px). */
export const IMAGE_MAX_SIDE = 8000;

const EXTENSIONS: Record<string, ImageMediaType> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
};

export type ImageErrorCode = "corrupt" | "too_large" | "unsupported";

/** An image that cannot be sent; `message` says why and what to do. */
export class ImageError extends YoiError<ImageErrorCode> {
  override readonly name = "ImageError";
  static override readonly marker: symbol = Symbol.for("yoi.error.ImageError");
}

/** The media type a file name claims (by extension), or undefined for other files. */
export function imageTypeOfPath(path: string): ImageMediaType | undefined {
  const dot = path.lastIndexOf(".");
  return dot < 0 ? undefined : EXTENSIONS[path.slice(dot).toLowerCase()];
}

/** The format the bytes are in, by their signature. */
export function sniffImageType(bytes: Uint8Array): ImageMediaType | undefined {
  const b = bytes;
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return "image/png";
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  if (b.length >= 6 && ascii(b, 0, 6).match(/^GIF8[79]a$/)) return "image/gif";
  if (b.length >= 12 && ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 12) === "WEBP") return "image/webp";
  return undefined;
}

function ascii(b: Uint8Array, from: number, to: number): string {
  return String.fromCharCode(...b.subarray(from, to));
}

/** Whether the file ends the way its format must (a cut-off download fails this). */
function complete(type: ImageMediaType, b: Uint8Array): boolean {
  switch (type) {
    case "image/png":
      // The last chunk is IEND: length 0, type "IEND", CRC.
      return b.length >= 12 && ascii(b, b.length - 8, b.length - 4) === "IEND";
    case "image/jpeg": {
      // End of image (FFD9), allowing padding some encoders leave after it.
      let end = b.length;
      while (end > 2 && (b[end - 1] === 0x00 || b[end - 1] === 0x0a || b[end - 1] === 0x0d)) end--;
      return end >= 4 && b[end - 2] === 0xff && b[end - 1] === 0xd9;
    }
    case "image/gif":
      return b.length > 0 && b[b.length - 1] === 0x3b;
    case "image/webp": {
      const riffSize = (b[4]! | (b[5]! << 8) | (b[6]! << 16) | (b[7]! << 24)) >>> 0;
      return riffSize + 8 <= b.length;
    }
  }
}

/** A checked image, ready to be an `image` content part. */
export interface CheckedImage {
  mediaType: ImageMediaType;
  width: number;
  height: number;
  bytes: number;
  /** Base64 of the file. */
  data: string;
  /** Set when the file was over the limits and was scaled down to fit. */
  downscaledFrom?: { width: number; height: number; bytes: number };
}

/** What an image's bytes say about it, before any size limit. */
export interface ImageInfo {
  mediaType: ImageMediaType;
  width: number;
  height: number;
}

/**
 * Recognises an image by its signature, checks it is whole, and reads its
 * dimensions. Throws `ImageError` (`unsupported`, `corrupt`).
 */
export async function inspectImage(bytes: Uint8Array, display: string): Promise<ImageInfo> {
  const claimed = imageTypeOfPath(display);
  const actual = sniffImageType(bytes);
  if (actual === undefined) {
    throw new ImageError(
      claimed === undefined ? "unsupported" : "corrupt",
      claimed === undefined
        ? `${display} is not a PNG, JPEG, GIF or WebP image`
        : `${display} is not a valid ${claimed.slice(6).toUpperCase()} image (its bytes are not an image the name says; the file may be damaged)`,
    );
  }
  const name = actual.slice(6).toUpperCase();
  if (!complete(actual, bytes)) {
    throw new ImageError("corrupt", `${display} is a damaged ${name} image (the file is cut off)`);
  }
  let width: number | undefined;
  let height: number | undefined;
  try {
    // Loaded with the first image: start-up pays nothing for it.
    const { imageSize } = await import("image-size");
    ({ width, height } = imageSize(bytes));
  } catch (error) {
    const why = errorMessage(error);
    throw new ImageError("corrupt", `${display} is a damaged ${name} image (${why})`);
  }
  if (!width || !height)
    throw new ImageError("corrupt", `${display} is a damaged ${name} image (no dimensions)`);
  return { mediaType: actual, width, height };
}

/** Why an image of this size cannot be sent as it is, or undefined when it can. */
export function overLimits(info: { width: number; height: number }, bytes: number): string | undefined {
  if (bytes > IMAGE_MAX_BYTES)
    return `${(bytes / 1024 / 1024).toFixed(1)} MiB; images over ${IMAGE_MAX_BYTES / 1024 / 1024} MiB are not sent (models refuse them)`;
  if (info.width > IMAGE_MAX_SIDE || info.height > IMAGE_MAX_SIDE)
    return `${info.width}×${info.height} px; images over ${IMAGE_MAX_SIDE} px on a side are not sent (models refuse them)`;
  return undefined;
}

/**
 * Checks an image file's bytes: a supported format, undamaged, within
 * {@link IMAGE_MAX_BYTES} and {@link IMAGE_MAX_SIDE}. Throws `ImageError`
 * saying what is wrong. (`loadImage` downscales instead of refusing.)
 */
export async function checkImage(bytes: Uint8Array, display: string): Promise<CheckedImage> {
  const info = await inspectImage(bytes, display);
  const over = overLimits(info, bytes.length);
  if (over !== undefined) throw new ImageError("too_large", `${display} is ${over}: shrink or crop it first`);
  return { ...info, bytes: bytes.length, data: Buffer.from(bytes).toString("base64") };
}
