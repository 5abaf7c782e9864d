/**
 * Syntax colours for code blocks, by language: Prism's grammars for some
 * 40 common languages (the C family, Go, Rust, Java, Kotlin, Swift,
 * JavaScript and TypeScript with JSX, Python, Ruby, PHP, shell, SQL, JSON,
 * YAML, TOML, HTML/XML, CSS, Markdown, diff ...), painted in the theme's
 * colours (through yoi's Style, so they follow the theme and yoi's colour
 * decision). Prism's token stream is painted directly: no HTML is written
 * to be parsed back.
 *
 * Why Prism (highlight.js before it): each `yoi` is a new process, so what
 * a highlighter costs the first time it colours a language is paid on
 * every answer with code. highlight.js compiles a grammar into large
 * combined regular expressions before its first block (some 13 ms of CPU
 * for TypeScript); Prism's grammars are tables of expressions, each
 * compiled when first tried. The figures are in docs/cli-render-cost.md.
 *
 * Each grammar is a CommonJS module that adds itself to the `Prism` global
 * (Prism's core sets it) and expects the grammars it builds on to be there
 * already. They are required when a block first asks for one, with those
 * first: evaluating all of them up front would cost more than colouring a
 * long answer (some 38 ms). The `require` calls name each module, so the
 * bundle carries them (run when called).
 */

import type { Style } from "../../style.ts";

/** A token of Prism's stream: its type, what it holds, and the aliases it may be coloured by instead. */
interface Token {
  type: string;
  content: string | Token | (string | Token)[];
  alias?: string | string[];
}

/** What is used of Prism's core. */
interface PrismCore {
  languages: Record<string, unknown>;
  tokenize(text: string, grammar: unknown): (string | Token)[];
  hooks: { run(name: string, env: Record<string, unknown>): void };
}

const prism = require("prismjs/components/prism-core.js") as PrismCore;

/** Each grammar by its name: the grammars it builds on, and how its module is run (once: it registers itself). */
const GRAMMARS: Record<string, { needs?: readonly string[]; load: () => unknown }> = {
  markup: { load: () => require("prismjs/components/prism-markup.js") },
  css: { load: () => require("prismjs/components/prism-css.js") },
  clike: { load: () => require("prismjs/components/prism-clike.js") },
  javascript: { needs: ["clike"], load: () => require("prismjs/components/prism-javascript.js") },
  bash: { load: () => require("prismjs/components/prism-bash.js") },
  c: { needs: ["clike"], load: () => require("prismjs/components/prism-c.js") },
  cpp: { needs: ["c"], load: () => require("prismjs/components/prism-cpp.js") },
  csharp: { needs: ["clike"], load: () => require("prismjs/components/prism-csharp.js") },
  diff: { load: () => require("prismjs/components/prism-diff.js") },
  go: { needs: ["clike"], load: () => require("prismjs/components/prism-go.js") },
  graphql: { load: () => require("prismjs/components/prism-graphql.js") },
  ini: { load: () => require("prismjs/components/prism-ini.js") },
  java: { needs: ["clike"], load: () => require("prismjs/components/prism-java.js") },
  json: { load: () => require("prismjs/components/prism-json.js") },
  jsx: { needs: ["markup", "javascript"], load: () => require("prismjs/components/prism-jsx.js") },
  kotlin: { needs: ["clike"], load: () => require("prismjs/components/prism-kotlin.js") },
  less: { needs: ["css"], load: () => require("prismjs/components/prism-less.js") },
  lua: { load: () => require("prismjs/components/prism-lua.js") },
  makefile: { load: () => require("prismjs/components/prism-makefile.js") },
  markdown: { needs: ["markup"], load: () => require("prismjs/components/prism-markdown.js") },
  "markup-templating": {
    needs: ["markup"],
    load: () => require("prismjs/components/prism-markup-templating.js"),
  },
  objectivec: { needs: ["c"], load: () => require("prismjs/components/prism-objectivec.js") },
  perl: { load: () => require("prismjs/components/prism-perl.js") },
  php: { needs: ["markup-templating"], load: () => require("prismjs/components/prism-php.js") },
  python: { load: () => require("prismjs/components/prism-python.js") },
  r: { load: () => require("prismjs/components/prism-r.js") },
  ruby: { needs: ["clike"], load: () => require("prismjs/components/prism-ruby.js") },
  rust: { load: () => require("prismjs/components/prism-rust.js") },
  scss: { needs: ["css"], load: () => require("prismjs/components/prism-scss.js") },
  "shell-session": { needs: ["bash"], load: () => require("prismjs/components/prism-shell-session.js") },
  sql: { load: () => require("prismjs/components/prism-sql.js") },
  swift: { load: () => require("prismjs/components/prism-swift.js") },
  toml: { load: () => require("prismjs/components/prism-toml.js") },
  tsx: { needs: ["jsx", "typescript"], load: () => require("prismjs/components/prism-tsx.js") },
  typescript: { needs: ["javascript"], load: () => require("prismjs/components/prism-typescript.js") },
  basic: { load: () => require("prismjs/components/prism-basic.js") },
  vbnet: { needs: ["basic"], load: () => require("prismjs/components/prism-vbnet.js") },
  wasm: { load: () => require("prismjs/components/prism-wasm.js") },
  yaml: { load: () => require("prismjs/components/prism-yaml.js") },
};

