/**
 * Alerts: short notices for the user (not the model), e.g. an `@path` ref that
 * could not be attached (docs/design/file-refs.md#failures-become-alerts). Each
 * has a level, a source and one line of text; the pod delivers them to
 * subscribers and the session log.
 */

export type AlertLevel = "info" | "warn" | "error";

export interface Alert {
  level: AlertLevel;
  /** What raised it: `file_ref`, `permissions`, `pod`, `auto_read`, ... */
  source: string;
  /** One line (newlines are folded into spaces, at most 500 characters). */
  message: string;
  /**
   * What happened, as a stable string within `source`, for a UI that adds its
   * own words (how to fix it there): `file_ref` alerts carry the
   * `FileRefError` code; a call denied because no one could be asked is
   * `permissions` / `denied_no_ui`. Absent when the message is all there is.
   */
  code?: string;
  /** ISO 8601 time it was raised. */
  ts: string;
}

export type AlertListener = (alert: Alert) => void;

const MAX_MESSAGE = 500;

/** Folds a message into one bounded line. */
export function oneLine(text: string): string {
  const line = text.replace(/\s*[\r\n]+\s*/g, " ").trim();
  return line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE - 1)}…` : line;
}

/**
 * Delivers alerts to subscribers synchronously, in order. A listener that
 * throws does not stop the others (its error is swallowed: an alert must
 * never break the run that raised it).
 */
export class AlertBus {
  private readonly listeners = new Set<AlertListener>();
  private readonly recent: Alert[] = [];
  private readonly keep: number;

  /** `keep`: how many recent alerts `recentAlerts()` returns. Default 100. */
  constructor(options: { keep?: number } = {}) {
    this.keep = options.keep ?? 100;
  }

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: AlertListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  emit(level: AlertLevel, source: string, message: string, code?: string): Alert {
    const alert: Alert = {
      level,
      source,
      message: oneLine(message),
      ...(code !== undefined ? { code } : {}),
      ts: new Date().toISOString(),
    };
    this.recent.push(alert);
    if (this.recent.length > this.keep) this.recent.shift();
    for (const listener of [...this.listeners]) {
      try {
        listener(alert);
      } catch {
        // A broken UI listener must not break the run.
      }
    }
    return alert;
  }

  info(source: string, message: string, code?: string): Alert {
    return this.emit("info", source, message, code);
  }

  warn(source: string, message: string, code?: string): Alert {
    return this.emit("warn", source, message, code);
  }

  error(source: string, message: string, code?: string): Alert {
    return this.emit("error", source, message, code);
  }

  /** The most recent alerts, oldest first. */
  recentAlerts(): readonly Alert[] {
    return [...this.recent];
  }
}
