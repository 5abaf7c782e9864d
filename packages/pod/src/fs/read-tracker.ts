/**
 * Which files the session has read, and their size and mtime at that
 * moment. `edit_file` and `write_file` refuse to change a file the model has
 * not seen or that changed since; auto-read after compaction re-attaches the
 * most recently read files.
 */

export interface ReadRecord {
  /** Real path. */
  real: string;
  /** The path as the model or user last wrote it. */
  display: string;
  size: number;
  mtimeMs: number;
  /** Monotonic order of the read (higher is more recent). */
  order: number;
}

export class ReadTracker {
  private readonly records = new Map<string, ReadRecord>();
  private counter = 0;

  /** Records a read (or a write by the session, which counts as knowing the content). */
  record(real: string, display: string, stat: { size: number; mtimeMs: number }): void {
    this.counter += 1;
    this.records.delete(real);
    this.records.set(real, { real, display, size: stat.size, mtimeMs: stat.mtimeMs, order: this.counter });
  }

  get(real: string): ReadRecord | undefined {
    return this.records.get(real);
  }

  forget(real: string): void {
    this.records.delete(real);
  }

  /** Whether `real` was read and still has the size and mtime seen then. */
  isFresh(real: string, stat: { size: number; mtimeMs: number }): boolean {
    const r = this.records.get(real);
    return r !== undefined && r.size === stat.size && r.mtimeMs === stat.mtimeMs;
  }

  /** Read files, most recent first. */
  recent(): ReadRecord[] {
    return [...this.records.values()].sort((a, b) => b.order - a.order);
  }
}
