/**
 * `/bashes`: the session's background commands (bash with
 * `run_in_background`), one row each with its id, state and command, and
 * `/bashes kill <id>` to stop one.
 */
import { type BackgroundShellInfo, backgroundStatus } from "@yoi/pod";
import type { Style } from "../style.ts";
import { sanitizeLine } from "../terminal-text.ts";
import { truncate } from "../text-width.ts";

/** The rows of `/bashes`, or one line saying there are none. */
export function bashesLines(list: readonly BackgroundShellInfo[], style: Style, columns = 80): string[] {
  if (list.length === 0)
    return [
      style.dim("no background commands in this session (the model starts them with bash run_in_background)"),
    ];
  const rows = list.map((info) => {
    const mark = info.state === "running" ? style.green("●") : style.dim("○");
    const what = sanitizeLine(info.description ?? info.command.split("\n")[0] ?? "");
    const head = `${mark} ${style.bold(info.id)} ${backgroundStatus(info)}`;
    return `${head}${style.dim(" · ")}${truncate(what, Math.max(20, columns - 40))}`;
  });
  const running = list.some((info) => info.state === "running");
  return running
    ? [...rows, style.dim("/bashes kill <id> stops one (all stop when the session ends)")]
    : rows;
}
