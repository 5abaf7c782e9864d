/** Types of scripts/layers.mjs (the package layers of docs/architecture.md). */
export declare const LAYERS: readonly (readonly string[])[];
export declare function allowedImports(name: string): string[];
