export { DOWNSCALE_MAX_SIDE, type Downscaled, downscaleImage } from "./downscale.ts";
export {
  type CheckedImage,
  checkImage,
  IMAGE_MAX_BYTES,
  IMAGE_MAX_SIDE,
  ImageError,
  type ImageErrorCode,
  type ImageInfo,
  type ImageMediaType,
  imageTypeOfPath,
  inspectImage,
  overLimits,
  sniffImageType,
} from "./image-file.ts";
export { type ResolvedImageRef, resolveImageRef } from "./image-ref.ts";
export { checkImageFile, IMAGE_READ_MAX_BYTES, imageLabel, loadImage } from "./load-image.ts";