/** The other names code fences use for them (`shell` is bash's: commands, as fences mean it). */
const ALIASES: Record<string, string> = {
  sh: "bash",
  shell: "bash",
  zsh: "bash",
  h: "c",
  cc: "cpp",
  "c++": "cpp",
  "h++": "cpp",
  hpp: "cpp",
  hh: "cpp",
  hxx: "cpp",
  cxx: "cpp",
  cs: "csharp",
  "c#": "csharp",
  dotnet: "csharp",
  patch: "diff",
  golang: "go",
  gql: "graphql",
  jsp: "java",
  js: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  jsonc: "json",
  json5: "json",
  webmanifest: "json",
  kt: "kotlin",
  kts: "kotlin",
  mk: "makefile",
  mak: "makefile",
  make: "makefile",
  md: "markdown",
  mkdown: "markdown",
  mkd: "markdown",
  html: "markup",
  xml: "markup",
  svg: "markup",
  mathml: "markup",
  ssml: "markup",
  atom: "markup",
  rss: "markup",
  xhtml: "markup",
  xjb: "markup",
  xsd: "markup",
  xsl: "markup",
  plist: "markup",
  wsf: "markup",
  mm: "objectivec",
  objc: "objectivec",
  "obj-c": "objectivec",
  "obj-c++": "objectivec",
  "objective-c++": "objectivec",
  pl: "perl",
  pm: "perl",
  "php-template": "php",
  py: "python",
  gyp: "python",
  ipython: "python",
  pycon: "python",
  rb: "ruby",
  gemspec: "ruby",
  podspec: "ruby",
  thor: "ruby",
  irb: "ruby",
  rs: "rust",
  console: "shell-session",
  shellsession: "shell-session",
  "sh-session": "shell-session",
  ts: "typescript",
  mts: "typescript",
  cts: "typescript",
  vb: "vbnet",
  yml: "yaml",
};

/** Runs the module of `name` (and of those it builds on) unless Prism has its grammar already. */
function register(name: string): void {
  if (prism.languages[name] !== undefined) return;
  const grammar = GRAMMARS[name]!;
  for (const need of grammar.needs ?? []) register(need);
  grammar.load();
}

/**
 * The name of `lang`'s grammar, registered now if it is not yet, or
 * undefined. Markup goes first, before any other grammar: JavaScript and
 * CSS add themselves to HTML's `<script>` and `<style>` only when they
 * find it registered, and asked for HTML, both are registered with it.
 */
