/**
 * Syntax colours for code blocks, by language, through cli-highlight
 * (highlight.js grammars). The colours are the theme's (through yoi's
 * Style), so they follow the theme and yoi's colour decision rather than
 * the library's own terminal detection. Loaded lazily: it is the heaviest
 * module of the UI.
 */

import { highlight, supportsLanguage } from "cli-highlight";
import type { Style } from "../../style.ts";

type Theme = Record<string, (text: string) => string>;

/** highlight.js classes → the Style's colours. */
function themeOf(s: Style): Theme {
  const plain = (text: string) => text;
  return {
    keyword: s.magenta,
    built_in: s.cyan,
    type: s.cyan,
    literal: s.blue,
    number: s.yellow,
    regexp: s.red,
    string: s.green,
    subst: plain,
    symbol: s.yellow,
    class: s.cyan,
    function: s.yellow,
    title: s.yellow,
    params: plain,
    comment: s.gray,
    doctag: s.gray,
    meta: s.gray,
    "meta-keyword": s.magenta,
    "meta-string": s.green,
    tag: s.blue,
    name: s.blue,
    attr: s.cyan,
    attribute: s.cyan,
    variable: s.red,
    addition: s.green,
    deletion: s.red,
    section: s.bold,
    bullet: s.yellow,
  };
}

/** Colours `code` when its language is known; undefined otherwise (shown plain). */
export function highlightCode(code: string, lang: string | undefined, style: Style): string | undefined {
  if (!style.enabled || lang === undefined || !supportsLanguage(lang)) return undefined;
  try {
    return highlight(code, { language: lang, theme: themeOf(style), ignoreIllegals: true });
  } catch {
    return undefined;
  }
}
