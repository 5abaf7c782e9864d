import type { StatusEvent } from "@yoi/llm-client";

/**
 * Tells collectors when a new model call begins on a reused Timeline: a
 * `status: started` after a terminal status. A repeated `started` within one
 * call (seen from real servers) is not a new call.
 */
export class CallBoundary {
  #ended = false;

  /** Returns true when `event` starts a new model call after a finished one. */
  next(event: StatusEvent): boolean {
    if (event.status === "started") {
      const fresh = this.#ended;
      this.#ended = false;
      return fresh;
    }
    this.#ended = true;
    return false;
  }

  reset(): void {
    this.#ended = false;
  }
}
