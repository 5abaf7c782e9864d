/**
 * An ACP prompt (content blocks) as what a Pod runs: text with `@path`
 * refs, and images. A link to a file inside the project becomes an `@path`
 * ref, so the pod reads it through its scope like one typed in the
 * terminal; embedded context (the editor's text of a file or a selection)
 * goes into the message as it is, labelled with where it comes from.
 */
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import type * as acp from "@agentclientprotocol/sdk";
import { RequestError } from "@agentclientprotocol/sdk";
import { isInside } from "@yoi/pod";
import { fence } from "./tool-calls.ts";

export interface PromptInput {
  text: string;
  images: { data: Uint8Array; label: string }[];
}

/** Converts the blocks; a block yoi cannot take is an invalid-params error naming it. */
export function promptInput(blocks: readonly acp.ContentBlock[], cwd: string): PromptInput {
  const parts: string[] = [];
  const images: PromptInput["images"] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        parts.push(block.text);
        break;
      case "image":
        images.push({
          data: Buffer.from(block.data, "base64"),
          label: block.uri ?? `image ${images.length + 1}`,
        });
        break;
      case "resource_link": {
        const file = localFile(block.uri);
        parts.push(
          file !== undefined && isInside(cwd, file) ? fileRef(cwd, file) : `${block.name} (${block.uri})`,
        );
        break;
      }
      case "resource": {
        const { resource } = block;
        const where = localFile(resource.uri);
        const label = where !== undefined ? path.relative(cwd, where) || where : resource.uri;
        if ("text" in resource) {
          parts.push(`[Context: ${label}]\n${fence(resource.text)}`);
        } else if (resource.mimeType?.startsWith("image/")) {
          images.push({ data: Buffer.from(resource.blob, "base64"), label });
        } else {
          throw RequestError.invalidParams(
            { uri: resource.uri },
            `${label} is binary (${resource.mimeType ?? "unknown type"}); yoi takes text and images`,
          );
        }
        break;
      }
      case "audio":
        throw RequestError.invalidParams(
          undefined,
          "yoi does not take audio (promptCapabilities.audio is false)",
        );
    }
  }
  return { text: parts.join("\n\n"), images };
}

function localFile(uri: string): string | undefined {
  if (uri.startsWith("file://")) {
    try {
      return fileURLToPath(uri);
    } catch {
      return undefined;
    }
  }
  return path.isAbsolute(uri) ? uri : undefined;
}

/** `@src/a.ts`, quoted when the path needs it (docs/design/file-refs.md). */
function fileRef(cwd: string, file: string): string {
  const rel = path.relative(cwd, file) || ".";
  return /[\s"\\]/.test(rel) ? `@"${rel.replace(/[\\"]/g, (c) => `\\${c}`)}"` : `@${rel}`;
}
