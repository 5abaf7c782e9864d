/**
 * The UI's heavy modules in one lazy import: Markdown (markdown-it), code
 * highlighting (Prism, through refractor), diffs (jsdiff). The interactive session
 * loads this in the background once its prompt is up; `--version`,
 * `--help` and print mode never do.
 */
export { type DiffView, renderDiff, snapshotFile } from "./file-diff.ts";
export { highlightCode } from "./markdown/highlight-code.ts";
export { lexMarkdown, markdownLines, renderTokens } from "./markdown/render-markdown.ts";

/** The shape of this module, for code that holds it once loaded. */
export type RichOutput = typeof import("./rich-output.ts");
