export {
  type CheckedImage,
  checkImage,
  IMAGE_MAX_BYTES,
  IMAGE_MAX_SIDE,
  ImageError,
  type ImageErrorCode,
  type ImageMediaType,
  imageTypeOfPath,
  sniffImageType,
} from "./image-file.ts";
export { type ResolvedImageRef, resolveImageRef } from "./image-ref.ts";
export { imageLabel, loadImage } from "./load-image.ts";