function language(lang: string): string | undefined {
  const lower = lang.toLowerCase();
  const name = Object.hasOwn(GRAMMARS, lower) ? lower : ALIASES[lower];
  if (name === undefined) return undefined;
  register("markup");
  register(name);
  if (name === "markup") {
    register("css");
    register("javascript");
  }
  return name;
}

type Paint = (text: string) => string;

/** The last theme made, and for which style and theme name: a theme is made once, not for every block. */
let made: { style: Style; theme: string; paints: Record<string, Paint | undefined> } | undefined;

/** Prism's token types (and aliases) → the Style's colours. */
function themeOf(s: Style): Record<string, Paint | undefined> {
  if (made?.style !== s || made.theme !== s.theme) made = { style: s, theme: s.theme, paints: paintsOf(s) };
  return made.paints;
}

function paintsOf(s: Style): Record<string, Paint | undefined> {
  return {
    keyword: s.magenta,
    atrule: s.magenta,
    selector: s.magenta,
    builtin: s.cyan,
    "class-name": s.cyan,
    namespace: s.cyan,
    property: s.cyan,
    "literal-property": s.cyan,
    "attr-name": s.cyan,
    key: s.cyan,
    boolean: s.blue,
    constant: s.blue,
    null: s.blue,
    nil: s.blue,
    tag: s.blue,
    url: s.blue,
    number: s.yellow,
    symbol: s.yellow,
    function: s.yellow,
    hexcode: s.yellow,
    color: s.yellow,
    unit: s.yellow,
    string: s.green,
    char: s.green,
    "attr-value": s.green,
    regex: s.red,
    variable: s.red,
    comment: s.gray,
    prolog: s.gray,
    doctype: s.gray,
    cdata: s.gray,
    decorator: s.gray,
    annotation: s.gray,
    coord: s.gray,
    inserted: s.green,
    deleted: s.red,
    title: s.bold,
    section: s.bold,
    important: s.bold,
    bold: s.bold,
    italic: s.italic,
  };
}

/** The colour of a token: its type's, else its first alias's the theme knows, else the enclosing one's. */
function colourOf(token: Token, theme: Record<string, Paint | undefined>, around: Paint | undefined) {
  const own = Object.hasOwn(theme, token.type) ? theme[token.type] : undefined;
  if (own !== undefined) return own;
  const aliases =
    token.alias === undefined ? [] : typeof token.alias === "string" ? [token.alias] : token.alias;
  for (const alias of aliases) if (Object.hasOwn(theme, alias)) return theme[alias];
  return around;
}

/** The tokens painted by `theme`, each line on its own (a code block's lines are drawn one by one). */
function paint(
  tokens: string | Token | (string | Token)[],
  theme: Record<string, Paint | undefined>,
  around: Paint | undefined,
): string {
  if (Array.isArray(tokens)) {
    let out = "";
    for (const token of tokens) out += paint(token, theme, around);
    return out;
  }
  if (typeof tokens !== "string") return paint(tokens.content, theme, colourOf(tokens, theme, around));
  if (around === undefined || tokens === "") return tokens;
  if (!tokens.includes("\n")) return around(tokens);
  return tokens
    .split("\n")
    .map((line) => (line === "" ? line : around(line)))
    .join("\n");
}

/** Colours `code` when its language is known; undefined otherwise (shown plain). */
export function highlightCode(code: string, lang: string | undefined, style: Style): string | undefined {
  const name = style.enabled && lang !== undefined ? language(lang) : undefined;
  if (name === undefined) return undefined;
  try {
    // What Prism's own `highlight` does before it writes HTML: the hooks let a grammar see the whole
    // block (PHP's, embedded in HTML, is cut out before and put back after).
    const env: Record<string, unknown> = { code, grammar: prism.languages[name], language: name };
    prism.hooks.run("before-tokenize", env);
    env.tokens = prism.tokenize(env.code as string, env.grammar);
    prism.hooks.run("after-tokenize", env);
    return paint(env.tokens as (string | Token)[], themeOf(style), undefined);
  } catch {
    return undefined;
  }
}
