/**
 * Bundles the `yoi` executable: `dist/bin.js` (the entry, with `--version`,
 * `--help` and the chunk loader) plus the rest of the CLI split into chunks
 * at each dynamic import (`dist/chunks/`). Without it, a run of `yoi -p`
 * resolves and loads several hundred files (our packages, zod, the
 * provider SDKs) before the first request leaves; bundled, module
 * resolution is paid once, and a command loads only the chunks it uses.
 *
 * The chunks are then rewritten from ES modules into plain scripts, which
 * the chunk loader (src/startup/chunk-loader.ts) runs with V8 code caches taken
 * after the code ran: Node's compile cache holds only top-level code, so
 * every function start-up calls was compiled afresh on every run.
 *
 *   node bundle.ts [outdir]     (default: dist)
 *
 * `tsc -p tsconfig.build.json` still emits the library entry and its
 * declarations; this step replaces only `dist/bin.js`.
 */
import { createHash } from "node:crypto";
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { init as initCjsLexer, parse as parseCommonJs } from "cjs-module-lexer";
import { init as initLexer, parse as parseModule } from "es-module-lexer";
import { type BuildOptions, build, type Plugin, transform } from "esbuild";

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
 * `@google/genai` imports `google-auth-library` (Vertex AI credentials) and
 * `ws` (the Live API's websockets) at its top level. Evaluating them and
 * their dependencies took 14 ms (google-auth-library) and some more (ws,
 * which loads node:https) of every Gemini session's way to its first
 * request, though yoi's Gemini adapter authenticates with an API key and
 * uses neither. For the SDK, this plugin puts a stand-in in the place of
 * each whose one class the SDK uses (`GoogleAuth`, `WebSocket`) loads the
 * real library (still bundled) the first time one is constructed. The SDK
 * uses nothing else of them (checked by test/bundle.test.ts).
 */
const GENAI_LAZY_CLASSES: Record<string, string> = { "google-auth-library": "GoogleAuth", ws: "WebSocket" };
const lazyGenaiImports: Plugin = {
  name: "lazy-genai-imports",
  setup(build) {
    build.onResolve({ filter: /^(google-auth-library|ws)$/ }, (args) =>
      args.importer.includes(`${path.sep}@google${path.sep}genai${path.sep}`)
        ? { path: args.path, namespace: "yoi-lazy", pluginData: args.resolveDir }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "yoi-lazy" }, (args) => {
      const name = GENAI_LAZY_CLASSES[args.path]!;
      return {
        // Resolved from the SDK's own directory, the require below finds the real library.
        resolveDir: args.pluginData as string,
        loader: "js",
        contents: `let real;
export class ${name} {
  constructor(...args) {
    real ??= require(${JSON.stringify(args.path)});
    return new real.${name}(...args);
  }
}
`,
      };
    });
  },
};

/**
 * zod's namespaces re-export all of its locales (some 50, 290 KB of the
 * bundle's zod) for `z.locales`; yoi uses English only, which zod installs
 * itself (it imports `locales/en.js` directly, not through this index).
 * The index is replaced with one that exports English alone, so every run
 * neither reads nor evaluates the rest.
 */
const englishZodLocale: Plugin = {
  name: "english-zod-locale",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic|core|mini)$/.test(args.resolveDir)
        ? { path: path.join(args.resolveDir, "..", "locales", "index.js"), namespace: "yoi-zod-locales" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "yoi-zod-locales" }, (args) => ({
      resolveDir: path.dirname(args.path),
      loader: "js",
      contents: 'export { default as en } from "./en.js";\n',
    }));
  },
};

