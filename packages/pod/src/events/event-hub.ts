import type { PodEvent, PodEventListener } from "./pod-events.ts";

/** Delivers pod events to the UI's listeners, in order; a listener that throws does not stop the others. */
export class PodEventHub {
  readonly #listeners = new Set<PodEventListener>();

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: PodEventListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  emit(event: PodEvent): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch {
        // A broken UI listener must not break the session.
      }
    }
  }
}
