import { defineTool, inlineOutput, ToolError } from "@yoi/llm-worker";
import { TOOL_OUTPUT_MAX_BYTES } from "@yoi/manifest";
import * as z from "zod";
import { ImageError, imageTypeOfPath } from "../images/image-file.ts";
import { imageLabel, loadImage } from "../images/load-image.ts";
import { type BuiltinToolDeps, guarded } from "./deps.ts";

/** Default lines per read (as Claude Code). */
export const READ_FILE_DEFAULT_LIMIT = 2000;
/** Longest line shown by read_file, in characters. */
export const READ_FILE_MAX_LINE_LENGTH = 2000;

/** The arguments `read_file` takes . */
export const readFileInput = z.object({
  path: z.string().describe("File path, relative to the project root (or absolute inside it)."),
  offset: z.number().int().min(1).optional().describe("1-based line to start at. Default 1."),
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(`Most lines to return. Default ${READ_FILE_DEFAULT_LIMIT}.`),
});

/** `read_file`: numbered lines like `cat -n`, bounded by lines and bytes. */
export function readFileTool(deps: BuiltinToolDeps) {
  return defineTool({
    name: "read_file",
    description:
      "Read a UTF-8 text file. Returns numbered lines (`cat -n` style). Use offset/limit to page through long files; " +
      `output is capped at ${TOOL_OUTPUT_MAX_BYTES} bytes and lines longer than ${READ_FILE_MAX_LINE_LENGTH} characters are cut. ` +
      "PNG, JPEG, GIF and WebP files are returned as images (where the model can see images). Other binary files are refused.",
    inputSchema: readFileInput,
    storeLargeOutput: false,
    async execute({ path, offset, limit }) {
      if (imageTypeOfPath(path) !== undefined) {
        const refusal = deps.imageRefusal?.();
        if (refusal !== undefined) throw new ToolError(`${path} is an image, and ${refusal}.`);
        try {
          const image = await guarded(() => loadImage(deps.view.fs, path));
          return inlineOutput(imageLabel(path, image), {
            images: [{ type: "image", mediaType: image.mediaType, data: image.data }],
          });
        } catch (error) {
          if (ImageError.isInstance(error)) throw new ToolError(error.message);
          throw error;
        }
      }
      const read = await guarded(() =>
        deps.view.readText(path, {
          offset: offset ?? 1,
          limit: limit ?? READ_FILE_DEFAULT_LIMIT,
          maxBytes: TOOL_OUTPUT_MAX_BYTES - 256,
          maxLineLength: READ_FILE_MAX_LINE_LENGTH,
        }),
      );
      deps.reads.record(read.path.real, path, { size: read.size, mtimeMs: read.mtimeMs });
      if (read.size === 0) return `${read.display} is empty (0 bytes).`;
      if (read.lines.length === 0) {
        return `${read.display} has ${read.totalLines ?? "fewer"} lines; offset ${read.firstLine} is past the end.`;
      }
      let out = "";
      read.lines.forEach((line, i) => {
        out += `${String(read.firstLine + i).padStart(6)}\t${line}\n`;
      });
      const last = read.firstLine + read.lines.length - 1;
      if (read.stoppedBy !== "eof") {
        const why = read.stoppedBy === "bytes" ? "output cap reached" : "line limit reached";
        out += `[${why}: showed lines ${read.firstLine}-${last}; continue with offset=${last + 1}]\n`;
      }
      if (read.cutLines > 0)
        out += `[${read.cutLines} long line(s) cut at ${READ_FILE_MAX_LINE_LENGTH} characters]\n`;
      return out;
    },
  });
}
