/**
 * Syntax colours for code blocks, by language: highlight.js's core with
 * its common languages (some 36: the C family, Go, Rust, Java, Kotlin, Swift,
 * JavaScript and TypeScript, Python, Ruby, PHP, shell, SQL, JSON, YAML,
 * XML/HTML, CSS, Markdown, diff ...), painted in the theme's colours (through
 * yoi's Style, so they follow the theme and yoi's colour decision). The
 * parser's scopes go straight to an emitter of ours, which keeps each piece
 * of text with the scope that colours it: no HTML is written to be parsed
 * back. Loaded lazily: it is the heaviest module of the UI, and all of
 * highlight.js's 190 grammars would take several times as long to load.
 *
 * A grammar that embeds another (HTML's scripts and styles, Markdown's
 * code) finds it only once that one is registered; until then the
 * embedded part is left plain.
 */

import type { HLJSOptions } from "highlight.js";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import csharp from "highlight.js/lib/languages/csharp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import graphql from "highlight.js/lib/languages/graphql";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import kotlin from "highlight.js/lib/languages/kotlin";
import less from "highlight.js/lib/languages/less";
import lua from "highlight.js/lib/languages/lua";
import makefile from "highlight.js/lib/languages/makefile";
import markdown from "highlight.js/lib/languages/markdown";
import objectivec from "highlight.js/lib/languages/objectivec";
import perl from "highlight.js/lib/languages/perl";
import php from "highlight.js/lib/languages/php";
import php_template from "highlight.js/lib/languages/php-template";
import plaintext from "highlight.js/lib/languages/plaintext";
import python from "highlight.js/lib/languages/python";
import python_repl from "highlight.js/lib/languages/python-repl";
import r from "highlight.js/lib/languages/r";
import ruby from "highlight.js/lib/languages/ruby";
import rust from "highlight.js/lib/languages/rust";
import scss from "highlight.js/lib/languages/scss";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import swift from "highlight.js/lib/languages/swift";
import typescript from "highlight.js/lib/languages/typescript";
import vbnet from "highlight.js/lib/languages/vbnet";
import wasm from "highlight.js/lib/languages/wasm";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import { createStyle, type Style } from "../../style.ts";

type Grammar = Parameters<typeof hljs.registerLanguage>[1];

/**
 * highlight.js's common languages. Each is registered the first time a
 * block asks for it: registering runs the grammar's definition, and doing
 * that for all of them up front cost more than highlighting an answer.
 */
const GRAMMARS: Record<string, Grammar> = {
  bash,
  c,
  cpp,
  csharp,
  css,
  diff,
  go,
  graphql,
  ini,
  java,
  javascript,
  json,
  kotlin,
  less,
  lua,
  makefile,
  markdown,
  objectivec,
  perl,
  php,
  "php-template": php_template,
  plaintext,
  python,
  "python-repl": python_repl,
  r,
  ruby,
  rust,
  scss,
  shell,
  sql,
  swift,
  typescript,
  vbnet,
  wasm,
  xml,
  yaml,
};

/** The names code fences use for them (what each grammar declares as its aliases). */
const ALIASES: Record<string, string> = {
  sh: "bash",
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
  patch: "diff",
  golang: "go",
  gql: "graphql",
  toml: "ini",
  jsp: "java",
  js: "javascript",
  jsx: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  jsonc: "json",
  json5: "json",
  kt: "kotlin",
  kts: "kotlin",
  mk: "makefile",
  mak: "makefile",
  make: "makefile",
  md: "markdown",
  mkdown: "markdown",
  mkd: "markdown",
  mm: "objectivec",
  objc: "objectivec",
  "obj-c": "objectivec",
  "obj-c++": "objectivec",
  "objective-c++": "objectivec",
  pl: "perl",
  pm: "perl",
  text: "plaintext",
  txt: "plaintext",
  py: "python",
  gyp: "python",
  ipython: "python",
  pycon: "python-repl",
  rb: "ruby",
  gemspec: "ruby",
  podspec: "ruby",
  thor: "ruby",
  irb: "ruby",
  rs: "rust",
  console: "shell",
  shellsession: "shell",
  ts: "typescript",
  tsx: "typescript",
  mts: "typescript",
  cts: "typescript",
  vb: "vbnet",
  html: "xml",
  xhtml: "xml",
  rss: "xml",
  atom: "xml",
  xjb: "xml",
  xsd: "xml",
  xsl: "xml",
  plist: "xml",
  wsf: "xml",
  svg: "xml",
  yml: "yaml",
};

/** The registered name of `lang` (registering it now if it is one of ours), or undefined. */
function language(lang: string): string | undefined {
  const name = lang.toLowerCase();
  const grammarName = Object.hasOwn(GRAMMARS, name) ? name : ALIASES[name];
  if (grammarName === undefined) return undefined;
  if (hljs.getLanguage(grammarName) === undefined) hljs.registerLanguage(grammarName, GRAMMARS[grammarName]!);
  return grammarName;
}

