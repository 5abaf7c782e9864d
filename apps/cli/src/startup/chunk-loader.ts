/**
 * Loads the bundle's chunks (`dist/chunks`, written by bundle.ts as one
 * function-wrapped script each) with V8 code caches taken after the code
 * ran. Node's own compile cache (used for `bin.js`) is taken right after a
 * module is compiled, so it holds only top-level code: every function that
 * start-up calls (zod, the provider SDK, the pod) was parsed and compiled
 * again on every run, 40-50 ms before the first request. A cache taken at
 * exit holds those functions too.
 *
 * Caches live in `$XDG_CACHE_HOME/yoi/code/<node>-<arch>-<build>/` (default
 * `~/.cache/yoi`), in one code pack per kind of run (print, interactive, a
 * subcommand; see code-pack.ts, and docs/cli-startup.md): the chunks such a run loaded, each with
 * its source and cache, read with one call. A cache is checked by a CRC
 * before V8 sees it; V8 then checks its own version, flags and the source's
 * length, and a cache it rejects is simply not used. The pack is written
 * at exit when a chunk this run loaded had no accepted cache in it (some
 * 15 ms, never before the first request), keeping the other chunks it held;
 * so each kind caches what it compiles. `NODE_DISABLE_COMPILE_CACHE=1`
 * (Node's switch for its own cache) turns this one off as well; an
 * unwritable cache directory only means no cache.
 *
 * V8 stamps each cache with a hash of its flags and refuses one made under
 * other flags. A flag set while the process runs (the young-generation
 * bound does so in sessions that grow, ../young-generation.ts) changes that
 * hash for every cache made afterwards, so a pack written at such a run's
 * exit would be refused, whole, by the next start: it would start as slowly
 * as the first run after an install. The module that sets a flag says so
 * first (flags-event.ts), and the pack is written then, with what the run
 * compiled so far; a pack is never written after a flag changed.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import vm from "node:vm";
import { yoiCacheDir } from "@yoi/manifest";
import { type ChunkToPack, type PackedChunk, parseCodePack, writeCodePack } from "./code-pack.ts";
import { BEFORE_V8_FLAGS_EVENT } from "./flags-event.ts";

/** What bundle.ts wraps each chunk's code in: `(function (exports, require, module, __yoiImport, __yoiMeta, __yoiBuiltin) {...})`. */
type ChunkFunction = (
  exports: unknown,
  require: NodeJS.Require,
  module: { exports: unknown },
  importChunk: (specifier: string) => Promise<unknown>,
  meta: { url: string; filename: string; dirname: string },
  builtin: typeof builtinByName,
) => void;

/**
 * A built-in module that a chunk reads only `names` of, loaded when one of
 * them is first read (bundle.ts rewrites such a chunk's `require` into
 * this): what start-up never calls, it never loads.
 */
function builtinByName(specifier: string, names: readonly string[]): object {
  let loaded: Record<string, unknown> | undefined;
  const module = () => {
    loaded ??= process.getBuiltinModule(specifier) as Record<string, unknown>;
    return loaded;
  };
  const face = {};
  for (const name of names)
    Object.defineProperty(face, name, { enumerable: true, get: () => module()[name] });
  return face;
}

interface LoadedChunk {
  /** Read at each load, as Node's require does: esbuild's scripts replace `module.exports` first thing. */
  module: { exports: unknown };
  script: vm.Script;
  source: string;
  /** The chunk file's size and mtime, which a packed source must match. */
  size: number;
  mtimeMs: number;
  /** True when V8 took the cache this run. */
  cached: boolean;
  /** True when the pack on disk holds a good cache of it: no write is needed for this chunk's sake. */
  packed: boolean;
}
/** Build directories of other versions not used for this long are removed when a cache is written. */
const STALE_MS = 30 * 24 * 60 * 60 * 1000;

export interface ChunkLoaderStats {
  /** Chunks loaded so far. */
  loaded: number;
  /** Of those, how many V8 took a code cache for. */
  cached: number;
}

