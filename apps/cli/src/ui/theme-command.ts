/**
 * `/theme`: without an argument, every theme with a preview line painted in
 * it (the current one marked); with a name, switches to it and remembers it
 * in the user's config (`~/.yoi/config.jsonc`) for the next sessions, as
 * Claude Code remembers its theme. `auto` goes back to following the
 * terminal's background. A theme the project's config, an environment
 * variable or a flag sets still wins where it applies: that is said.
 */
import { errorMessage } from "@yoi/manifest/errors";
import { createStyle, resolveTheme, type Style, THEME_NAMES, type ThemeName } from "../style.ts";
import type { Background } from "./terminal-background.ts";

export interface ThemeContext {
  style: Style;
  /** What the terminal said its background is (undefined: it did not say). */
  background: Background | undefined;
  /** Colours the terminal has (bits: 4 is 16 colours, 8 is 256). */
  colorDepth: number;
  /** Prints `body` after `head`, word-wrapped to the terminal with its further lines at `indent` (Renderer.hanging). */
  print(head: string, body: string, indent: number): void;
  /** Remembers the choice in the user's config; resolves to the file written, shown as the user would type it (`~/.yoi/config.jsonc`). */
  save(name: ThemeName | "auto"): Promise<string>;
  /** Where the theme in force at start came from, when not from the user's config or the default (a project's `.yoi/config.jsonc`, `env:YOI_CONFIG__theme`). */
  overriddenBy: string | undefined;
}

/**
 * A line of what the UI paints, in `s`'s theme. Each sample is held
 * together by a no-break space, so a narrow terminal wraps the line between
 * samples, never between a mark and its word.
 */
export function themePreview(s: Style): string {
  return [
    s.green("✓\u00a0done"),
    s.red("✗\u00a0failed"),
    s.green("+\u00a0added"),
    s.red("-\u00a0removed"),
    s.yellow("!\u00a0warning"),
    s.cyan("›\u00a0accent"),
    s.blue(s.underline("link")),
    s.dim("dim"),
  ].join("  ");
}

export async function themeCommand(arg: string, ctx: ThemeContext): Promise<void> {
  const s = ctx.style;
  if (!s.enabled) {
    ctx.print(
      "",
      s.dim("· colour is off (NO_COLOR, --no-color, TERM=dumb or not a terminal): themes do not apply"),
      0,
    );
    return;
  }
  if (arg === "") {
    const width = Math.max(...THEME_NAMES.map((n) => n.length)) + 2;
    for (const name of THEME_NAMES) {
      const mark = name === s.theme ? s.cyan("●") : " ";
      ctx.print(`${mark} ${name}`, themePreview(createStyle(true, name)), width + 2);
    }
    ctx.print(
      "",
      s.dim(
        `· /theme <name> switches and remembers it, /theme auto follows the terminal (${ctx.background ?? "unknown"} background)`,
      ),
      0,
    );
    return;
  }
  if (arg !== "auto" && !(THEME_NAMES as readonly string[]).includes(arg)) {
    ctx.print("", s.red(`✗ unknown theme "${arg}": one of auto, ${THEME_NAMES.join(", ")}`), 0);
    return;
  }
  const name = arg as ThemeName | "auto";
  const chosen = resolveTheme(name, ctx.background, ctx.colorDepth);
  s.theme = chosen;
  const how = chosen === arg ? "" : ` (${arg === "auto" ? "auto" : `${arg} needs 256 colours`})`;
  ctx.print(`${s.green("✓")} theme ${chosen}${how}`, themePreview(s), 0);
  try {
    const file = await ctx.save(name);
    const wins =
      ctx.overriddenBy === undefined
        ? ""
        : `; ${ctx.overriddenBy} sets "theme" too and wins where it applies`;
    ctx.print("", s.dim(`· saved as "theme": "${name}" in ${file} for the next sessions${wins}`), 0);
  } catch (error) {
    ctx.print("", s.yellow(`! theme ${chosen} for this session only; not saved: ${errorMessage(error)}`), 0);
  }
}
