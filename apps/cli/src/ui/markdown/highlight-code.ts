/**
 * Syntax colours for code blocks, by language, through cli-highlight
 * (highlight.js grammars). Colours come from our own theme on
 * `node:util` styleText, so they follow yoi's colour decision rather than
 * the library's own terminal detection. Loaded lazily: it is the heaviest
 * module of the UI.
 */

import { styleText } from "node:util";
import { highlight, supportsLanguage } from "cli-highlight";

type Format = Parameters<typeof styleText>[0];
const paint = (format: Format) => (text: string) => styleText(format, text, { validateStream: false });

const THEME = {
  keyword: paint("magenta"),
  built_in: paint("cyan"),
  type: paint("cyan"),
  literal: paint("blue"),
  number: paint("yellow"),
  regexp: paint("red"),
  string: paint("green"),
  subst: paint("reset"),
  symbol: paint("yellow"),
  class: paint("cyan"),
  function: paint("yellow"),
  title: paint("yellow"),
  params: paint("reset"),
  comment: paint("gray"),
  doctag: paint("gray"),
  meta: paint("gray"),
  "meta-keyword": paint("magenta"),
  "meta-string": paint("green"),
  tag: paint("blue"),
  name: paint("blue"),
  attr: paint("cyan"),
  attribute: paint("cyan"),
  variable: paint("red"),
  addition: paint("green"),
  deletion: paint("red"),
  section: paint("bold"),
  bullet: paint("yellow"),
};

/** Colours `code` when its language is known; undefined otherwise (shown plain). */
export function highlightCode(code: string, lang: string | undefined): string | undefined {
  if (lang === undefined || !supportsLanguage(lang)) return undefined;
  try {
    return highlight(code, { language: lang, theme: THEME, ignoreIllegals: true });
  } catch {
    return undefined;
  }
}