export interface ChunkLoader {
  /** Loads (once) and returns the exports of `chunks/<name>`. */
  load(name: string): unknown;
  stats(): ChunkLoaderStats;
}

/**
 * @param chunksDir the bundle's `chunks` directory
 * @param buildId identifies the build (a hash of all chunks); caches of other builds are never read
 * @param runKind what kind of run this is (`print`, `interactive`, a subcommand): each kind refreshes the caches once
 */
export function createChunkLoader(chunksDir: string, buildId: string, runKind: string): ChunkLoader {
  const chunks = new Map<string, LoadedChunk>();
  /** Made under the flags this run started with: V8 still takes it at exit unless a flag changed since. */
  let witness: FlagsWitness | undefined;
  const cacheDir = trustedDir(codeCacheDir(buildId));
  const packFile = cacheDir && path.join(cacheDir, `${runKind}.pack`);
  const pack = packFile ? readPack(packFile) : undefined;

  // One require and one import for every chunk: they all live in `chunksDir`, so each resolves the same.
  const real = createRequire(chunksDir + path.sep);
  const require = Object.assign(
    (specifier: string) => (isChunk(specifier) ? load(specifier.slice(2)) : real(specifier)),
    real,
  ) as NodeJS.Require;
  const importChunk = (specifier: string): Promise<unknown> =>
    isChunk(specifier)
      ? Promise.resolve().then(() => load(specifier.slice(2)))
      : // Anything else (a package left unbundled, a user's extension) goes to Node's loader, resolved from here.
        import(
          specifier.startsWith(".") ? new URL(specifier, pathToFileURL(chunksDir + path.sep)).href : specifier
        );

  const load = (name: string): unknown => {
    const known = chunks.get(name);
    // A chunk still running (a cycle between chunks) gives what it has exported so far, as in Node.
    if (known) return known.module.exports;
    const file = path.join(chunksDir, name);
    const { size, mtimeMs } = statSync(file);
    // The packed source and cache, while the chunk file is the one they were taken from.
    const packed = pack?.get(name);
    const current = packed !== undefined && packed.size === size && packed.mtimeMs === mtimeMs;
    // bundle.ts writes chunks in ASCII: read as Latin-1 (the same text), a one-byte string without UTF-8 decoding.
    const source = current ? packed.source() : readFileSync(file, "latin1");
    const cachedData = current ? packed.cache() : undefined;
    const script = new vm.Script(source, { filename: file, ...(cachedData ? { cachedData } : {}) });
    const module = { exports: {} as unknown };
    const cached = cachedData !== undefined && !script.cachedDataRejected;
    const chunk: LoadedChunk = { module, script, source, size, mtimeMs, cached, packed: cached };
    chunks.set(name, chunk);
    // The first chunk loads before anything can set a flag: its cache, or (when it had none) a small one made now.
    if (cacheDir) witness ??= chunk.cached && cachedData ? { source, cache: cachedData } : startWitness();
    // `import.meta` of the chunk; its URL is worked out when read (few chunks read it).
    const meta = {
      get url() {
        return pathToFileURL(file).href;
      },
      filename: file,
      dirname: chunksDir,
    };
    try {
      const fn = script.runInThisContext() as ChunkFunction;
      fn(module.exports, require, module, importChunk, meta, builtinByName);
    } catch (error) {
      // As Node's require does: a chunk that failed is not kept half-done; the next load tries again.
      chunks.delete(name);
      throw error;
    }
    return module.exports;
  };

  if (cacheDir && packFile) {
    const save = () => {
      savePack(cacheDir, packFile, chunks, pack, witness);
      // What the pack now holds needs no second write at exit (and one after a flag change is refused, see above).
      for (const chunk of chunks.values()) chunk.packed = true;
    };
    process.once(BEFORE_V8_FLAGS_EVENT, save);
    process.once("exit", save);
  }

  return {
    load,
    stats: () => ({
      loaded: chunks.size,
      cached: [...chunks.values()].filter((c) => c.cached).length,
    }),
  };
}

/** A code cache and its source, made under the flags the process started with. */
interface FlagsWitness {
  source: string;
  cache: Buffer;
}

