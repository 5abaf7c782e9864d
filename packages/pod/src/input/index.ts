export {
  FileRefError,
  type FileRefErrorCode,
  type ResolvedFileRef,
  resolveFileRef,
  truncationNote,
} from "./file-ref.ts";
export { checkRefs, type RefCheck, type RefCheckOptions } from "./ref-check.ts";
export {
  type FileRefSegment,
  fileRefPlaceholder,
  fileRefs,
  flattenSegments,
  parseSegments,
  type Segment,
  type TextSegment,
} from "./segments.ts";
