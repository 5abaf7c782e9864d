/**
 * ANSI styling that switches itself off (no colour when the stream is not a
 * terminal, with NO_COLOR set (any value), TERM=dumb, or --no-color) and
 * takes its colours from a theme.
 *
 * The colour methods name roles as much as colours: `red` is an error or a
 * removed line, `green` a success or an added line, `yellow` a warning or a
 * question, `cyan` the accent (prompt, spinner, inline code), `magenta` the
 * branch and compactions, `blue` links, `gray` code comments. A theme maps
 * each to a colour that reads on its background: the colour-blind-safe
 * themes paint `green` blue and `red` orange, so the two never have to be
 * told apart by hue alone. `ansi` keeps to the 16 colours of the terminal's
 * own palette (and is what a terminal without 256 colours gets).
 */
import { THEME_NAMES, type ThemeName } from "@yoi/manifest";

export { THEME_NAMES, type ThemeName };

/** The colour of each role: an SGR foreground parameter (`31`, `38;5;203`). */
interface Palette {
  red: string;
  green: string;
  yellow: string;
  cyan: string;
  magenta: string;
  blue: string;
  gray: string;
  /** Background of code block lines (an SGR background parameter); none leaves them unpainted. */
  codeBackground?: string;
  /** Which terminal background the theme is made for. */
  background: "dark" | "light";
}

const THEMES: Record<ThemeName, Palette> = {
  dark: {
    red: "38;5;203",
    green: "38;5;114",
    yellow: "38;5;221",
    cyan: "38;5;80",
    magenta: "38;5;176",
    blue: "38;5;75",
    gray: "38;5;245",
    codeBackground: "48;5;236",
    background: "dark",
  },
  light: {
    red: "38;5;160",
    green: "38;5;28",
    yellow: "38;5;130",
    cyan: "38;5;30",
    magenta: "38;5;127",
    blue: "38;5;26",
    gray: "38;5;243",
    codeBackground: "48;5;255",
    background: "light",
  },
  // Okabe-Ito hues: orange and blue, told apart by every common colour-vision deficiency.
  "dark-colorblind": {
    red: "38;5;208",
    green: "38;5;39",
    yellow: "38;5;227",
    cyan: "38;5;117",
    magenta: "38;5;175",
    blue: "38;5;111",
    gray: "38;5;245",
    codeBackground: "48;5;236",
    background: "dark",
  },
  "light-colorblind": {
    red: "38;5;166",
    green: "38;5;25",
    yellow: "38;5;136",
    cyan: "38;5;31",
    magenta: "38;5;132",
    blue: "38;5;61",
    gray: "38;5;243",
    codeBackground: "48;5;255",
    background: "light",
  },
  ansi: {
    red: "31",
    green: "32",
    yellow: "33",
    cyan: "36",
    magenta: "35",
    blue: "34",
    gray: "90",
    background: "dark",
  },
};

type Paint = (text: string) => string;

export interface Style {
  enabled: boolean;
  /** The theme the colours come from; set it and every holder of this style paints with the new one. */
  theme: ThemeName;
  bold: Paint;
  dim: Paint;
  italic: Paint;
  underline: Paint;
  strikethrough: Paint;
  red: Paint;
  yellow: Paint;
  green: Paint;
  cyan: Paint;
  magenta: Paint;
  blue: Paint;
  gray: Paint;
  /**
   * One line of a code block on the theme's code background; with `erase`,
   * painted to the end of the terminal line by an erase (no spaces are
   * written, so a mouse copy gets the code and nothing after it). As it is
   * in a theme without a code background.
   */
  codeLine(text: string, erase: boolean): string;
}

export function colorEnabled(
  stream: { isTTY?: boolean },
  env: Readonly<Record<string, string | undefined>> = process.env,
  argv: readonly string[] = process.argv,
): boolean {
  if (argv.includes("--no-color")) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0") return true;
  if (env.TERM === "dumb") return false;
  return stream.isTTY === true;
}

/**
 * Wraps text in an SGR attribute and its reset. A reset of the same
 * attribute inside the text (a nested style ending) opens it again, so the
 * outer style goes on after the inner one.
 */
function sgr(open: string, close: string, text: string): string {
  if (text === "") return text;
  const on = `\x1b[${open}m`;
  const off = `\x1b[${close}m`;
  return `${on}${text.includes(off) ? text.replaceAll(off, off + on) : text}${off}`;
}

export function createStyle(enabled: boolean, theme: ThemeName = "dark"): Style {
  let palette = THEMES[theme];
  const attr = (open: string, close: string) => (text: string) => (enabled ? sgr(open, close, text) : text);
  const colour = (role: Exclude<keyof Palette, "codeBackground" | "background">) => (text: string) =>
    enabled ? sgr(palette[role], "39", text) : text;
  return {
    enabled,
    get theme() {
      return theme;
    },
    set theme(name: ThemeName) {
      theme = name;
      palette = THEMES[name];
    },
    bold: attr("1", "22"),
    dim: attr("2", "22"),
    italic: attr("3", "23"),
    underline: attr("4", "24"),
    strikethrough: attr("9", "29"),
    red: colour("red"),
    yellow: colour("yellow"),
    green: colour("green"),
    cyan: colour("cyan"),
    magenta: colour("magenta"),
    blue: colour("blue"),
    gray: colour("gray"),
    codeLine: (text, erase) => {
      if (!enabled || palette.codeBackground === undefined) return text;
      const on = `\x1b[${palette.codeBackground}m`;
      // A highlighter's full reset inside the line must not end the background.
      const body = text.replaceAll("\x1b[0m", `\x1b[0m${on}`);
      return `${on}${body}${erase ? "\x1b[K" : ""}\x1b[49m`;
    },
  };
}

/** The background a theme is made for. */
export function themeBackground(theme: ThemeName): "dark" | "light" {
  return THEMES[theme].background;
}

/**
 * The theme to use: the one configured, or (`auto`) the one for the
 * terminal's background as it answered the OSC 11 query, dark when it did
 * not. A terminal of fewer than 256 colours gets `ansi` whatever was asked:
 * the others' colours would not show there.
 */
export function resolveTheme(
  setting: ThemeName | "auto",
  background: "dark" | "light" | undefined,
  colorDepth: number,
): ThemeName {
  if (colorDepth < 8) return "ansi";
  if (setting !== "auto") return setting;
  return background === "light" ? "light" : "dark";
}