/**
 * `@hono/zod-openapi` (serve's routes) hands zod's whole namespace to
 * `extendZodWithOpenApi(z)`, which reads only `z.ZodType` from it. A
 * namespace used as a value keeps every one of zod's exports (its JSON
 * Schema importer, its compiler, every schema kind), and esbuild splits
 * chunks by file: the zod files print mode shares with serve then carried
 * all of it, some 180 KB more zod evaluated before every first request. Here
 * the call is given `ZodType` by name, and the package's `z` (which yoi's
 * serve code imports from `zod` instead) is left unused, so zod stays
 * shaken as before. A version whose source no longer has the call fails
 * the build, rather than quietly bringing the cost back.
 */
const ZOD_OPENAPI_NAMESPACE = {
  import: 'import { z } from "zod";',
  call: "extendZodWithOpenApi(z);",
};
const zodOpenApiByName: Plugin = {
  name: "zod-openapi-by-name",
  setup(build) {
    build.onLoad({ filter: /[\\/]@hono[\\/]zod-openapi[\\/]dist[\\/]index\.mjs$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      const { import: from, call } = ZOD_OPENAPI_NAMESPACE;
      if (!source.includes(from) || !source.includes(call))
        throw new Error(`bundle.ts: ${args.path} no longer has \`${call}\`; look at zodOpenApiByName again`);
      return {
        loader: "js",
        contents: source
          .replace(from, 'import * as z from "zod";')
          .replace(call, "extendZodWithOpenApi({ ZodType: z.ZodType });"),
      };
    });
  },
};

/**
 * uuid draws its random bytes from the global `crypto.getRandomValues`
 * (WebCrypto), which loads Node's WebCrypto before every session's first
 * request, for 16 bytes. Its `rng.js` is src/startup/uuid-random.ts here,
 * which reads the kernel's generator; uuid's own v7 keeps its monotonic
 * state.
 */
const uuidRandom: Plugin = {
  name: "uuid-random",
  setup(build) {
    build.onResolve({ filter: /^\.\/rng\.js$/ }, (args) =>
      /[\\/]uuid[\\/]dist(-node)?$/.test(args.resolveDir)
        ? { path: path.join(here, "src", "startup", "uuid-random.ts") }
        : undefined,
    );
  },
};

/**
 * `await import("yaml")` of a CommonJS package gives, in Node, a namespace
 * with `default` (its `module.exports`) and the names Node's CommonJS
 * lexer finds in it (`parseDocument`, ...). esbuild, splitting, puts such a
 * package in a chunk whose only export is `default`, so the same code
 * bundled found `parseDocument` undefined: custom commands, skills and
 * agents with front matter were all skipped by the shipped CLI. Each
 * CommonJS package a dynamic import reaches is given a module here that
 * exports what Node's namespace would: `default`, and each name
 * cjs-module-lexer (the lexer Node itself uses) finds, re-exports followed.
 */
const commonJsNamespaces: Plugin = {
  name: "commonjs-namespaces",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.kind !== "dynamic-import" || args.path.startsWith("node:") || UNBUNDLED.includes(args.path))
        return undefined;
      const resolved = await build.resolve(args.path, {
        kind: "import-statement",
        resolveDir: args.resolveDir,
        importer: args.importer,
      });
      if (resolved.errors.length > 0 || resolved.external || !isCommonJs(resolved.path)) return undefined;
      return { path: resolved.path, namespace: "yoi-cjs-namespace" };
    });
    build.onLoad({ filter: /.*/, namespace: "yoi-cjs-namespace" }, (args) => {
      const names = [...commonJsExportNames(args.path, new Set())].filter((n) => n !== "default");
      const lines = names.map((name, i) => {
        const key = JSON.stringify(name);
        return `const e${i} = cjs[${key}];\nexport { e${i} as ${key} };`;
      });
      return {
        resolveDir: path.dirname(args.path),
        loader: "js",
        // require(): esbuild hands back `module.exports` itself, as Node's `default` is (an import would honour `__esModule`).
        contents: `const cjs = require(${JSON.stringify(args.path)});\nexport default cjs;\n${lines.join("\n")}\n`,
      };
    });
  },
};

