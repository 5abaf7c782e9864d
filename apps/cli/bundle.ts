/**
 * Bundles the `yoi` executable: `dist/bin.js` plus one chunk per lazily
 * imported command or dependency (`dist/chunks/`). Without it, a run of
 * `yoi -p` resolves and loads several hundred files (our packages, zod, the
 * provider SDKs) before the first request leaves; bundled, module
 * resolution is paid once and Node's compile cache keeps whole chunks.
 * Dynamic `import()` stays a split point, so `--version`, `--help` and
 * print mode still load only what they use.
 *
 *   node bundle.ts [outdir]     (default: dist)
 *
 * `tsc -p tsconfig.build.json` still emits the library entry and its
 * declarations; this step replaces only `dist/bin.js`.
 */
import { readFileSync, rmSync } from "node:fs";
import * as path from "node:path";
import { build, type Plugin } from "esbuild";

const here = import.meta.dirname;
const outdir = path.resolve(here, process.argv[2] ?? "dist");
const pkg = JSON.parse(readFileSync(path.join(here, "package.json"), "utf8")) as {
  version: string;
  dependencies?: Record<string, string>;
};

/**
 * Packages that read their own files at run time (WebAssembly next to
 * their code) and so cannot be inlined. They stay imports, resolved from
 * the CLI's node_modules at run time, so each must be a direct dependency
 * of the CLI. Everything else (our packages, zod, the provider SDKs, the
 * terminal libraries) is inlined; what a command loads lazily stays in a
 * chunk of its own.
 */
const UNBUNDLED = ["web-tree-sitter", "tree-sitter-bash"];
const undeclared = UNBUNDLED.filter((name) => pkg.dependencies?.[name] === undefined);
if (undeclared.length > 0) {
  throw new Error(
    `bundle.ts: ${undeclared.join(", ")} must be dependencies of @yoi/cli (they are left unbundled and resolved from its node_modules)`,
  );
}

/**
 * `@google/genai` imports `google-auth-library` (Vertex AI credentials) at
 * its top level, and evaluating that library and its dependencies took
 * 14 ms of every Gemini session's way to its first request, though yoi's
 * Gemini adapter authenticates with an API key and never constructs it.
 * For the SDK, this plugin puts a stand-in in its place whose `GoogleAuth`
 * loads the real library (still bundled) the first time one is constructed.
 * The SDK uses nothing else of it (checked by test/bundle.test.ts).
 */
const lazyGoogleAuth: Plugin = {
  name: "lazy-google-auth",
  setup(build) {
    build.onResolve({ filter: /^google-auth-library$/ }, (args) =>
      args.importer.includes(`${path.sep}@google${path.sep}genai${path.sep}`)
        ? { path: "google-auth-library", namespace: "yoi-lazy", pluginData: args.resolveDir }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "yoi-lazy" }, (args) => ({
      // Resolved from the SDK's own directory, the require below finds the real library.
      resolveDir: args.pluginData as string,
      loader: "js",
      contents: `let real;
export class GoogleAuth {
  constructor(options) {
    real ??= require("google-auth-library");
    return new real.GoogleAuth(options);
  }
}
`,
    }));
  },
};

// Chunk names carry content hashes: drop the previous build's, or stale ones pile up in the package.
rmSync(path.join(outdir, "chunks"), { recursive: true, force: true });

await build({
  entryPoints: {
    bin: path.join(here, "src", "bin.ts"),
    // A worker thread's module (the pod's image downscaler) must be a file of its own.
    "downscale-worker": "@yoi/pod/images/downscale-worker",
  },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22",
  // Read the workspace's TypeScript sources, as tests and `pnpm yoi` do.
  conditions: ["@yoi/source"],
  // Prefer ESM builds (some dependencies' CommonJS builds require files by computed paths).
  mainFields: ["module", "main"],
  chunkNames: "chunks/[name]-[hash]",
  external: UNBUNDLED,
  define: { __YOI_CLI_VERSION__: JSON.stringify(pkg.version) },
  // CommonJS dependencies inside the bundle still call require().
  banner: {
    js: 'import { createRequire as __yoiRequire } from "node:module"; const require = __yoiRequire(import.meta.url);',
  },
  legalComments: "linked",
  plugins: [lazyGoogleAuth],
  logLevel: "warning",
  sourcemap: false,
});
