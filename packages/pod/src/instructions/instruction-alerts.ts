/**
 * The project instructions of a session as the user hears about them: read
 * again before each run, with an alert when the files were loaded, changed
 * or went away, and one per file refused (said again only when it changes).
 */
import { errorMessage } from "@yoi/manifest/errors";
import type { AlertBus } from "../events/alerts.ts";
import type { ProjectInstructions } from "./project-instructions.ts";

const SOURCE = "instructions";

export class InstructionAlerts {
  readonly #instructions: ProjectInstructions;
  readonly #alerts: AlertBus;
  #loaded = false;
  #problems = new Set<string>();

  constructor(instructions: ProjectInstructions, alerts: AlertBus) {
    this.#instructions = instructions;
    this.#alerts = alerts;
  }

  /** The section appended to the system prompt; empty when there are no files. */
  render(): string {
    return this.#instructions.render();
  }

  /** Re-reads the instruction files; says what was loaded or changed, and what was refused. */
  async refresh(): Promise<void> {
    let changed: boolean;
    try {
      changed = await this.#instructions.refresh();
    } catch (error) {
      this.#alerts.warn(SOURCE, `instruction files could not be read: ${errorMessage(error)}`);
      return;
    }
    const { files, problems } = this.#instructions.current;
    const names = files.map((f) => f.display).join(", ");
    if (changed && files.length > 0)
      this.#alerts.info(SOURCE, `${this.#loaded ? "re-read" : "loaded"}: ${names}`);
    else if (changed) this.#alerts.info(SOURCE, "no instruction files any more");
    this.#loaded = true;
    const seen = new Set<string>();
    for (const problem of problems) {
      const message = `${problem.display} was not loaded: ${problem.reason}`;
      seen.add(message);
      if (!this.#problems.has(message)) this.#alerts.warn(SOURCE, message);
    }
    this.#problems = seen;
  }
}