/**
 * The provider SDKs and llm-client's adapters send with the CLI's own
 * transport (src/startup/provider-fetch.ts): in each of their ES modules,
 * `fetch`, `Headers`, `Response` and `FormData` are bound to that module's,
 * which send with `node:http(s)`. Node's own are undici, loaded and run
 * whole on first use (of `Headers` too, which the SDKs build for every
 * request): some 40 ms before each `yoi -p` sent its request. Only the
 * names a module uses and does not declare itself are bound, so the rest of
 * the bundle (MCP, telemetry) keeps Node's `fetch`.
 */
const PROVIDER_FETCH = path.join(here, "src", "startup", "provider-fetch.ts");
const PROVIDER_FETCH_NAMES = ["fetch", "Headers", "Response", "FormData"];
const PROVIDER_MODULE =
  /[\\/]node_modules[\\/](?:@anthropic-ai[\\/]sdk|openai|@google[\\/]genai)[\\/].*\.m?js$|[\\/]packages[\\/]llm-client[\\/]src[\\/]adapters[\\/].*\.ts$/;
/**
 * Module-level reads of Node's own `Headers` that would load undici while
 * the SDK evaluates, each taken out. `openai`'s `lib/EventStream.mjs` reads
 * the global's property descriptor to trust its prototype in a size check of
 * queued events (which never hold headers); reading a lazy global's
 * descriptor loads it. The build fails when a pattern is no longer found,
 * so a new SDK version is looked at again.
 */
const UNDICI_READS: { file: RegExp; find: RegExp; replace: string }[] = [
  {
    file: /[\\/]openai[\\/]lib[\\/]EventStream\.mjs$/,
    find: /('File',\s*)'Headers',(\s*\]\)\s*\{\s*const descriptor = Object\.getOwnPropertyDescriptor\(globalThis, name\);)/,
    replace: "$1$2",
  },
];
const providerFetch: Plugin = {
  name: "provider-fetch",
  setup(build) {
    build.onLoad({ filter: PROVIDER_MODULE }, (args) => {
      let source = readFileSync(args.path, "utf8");
      for (const read of UNDICI_READS) {
        if (!read.file.test(args.path)) continue;
        if (!read.find.test(source))
          throw new Error(
            `bundle.ts: ${args.path} no longer reads Node's Headers as expected; see UNDICI_READS`,
          );
        source = source.replace(read.find, read.replace);
      }
      const loader = args.path.endsWith(".ts") ? "ts" : "js";
      if (isCommonJs(args.path)) return { contents: source, loader };
      const declares = (name: string) =>
        new RegExp(
          `\\b(?:class|function|const|let|var)\\s+${name}\\b|\\bimport\\b[^;]*\\b${name}\\b[^;]*\\bfrom\\b`,
        ).test(source);
      const names = PROVIDER_FETCH_NAMES.filter(
        (name) => new RegExp(`(?<![\\w$.])${name}(?![\\w$])`).test(source) && !declares(name),
      );
      // The Stainless SDKs test each request body with `globalThis.ReadableStream` (Node's web streams,
      // loaded on first read): bound too where a module reads it so and has no ReadableStream of its own.
      // A module using the name itself (the Gemini SDK subclasses it) keeps Node's.
      if (source.includes("globalThis.ReadableStream") && !declares("ReadableStream")) {
        source = source.replaceAll("globalThis.ReadableStream", "__yoiReadableStream");
        names.push("ReadableStream as __yoiReadableStream");
      }
      if (names.length === 0) return { contents: source, loader };
      return {
        contents: `import { ${names.join(", ")} } from ${JSON.stringify(PROVIDER_FETCH)};\n${source}`,
        loader,
      };
    });
  },
};

