import { BlobStoreError } from "@yoi/llm-worker";

/** The errno code of a Node fs error (`ENOENT`, `ENOSPC`, ...), if it has one. */
export function errnoOf(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}

const HINTS: Record<string, string> = {
  ENOSPC: "the disk is full; free space and retry",
  EDQUOT: "the disk quota is exhausted; free space and retry",
  EACCES: "permission denied; check the owner and mode of the directory",
  EPERM: "operation not permitted; check the owner and mode of the directory",
  EROFS: "the file system is read-only; point the store at a writable directory",
  ENOTDIR: "a component of the path is not a directory",
  EISDIR: "the path is a directory, not a file",
  EMFILE: "too many open files in this process",
  ENFILE: "too many open files on this system",
  ELOOP: "the path is a symbolic link, which the store refuses to follow",
};

/** A short human hint for an errno, for error messages. */
export function errnoHint(errno: string | undefined): string {
  return (errno !== undefined && HINTS[errno]) || "an I/O error occurred";
}

/** Wraps a Node fs error into a typed `io` BlobStoreError naming the path and errno. */
export function blobIoError(action: string, path: string, error: unknown): BlobStoreError {
  const errno = errnoOf(error);
  return new BlobStoreError("io", `cannot ${action} ${path}: ${errno ?? "error"} (${errnoHint(errno)})`, {
    path,
    errno,
    cause: error,
  });
}
