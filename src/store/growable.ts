/**
 * A typed array that grows as values come (a count not known before). `clear` empties it for reuse, so a
 * reader called many times a run (a session's synonym upkeep reads ~950k bucket head rows in a few
 * calls at 100,000 records) fills the same memory instead of growing fresh arrays each call.
 */
export class Growable<T extends Int32Array | Float64Array> {
  private data: T;
  length = 0;

  constructor(private readonly Kind: new (length: number) => T) {
    this.data = new Kind(1024);
  }

  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new this.Kind(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }

  /** The values so far (a view: a later push or clear may reuse or replace its memory). */
  view(): T {
    return this.data.subarray(0, this.length) as T;
  }

  clear(): void {
    this.length = 0;
  }
}
