/**
 * Checking the `@` refs of an input before anything is sent, for a UI that
 * wants to say what is wrong while the user can still edit the line. One
 * result per distinct ref, in order: a file ref is read the way the pod
 * will read it at submit (so `bytes` is what it will attach), an image is
 * checked without decoding, and an MCP resource ref (`@<server>:<uri>`) is
 * left to the submit, which reads it from the running server.
 */

import { messageText } from "@yoi/llm-client";
import { errorMessage } from "@yoi/manifest/errors";
import type { ScopedFs } from "../fs/scoped-fs.ts";
import { imageTypeOfPath } from "../images/image-file.ts";
import { imageRefError } from "../images/image-ref.ts";
import { checkImageFile } from "../images/load-image.ts";
import { parseResourceRef } from "../mcp/resource-ref.ts";
import { FileRefError, type FileRefErrorCode, resolveFileRef } from "./file-ref.ts";
import { fileRefs, parseSegments, type Segment } from "./segments.ts";

/** What checking one ref found. */
export type RefCheck =
  | {
      ref: string;
      ok: true;
      kind: "file";
      /** UTF-8 bytes of the `[File: <ref>]` message the ref becomes (body capped at `maxBytes`). */
      bytes: number;
      /** Size of the whole file in bytes. */
      size: number;
      /** Whether the body is cut at `maxBytes`. */
      truncated: boolean;
    }
  | { ref: string; ok: true; kind: "image" | "resource" }
  | {
      ref: string;
      ok: false;
      kind: "file" | "image";
      code: FileRefErrorCode;
      /** One line saying what is wrong (it names the path). */
      reason: string;
    };

export interface RefCheckOptions {
  /** The session's scope. */
  fs: ScopedFs;
  /** Cap of a file ref's body (`toolOutput.maxBytes`). */
  maxBytes: number;
  /** Whether `name` is a configured MCP server: `@<name>:<uri>` is a resource ref then. Default: none is. */
  isServer?: (name: string) => boolean;
}

/** Checks each distinct `@` ref of `input` (text, or segments already parsed). */
export async function checkRefs(
  input: string | readonly Segment[],
  options: RefCheckOptions,
): Promise<RefCheck[]> {
  const segments = typeof input === "string" ? parseSegments(input) : input;
  const checks: RefCheck[] = [];
  for (const ref of new Set(fileRefs(segments))) {
    if (options.isServer && parseResourceRef(ref, options.isServer) !== undefined) {
      checks.push({ ref, ok: true, kind: "resource" });
      continue;
    }
    if (imageTypeOfPath(ref) !== undefined) {
      try {
        // An image costs what its pixels cost, not its bytes; the pod downscales large ones.
        await checkImageFile(options.fs, ref);
        checks.push({ ref, ok: true, kind: "image" });
      } catch (error) {
        const failure = imageRefError(error, ref);
        checks.push({ ref, ok: false, kind: "image", code: failure.code, reason: failure.message });
      }
      continue;
    }
    try {
      const resolved = await resolveFileRef(options.fs, ref, options.maxBytes);
      checks.push({
        ref,
        ok: true,
        kind: "file",
        bytes: Buffer.byteLength(messageText(resolved.item)),
        size: resolved.totalBytes,
        truncated: resolved.truncated,
      });
    } catch (error) {
      const failure = FileRefError.isInstance(error)
        ? error
        : new FileRefError("io", ref, `cannot read ${ref}: ${errorMessage(error)}`, { cause: error });
      checks.push({ ref, ok: false, kind: "file", code: failure.code, reason: failure.message });
    }
  }
  return checks;
}