/** Whether a file is CommonJS (no import or export syntax), as esbuild and Node would take it. */
function isCommonJs(file: string): boolean {
  if (file.endsWith(".mjs") || file.endsWith(".mts")) return false;
  if (file.endsWith(".cjs")) return true;
  try {
    const [, , , hasModuleSyntax] = parseModule(readFileSync(file, "utf8"), file);
    return !hasModuleSyntax;
  } catch {
    return false; // not JavaScript es-module-lexer can read: left to esbuild as it is
  }
}

/** The export names Node gives a CommonJS module's namespace: its own, and those of what it re-exports. */
function commonJsExportNames(file: string, seen: Set<string>): Set<string> {
  const names = new Set<string>();
  if (seen.has(file)) return names;
  seen.add(file);
  const { exports, reexports } = parseCommonJs(readFileSync(file, "utf8"), file);
  for (const name of exports) names.add(name);
  const require = createRequire(file);
  for (const specifier of reexports) {
    let target: string;
    try {
      target = require.resolve(specifier);
    } catch {
      continue; // Node skips a re-export it cannot resolve as well
    }
    if (target.endsWith(".js") || target.endsWith(".cjs"))
      for (const name of commonJsExportNames(target, seen)) names.add(name);
  }
  return names;
}

await Promise.all([initLexer, initCjsLexer()]);

// Chunk names carry content hashes: drop the previous build's, or stale ones pile up in the package.
rmSync(path.join(outdir, "chunks"), { recursive: true, force: true });

const common = {
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node22",
  // Read the workspace's TypeScript sources, as tests and `pnpm yoi` do.
  conditions: ["@yoi/source"],
  // Prefer ESM builds (some dependencies' CommonJS builds require files by computed paths).
  mainFields: ["module", "main"],
  external: UNBUNDLED,
  define: { __YOI_CLI_VERSION__: JSON.stringify(pkg.version) },
  legalComments: "linked",
  logLevel: "warning",
  sourcemap: false,
} satisfies BuildOptions;

/*
 * The CLI proper: `chunks/main.js` and everything it imports, split at each
 * dynamic import as usual, then rewritten from modules into scripts for the
 * chunk loader (src/startup/chunk-loader.ts), whose code caches are taken
 * after the code ran. The start-up trace is an entry of its own so that
 * bin.js and the commands share one instance of it.
 */
await build({
  ...common,
  entryPoints: {
    main: path.join(here, "src", "main.ts"),
    "startup-trace": path.join(here, "src", "startup", "trace.ts"),
  },
  outdir: path.join(outdir, "chunks"),
  splitting: true,
  entryNames: "[name]",
  chunkNames: "[name]-[hash]",
  plugins: [
    commonJsNamespaces,
    lazyGenaiImports,
    englishZodLocale,
    uuidRandom,
    zodOpenApiByName,
    providerFetch,
  ],
});
const chunkFiles = readdirSync(path.join(outdir, "chunks")).filter((f) => f.endsWith(".js"));
const buildHash = createHash("sha256");
for (const name of chunkFiles.sort()) {
  const file = path.join(outdir, "chunks", name);
  const script = await toChunkScript(readFileSync(file, "utf8"), name);
  writeFileSync(file, script);
  buildHash.update(name).update(script);
}

/*
 * A worker thread's module must be a file of its own, with what it imports inside: the pod's image
 * downscaler and the grep matcher (of the `grep` and `tool_output_cache_grep` tools). Each is found at
 * the bundle's root, one level above the chunk its caller sits in.
 */
await build({
  ...common,
  entryPoints: { "downscale-worker": "@yoi/pod/images/downscale-worker" },
  outdir,
  // CommonJS dependencies inside the bundle still call require().
  banner: {
    js: 'import { createRequire as __yoiRequire } from "node:module"; const require = __yoiRequire(import.meta.url);',
  },
});
await build({
  ...common,
  entryPoints: { "grep-matcher-worker": "@yoi/compaction/grep-matcher-worker" },
  outdir,
});

