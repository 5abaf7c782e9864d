export {
  IMAGE_MAX_BYTES,
  IMAGE_MAX_SIDE,
  ImageError,
  type ImageErrorCode,
  type ImageMediaType,
  imageTypeOfPath,
} from "./image-file.ts";
export { checkImageFile } from "./load-image.ts";
