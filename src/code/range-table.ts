/**
 * A string-keyed table looked up by a range of a larger text, hashed from its character codes while
 * scanning: no substring is made and no string is hashed again for words already known. Indexing
 * looks up millions of identifiers and words, and a Map lookup of a fresh substring costs several
 * times the scan itself.
 */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a over character codes: mix one code into a running hash. */
export function mixHash(hash: number, code: number): number {
  return Math.imul(hash ^ code, FNV_PRIME);
}
export const EMPTY_HASH = FNV_OFFSET;

export function hashString(key: string): number {
  let hash = EMPTY_HASH;
  for (let i = 0; i < key.length; i++) hash = mixHash(hash, key.charCodeAt(i));
  return hash;
}

/** Keys numbered 0, 1, 2… in insertion order, found by (text, start, end, hash) or by string. */
export class RangeTable {
  readonly keys: string[] = [];
  private hashes = new Int32Array(0);
  /** Open addressing: key number + 1, or 0 for an empty slot. */
  private slots = new Int32Array(1 << 12);

  get size(): number {
    return this.keys.length;
  }

  /** The number of the key equal to text[start, end), or -1. `lower` compares ASCII letters lower-cased. */
  find(text: string, start: number, end: number, hash: number, lower = false): number {
    const mask = this.slots.length - 1;
    const length = end - start;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot];
      if (entry === 0) return -1;
      const k = entry - 1;
      if (this.hashes[k] !== hash) continue;
      const key = this.keys[k];
      if (key.length !== length) continue;
      let i = 0;
      if (lower) {
        while (i < length) {
          let c = text.charCodeAt(start + i);
          if (c >= 65 && c <= 90) c |= 32;
          if (c !== key.charCodeAt(i)) break;
          i++;
        }
      } else {
        while (i < length && text.charCodeAt(start + i) === key.charCodeAt(i)) i++;
      }
      if (i === length) return k;
    }
  }

  findString(key: string): number {
    return this.find(key, 0, key.length, hashString(key));
  }

  /** Adds a key known to be absent, with its hash as find() computes it; returns its number. */
  add(key: string, hash: number): number {
    const k = this.keys.length;
    this.keys.push(key);
    if (k === this.hashes.length) {
      const bigger = new Int32Array(Math.max(1024, k * 2));
      bigger.set(this.hashes);
      this.hashes = bigger;
    }
    this.hashes[k] = hash;
    // Keep the load factor under a half.
    if (2 * (k + 1) > this.slots.length) this.rehash(this.slots.length * 2);
    else this.place(k);
    return k;
  }

  private place(k: number): void {
    const mask = this.slots.length - 1;
    let slot = this.hashes[k] & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = k + 1;
  }

  private rehash(size: number): void {
    this.slots = new Int32Array(size);
    for (let k = 0; k < this.keys.length; k++) this.place(k);
  }
}