/**
 * Node's built-in modules, for `bin.js`, taken with `process.getBuiltinModule`
 * rather than imported. A static `import` of a built-in gives it an ES module
 * face, which reads every export: for `node:fs` that loads `fs.promises`
 * and its dependencies before the first line of `bin.js` runs (1-4 ms here),
 * which `--version` paid in full. (The chunks are scripts and `require`
 * their built-ins, which has no such cost.)
 */
const builtinsAtRunTime: Plugin = {
  name: "builtins-at-run-time",
  setup(build) {
    build.onResolve({ filter: /^node:/ }, (args) => ({ path: args.path, namespace: "yoi-builtin" }));
    build.onLoad({ filter: /.*/, namespace: "yoi-builtin" }, (args) => ({
      loader: "js",
      contents: `module.exports = process.getBuiltinModule(${JSON.stringify(args.path)});`,
    }));
  },
};

/**
 * The first two lines of `bin.js`: a shell script that starts `node` on the
 * file itself with a larger young generation, and to JavaScript a hashbang,
 * a string and a comment. A `yoi -p` run allocates some 15 MB before its
 * first request and keeps nearly all of it (modules, schemas, the SDK);
 * V8's young generation starts at 1 MB, so the run made six scavenges that
 * copied what survives, some 6 ms, and an OpenAI run a 9 ms one between
 * calling `fetch` and writing the request (docs/cli-startup.md).
 *
 * Print mode (`-p` or `--print` among the arguments, as the chunk loader's
 * kind of run reads them) starts with 16 MB semi-spaces, the 32 MB young
 * generation that `src/young-generation.ts` caps a session at: no scavenge
 * before the first request (4.6 ms sooner warm, 5.9 ms cold), and a long
 * print session scavenges at the cap's pace from its first turn instead of
 * growing to it (CPU per turn 7.8 -> 6.0-7.0 ms in the long-session bench, peak
 * RSS the same). A single long answer may touch the whole young generation
 * (+16 MB RSS for a 24 KB answer in 6,000 deltas). Every other run starts
 * at 4 MB: an interactive session renders as it streams, and a 32 MB
 * nursery made that rendering some 19% more CPU (`pnpm bench render-cpu`),
 * where 4 MB gives two scavenges before the prompt and nothing more.
 *
 * The heap size flags are not in the hash V8 stamps code caches with, so
 * the code packs and Node's own built-in caches are taken either way.
 * `#!/usr/bin/env -S` could carry one flag, but BusyBox's env has no `-S`;
 * every POSIX shell runs this (its two variables are named so that no
 * environment carries them). `node bin.js` (the tests, `pnpm yoi`) reads
 * both lines as JavaScript and runs without a flag.
 */
const LAUNCHER = `#!/usr/bin/env sh
":" //; __yoi_semi=4; for __yoi_arg in "$@"; do case $__yoi_arg in -p|--print) __yoi_semi=16;; esac; done; exec node --min-semi-space-size=$__yoi_semi "$0" "$@"`;

// `bin.js`, written last (fresh-bundle.ts takes its time as the build's): one small module (no splitting) holding the chunk loader; `--version` and `--help` load nothing else.
await build({
  ...common,
  entryPoints: { bin: path.join(here, "src", "bin.ts") },
  outdir,
  banner: { js: LAUNCHER },
  define: { ...common.define, __YOI_BUILD_ID__: JSON.stringify(buildHash.digest("hex").slice(0, 16)) },
  plugins: [builtinsAtRunTime],
});
// An executable, as npm makes it when it installs the package: the benchmarks and tests run it as users do.
chmodSync(path.join(outdir, "bin.js"), 0o755);