/** Each check compiles under its own name: V8 would otherwise answer from its in-memory cache and never look at the data. */
const WITNESS_NAME = "yoi:code-cache-flags";
let checks = 0;

function startWitness(): FlagsWitness {
  const source = "0";
  return { source, cache: new vm.Script(source, { filename: WITNESS_NAME }).createCachedData() };
}

/** True when V8 now refuses the witness: a flag changed since it was made, and so would every cache made now. */
function flagsChanged(witness: FlagsWitness): boolean {
  const filename = `${WITNESS_NAME}-${++checks}`;
  return new vm.Script(witness.source, { filename, cachedData: witness.cache }).cachedDataRejected === true;
}

/** `./name.js` as bundle.ts writes references between chunks (all in one directory). */
function isChunk(specifier: string): boolean {
  return specifier.startsWith("./") && specifier.endsWith(".js") && !specifier.includes("/", 2);
}

/** `<yoi's cache dir>/code/<node>-<arch>-<build>`, or undefined when caching is off or there is no home. */
function codeCacheDir(buildId: string): string | undefined {
  if (process.env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const base = yoiCacheDir();
  return base && path.join(base, "code", `${process.version}-${process.arch}-${buildId}`);
}

/**
 * The cache directory, unless it or its parent exists and belongs to
 * someone else or can be written by others: a code cache is code, and one
 * planted there would run as this user. Missing directories are made 0700.
 */
function trustedDir(dir: string | undefined): string | undefined {
  if (!dir) return undefined;
  const uid = process.getuid?.();
  for (const d of [path.dirname(dir), dir]) {
    let info: ReturnType<typeof statSync>;
    try {
      info = statSync(d);
    } catch {
      continue;
    }
    if ((uid !== undefined && info.uid !== uid) || (info.mode & 0o022) !== 0) return undefined;
  }
  return dir;
}

/** The chunks of this kind's pack, or undefined when there is none or it does not parse (then compiled afresh). */
function readPack(file: string): Map<string, PackedChunk> | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  return parseCodePack(bytes);
}

/**
 * At exit: when a chunk this run loaded had no cache V8 took, writes the
 * pack again with every loaded chunk's source and a cache taken now, and
 * the other chunks the old pack held (with a cache whose CRC holds); not
 * when a V8 flag changed while the run went on (the caches taken now would
 * be refused). Never throws: a pack that cannot be written only means the
 * next run compiles again.
 */
function savePack(
  cacheDir: string,
  packFile: string,
  chunks: Map<string, LoadedChunk>,
  old: Map<string, PackedChunk> | undefined,
  witness: FlagsWitness | undefined,
): void {
  try {
    if ([...chunks.values()].every((c) => c.packed)) return;
    if (witness !== undefined && flagsChanged(witness)) return;
    const entries: ChunkToPack[] = [...chunks].map(([name, c]) => ({
      name,
      size: c.size,
      mtimeMs: c.mtimeMs,
      source: c.source,
      cache: c.script.createCachedData(),
    }));
    for (const [name, packed] of old ?? []) {
      const cache = chunks.has(name) ? undefined : packed.cache();
      if (cache === undefined) continue;
      entries.push({
        name,
        size: packed.size,
        mtimeMs: packed.mtimeMs,
        source: packed.source(),
        cache,
        carried: true,
      });
    }
    mkdirSync(path.dirname(cacheDir), { recursive: true, mode: 0o700 });
    mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    writeCodePack(packFile, entries);
    removeStaleBuilds(cacheDir);
  } catch {
    // Read-only or full disk: no cache this time.
  }
}

/** Removes the cache directories of other builds and Node versions that no run has written for 30 days. */
function removeStaleBuilds(current: string): void {
  const parent = path.dirname(current);
  const now = Date.now();
  for (const name of readdirSync(parent)) {
    const dir = path.join(parent, name);
    if (dir === current) continue;
    try {
      if (now - statSync(dir).mtimeMs > STALE_MS) rmSync(dir, { recursive: true, force: true });
    } catch {}
  }
}
