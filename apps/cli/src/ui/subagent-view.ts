/**
 * Subagents (`task` calls) in the terminal: while a child runs, its recent
 * steps are shown indented under the parent's `task` line (in the live
 * region, updated in place); when it ends the group collapses to one
 * summary line. Without a terminal each finished child step is printed
 * once, indented and labelled with the task's description.
 */
import type { PodEvent } from "@yoi/pod";
import type { Style } from "../style.ts";
import type { LiveRegion } from "./live-region.ts";
import { formatDuration, shortArgs } from "./tool-summary.ts";

type SubagentEvent = Extract<PodEvent, { type: "subagent" }>;

/** Child steps shown at once per running subagent. */
const SHOWN_STEPS = 3;

interface Group {
  description: string;
  depth: number;
  /** Finished steps, newest last (only the last few are kept). */
  steps: string[];
  running: Map<string, { name: string; args: string; startedAt: number }>;
  toolCalls: number;
  errors: number;
  modelCalls: number;
  /** Live keys drawn for this group. */
  keys: string[];
}

export class SubagentView {
  readonly #live: LiveRegion;
  readonly #animate: boolean;
  readonly #style: Style;
  readonly #print: (text: string) => void;
  readonly #groups = new Map<string, Group>();

  constructor(options: { live: LiveRegion; animate: boolean; style: Style; print: (text: string) => void }) {
    this.#live = options.live;
    this.#animate = options.animate;
    this.#style = options.style;
    this.#print = options.print;
  }

  handle(sub: SubagentEvent): void {
    const s = this.#style;
    let group = this.#groups.get(sub.callId);
    if (group === undefined) {
      group = {
        description: sub.description,
        depth: sub.depth,
        steps: [],
        running: new Map(),
        toolCalls: 0,
        errors: 0,
        modelCalls: 0,
        keys: [],
      };
      this.#groups.set(sub.callId, group);
    }
    const event = sub.event;
    const indent = "  ".repeat(sub.depth);
    switch (event.type) {
      case "turn_end":
        group.modelCalls++;
        return;
      case "tool_call_start":
        group.running.set(event.callId, {
          name: event.name,
          args: shortArgs(event.name, event.args),
          startedAt: event.startedAt,
        });
        break;
      case "tool_call_end": {
        const call = group.running.get(event.callId);
        group.running.delete(event.callId);
        group.toolCalls++;
        if (event.isError) group.errors++;
        const mark = event.isError ? s.red("✗") : s.green("✓");
        const step = `${mark} ${event.name} ${call?.args ?? ""} ${s.dim(formatDuration(event.durationMs))}`;
        if (!this.#animate) {
          this.#print(`${indent}${s.dim("│")} ${s.dim(`${group.description} ·`)} ${step}`);
          if (event.name === "task") this.end(event.callId);
          return;
        }
        group.steps.push(step);
        if (group.steps.length > SHOWN_STEPS) group.steps.shift();
        // A grandchild's group (its events come with their own call id) collapses with its call.
        if (event.name === "task") this.end(event.callId);
        break;
      }
      default:
        return;
    }
    this.#draw(sub.callId, group, indent);
  }

  /** The parent's `task` call ended: the group collapses to one line. */
  end(callId: string): void {
    const group = this.#groups.get(callId);
    if (group === undefined) return;
    this.#groups.delete(callId);
    for (const key of group.keys) this.#live.delete(key);
    const s = this.#style;
    const errors = group.errors > 0 ? `, ${group.errors} failed` : "";
    const calls = `${group.toolCalls} tool call${group.toolCalls === 1 ? "" : "s"}${errors}`;
    const model = `${group.modelCalls} model call${group.modelCalls === 1 ? "" : "s"}`;
    this.#print(s.dim(`${"  ".repeat(group.depth)}└ ${calls} · ${model}`));
  }

  #draw(callId: string, group: Group, indent: string): void {
    if (!this.#animate) return;
    const s = this.#style;
    const lines: ((frame: string) => string)[] = group.steps.map(
      (step) => () => `${indent}${s.dim("│")} ${step}`,
    );
    for (const call of group.running.values()) {
      lines.push(
        (frame) =>
          `${indent}${s.dim("│")} ${s.cyan(frame)} ${call.name} ${call.args} ${s.dim(formatDuration(Date.now() - call.startedAt))}`,
      );
    }
    const keys = lines.map((_, i) => `sub:${callId}:${i}`);
    for (const key of group.keys.slice(keys.length)) this.#live.delete(key);
    lines.forEach((render, i) => {
      this.#live.set(keys[i]!, render);
    });
    group.keys = keys;
  }
}