/**
 * A built-in module that a chunk reads only by name is required when one
 * of those names is first read, through the loader's `__yoiBuiltin`.
 * esbuild turns `import { createHash } from "node:crypto"` into
 * `var import_node_crypto=require("node:crypto")` at the top of the chunk
 * and `import * as path from "node:path"` into
 * `var path=__toESM(require("node:path"))`, which also copies a getter for
 * every export of the module into a new object (print mode's chunks did so
 * 47 times for `node:path` alone). So every built-in a chunk named was
 * loaded with it, used or not: `node:crypto` alone takes some 5 ms to load,
 * `node:worker_threads` and `node:v8` about 1 ms each, and print mode
 * needs none of them before its first request. A variable read any other
 * way (passed on whole, or its `default`) keeps what esbuild wrote.
 */
function lazyBuiltins(code: string): string {
  const declaration = /\bvar ([\w$]+)=(?:require|__toESM\(require)\("(node:[\w/]+)"\)\)?;/g;
  const declared = new Set([...code.matchAll(declaration)].map((m) => m[1]!));
  // Every read of each such variable but its declaration: the name it reads, or null.
  const reads = new Map<string, (string | null)[]>();
  for (const use of code.matchAll(/(?<![\w$.])([\w$]+)(?![\w$])(=(?:require|__toESM)\(|\.[\w$]+)?/g)) {
    const [, name, after] = use as unknown as [string, string, string | undefined];
    if (!declared.has(name) || after?.startsWith("=")) continue;
    const list = reads.get(name) ?? [];
    list.push(after?.slice(1) ?? null);
    reads.set(name, list);
  }
  return code.replace(declaration, (whole, name: string, specifier: string) => {
    const names = reads.get(name) ?? [];
    // A namespace's own names are the module's: `__toESM` adds only `default`.
    if (names.length === 0 || names.includes(null) || names.includes("default")) return whole;
    return `var ${name}=__yoiBuiltin(${JSON.stringify(specifier)},${JSON.stringify([...new Set(names)])});`;
  });
}

/**
 * One chunk, as esbuild wrote it (an ES module), as the script the chunk
 * loader runs: `import()` and `import.meta` become the loader's
 * `__yoiImport` and `__yoiMeta` (found by es-module-lexer, which knows a
 * string or a regular expression from code), then esbuild turns the static
 * imports and exports into `require` and `module.exports`, and the whole is
 * wrapped in the function the loader calls. Chunks refer to one another as
 * `./<name>.js`, which the loader's `require` and `__yoiImport` load.
 */
async function toChunkScript(code: string, name: string): Promise<string> {
  const [imports] = parseModule(code, name);
  let out = "";
  let at = 0;
  for (const imp of imports) {
    if (imp.d === -1) continue; // a static import: esbuild's transform below
    out += code.slice(at, imp.ss);
    if (imp.d === -2) {
      out += "__yoiMeta";
      at = imp.ss + "import.meta".length;
    } else {
      out += "__yoiImport";
      at = imp.ss + "import".length;
    }
  }
  out += code.slice(at);
  const { code: cjs } = await transform(out, {
    format: "cjs",
    platform: "node",
    target: "node22",
    loader: "js",
    sourcefile: name,
    // ASCII only, comments dropped (some are not ASCII): a chunk is then read as a one-byte string,
    // half the memory of a two-byte one and some 3 ms sooner on the way to the first request.
    charset: "ascii",
    minifyWhitespace: true,
  });
  // The loader reads chunks as Latin-1, which is UTF-8 only while every byte is ASCII. esbuild escaped
  // strings, templates and identifiers, but leaves non-ASCII characters in regular expression literals
  // (markdown-it has one): there a \uXXXX escape of each UTF-16 unit means the same.
  const body = lazyBuiltins(
    cjs.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`),
  );
  const script = `(function (exports, require, module, __yoiImport, __yoiMeta, __yoiBuiltin) {"use strict";${body}\n})`;
  // Nothing of a module may be left: the loader runs scripts, where `import` would be a syntax error.
  const [left] = parseModule(script, name);
  if (left.length > 0)
    throw new Error(`bundle.ts: ${name} still has ${left.length} import(s) after the rewrite`);
  return script;
}
