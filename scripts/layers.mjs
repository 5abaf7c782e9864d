/**
 * The package layers, bottom first: the single source of the layering rule
 * that docs/architecture.md ("Packages and layers") explains. A package may
 * import any package in a lower layer and nothing in its own or a higher
 * one, so the sideways pair (worker-persistence, compaction) never import
 * each other. Read by `.dependency-cruiser.mjs` (imports) and
 * `scripts/check-layering.ts` (declared dependencies).
 */
export const LAYERS = [
  ["@yoi/manifest"],
  ["@yoi/llm-client"],
  ["@yoi/timeline"],
  ["@yoi/llm-worker"],
  ["@yoi/worker-persistence", "@yoi/compaction"],
  ["@yoi/pod"],
  ["@yoi/cli"],
];

/**
 * Edges a lower layer would allow but the page's picture does not draw: the
 * sideways pair sits on llm-worker's ports (BlobStore, ContextPolicy,
 * worker events) and never on the timeline's dispatch.
 */
export const NOT_DRAWN = {
  "@yoi/worker-persistence": ["@yoi/timeline"],
  "@yoi/compaction": ["@yoi/timeline"],
};

/**
 * The workspace packages `name` may import.
 * @param {string} name
 * @returns {string[]}
 */
export function allowedImports(name) {
  const layer = LAYERS.findIndex((names) => names.includes(name));
  if (layer < 0)
    throw new Error(
      `${name} is in no layer of scripts/layers.mjs: add it to a layer there and to the picture in docs/architecture.md`,
    );
  const excluded = NOT_DRAWN[name] ?? [];
  return LAYERS.slice(0, layer)
    .flat()
    .filter((other) => !excluded.includes(other));
}