type Paint = (text: string) => string;

/** The last theme made, and for which style and theme name: a theme is made once, not for every block. */
let made: { style: Style; theme: string; paints: Record<string, Paint | undefined> } | undefined;

/** highlight.js scopes (the first class after `hljs-`) → the Style's colours. */
function themeOf(s: Style): Record<string, Paint | undefined> {
  if (made?.style !== s || made.theme !== s.theme) made = { style: s, theme: s.theme, paints: paintsOf(s) };
  return made.paints;
}

function paintsOf(s: Style): Record<string, Paint | undefined> {
  return {
    keyword: s.magenta,
    built_in: s.cyan,
    type: s.cyan,
    literal: s.blue,
    number: s.yellow,
    regexp: s.red,
    string: s.green,
    symbol: s.yellow,
    class: s.cyan,
    function: s.yellow,
    title: s.yellow,
    comment: s.gray,
    doctag: s.gray,
    meta: s.gray,
    quote: s.gray,
    tag: s.blue,
    name: s.blue,
    attr: s.cyan,
    attribute: s.cyan,
    property: s.cyan,
    variable: s.red,
    "template-variable": s.red,
    "selector-tag": s.magenta,
    "selector-class": s.yellow,
    "selector-id": s.yellow,
    addition: s.green,
    deletion: s.red,
    section: s.bold,
    bullet: s.yellow,
    link: s.blue,
    emphasis: s.italic,
    strong: s.bold,
  };
}

/**
 * The text highlight.js parsed, each piece with the scope that colours it
 * (the innermost open scope the theme has a colour for; undefined: none).
 * highlight.js builds one per block (and one per embedded language) from
 * the `__emitter` option: the interface its parser calls, which its types
 * call private but stable. Nothing is escaped, so nothing is decoded.
 */
class ScopedText {
  readonly pieces: { text: string; scope: string | undefined }[] = [];
  /** The open scopes, each as the theme knows it (undefined: one it has no colour for). */
  readonly #open: (string | undefined)[] = [];
  /** Text added next continues the last piece (no scope opened or closed since). */
  #joins = false;

  addText(text: string): void {
    if (text === "") return;
    const last = this.pieces.at(-1);
    if (this.#joins && last !== undefined) last.text += text;
    else this.pieces.push({ text, scope: this.#colouring() });
    this.#joins = true;
  }

  startScope(scope: string): void {
    this.openNode(scope);
  }

  endScope(): void {
    this.closeNode();
  }

  /** The parser also opens and closes scopes by these names. */
  openNode(scope: string): void {
    // `title.function` is coloured as `title`, as highlight.js's CSS class for it (`hljs-title function_`) is.
    const known = scope.split(".", 1)[0] ?? "";
    this.#open.push(Object.hasOwn(SCOPES, known) ? known : undefined);
    this.#joins = false;
  }

  closeNode(): void {
    this.#open.pop();
    this.#joins = false;
  }

  /** An embedded language's text: its own colours, the enclosing scope's where it has none. */
  __addSublanguage(other: ScopedText, _name: string): void {
    const around = this.#colouring();
    for (const piece of other.pieces) this.pieces.push({ text: piece.text, scope: piece.scope ?? around });
    this.#joins = false;
  }

  finalize(): void {
    this.#open.length = 0;
  }

  /** highlight.js asks for its result as HTML: there is none, the pieces are read instead. */
  toHTML(): string {
    return "";
  }

  #colouring(): string | undefined {
    return this.#open.findLast((scope) => scope !== undefined);
  }
}

const SCOPES = paintsOf(createStyle(false));

// Its `__addSublanguage` takes our own kind, which is all highlight.js gives it.
hljs.configure({ __emitter: ScopedText as unknown as HLJSOptions["__emitter"] });

/** The pieces painted by `theme`, each line on its own (a code block's lines are drawn one by one). */
function paint(pieces: ScopedText["pieces"], theme: Record<string, Paint | undefined>): string {
  let out = "";
  for (const { text, scope } of pieces) {
    const colour = scope === undefined ? undefined : theme[scope];
    if (colour === undefined) out += text;
    else if (!text.includes("\n")) out += colour(text);
    else
      out += text
        .split("\n")
        .map((line) => (line === "" ? line : colour(line)))
        .join("\n");
  }
  return out;
}

/** Colours `code` when its language is known; undefined otherwise (shown plain). */
export function highlightCode(code: string, lang: string | undefined, style: Style): string | undefined {
  const name = style.enabled && lang !== undefined ? language(lang) : undefined;
  if (name === undefined) return undefined;
  try {
    const result = hljs.highlight(code, { language: name, ignoreIllegals: true });
    return paint((result._emitter as unknown as ScopedText).pieces, themeOf(style));
  } catch {
    return undefined;
  }
}
