/**
 * Where the pod's file tools read and write the text of in-scope files,
 * when that is not the disk: an editor that hosts the session (`yoi acp`)
 * serves its open buffers, so unsaved changes are seen and edits land in
 * the editor's undo history. Each function is called only after the scope
 * check (and, for writes, the read-before-write guard) passed, with the
 * file's real path; either may be left out to use the disk for it. What
 * stays on the disk: sizes and mtimes (the guard's), directory listings,
 * grep and glob, images, `@path` refs, checkpoints and bash.
 */
export interface FileAccess {
  /** The file's current text (an open buffer's, saved or not). */
  readText?: (realPath: string) => Promise<string>;
  /** Replaces the file's whole text (creating it when absent). */
  writeText?: (realPath: string, text: string) => Promise<void>;
}
