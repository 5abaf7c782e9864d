/**
 * What a collector keeps of each block, in the order the blocks started,
 * though blocks may end in another order (parallel tool calls stream side
 * by side). A block's place is kept at its start and filled at its end; a
 * block that ends without one (its start was not seen) goes last.
 */
export class StartOrder<T> {
  #slots: Array<T | null> = [];
  #positions = new Map<number, number>();

  /** Keeps a place for block `index`, to be filled or dropped when it ends. */
  reserve(index: number): void {
    this.#positions.set(index, this.#slots.length);
    this.#slots.push(null);
  }

  /** Puts `value` in block `index`'s place (at the end when none is kept). */
  fill(index: number, value: T): void {
    const at = this.#positions.get(index);
    this.#positions.delete(index);
    if (at === undefined) this.#slots.push(value);
    else this.#slots[at] = value;
  }

  /** Gives up block `index`'s place: the block left nothing to keep. */
  drop(index: number): void {
    this.#positions.delete(index);
  }

  /** What was kept, in start order. */
  values(): T[] {
    return this.#slots.filter((v): v is T => v !== null);
  }
}
