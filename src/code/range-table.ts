/**
 * A string-keyed table looked up by a range of a larger text, hashed from its character codes while
 * scanning: no substring is made and no string is hashed again for words already known. Indexing
 * looks up millions of identifiers and words, and a Map lookup of a fresh substring costs several
 * times the scan itself. Each slot holds a key's hash beside its number, and the keys' characters
 * sit in one flat array, so a lookup touches two places in memory instead of four.
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
  /** Open addressing, two Int32 per slot: the key's hash, then its number + 1 (0: empty). */
  private slots = new Int32Array(2 << 12);
  /** Characters of every key, back to back; key k spans [starts[k], starts[k + 1]). */
  private chars = new Uint16Array(1 << 14);
  private starts = new Int32Array(1025);

  get size(): number {
    return this.keys.length;
  }

  /** The number of the key equal to text[start, end), or -1. `lower` compares ASCII letters lower-cased. */
  find(text: string, start: number, end: number, hash: number, lower = false): number {
    const slots = this.slots;
    const mask = (slots.length >> 1) - 1;
    const length = end - start;
    const chars = this.chars;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = slots[2 * slot + 1];
      if (entry === 0) return -1;
      if (slots[2 * slot] !== hash) continue;
      const k = entry - 1;
      const from = this.starts[k];
      if (this.starts[k + 1] - from !== length) continue;
      let i = 0;
      if (lower) {
        while (i < length) {
          let c = text.charCodeAt(start + i);
          if (c >= 65 && c <= 90) c |= 32;
          if (c !== chars[from + i]) break;
          i++;
        }
      } else {
        while (i < length && text.charCodeAt(start + i) === chars[from + i]) i++;
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
    if (k + 2 > this.starts.length) {
      const bigger = new Int32Array(this.starts.length * 2);
      bigger.set(this.starts);
      this.starts = bigger;
    }
    const from = this.starts[k];
    if (from + key.length > this.chars.length) {
      let size = this.chars.length * 2;
      while (size < from + key.length) size *= 2;
      const bigger = new Uint16Array(size);
      bigger.set(this.chars);
      this.chars = bigger;
    }
    for (let i = 0; i < key.length; i++) this.chars[from + i] = key.charCodeAt(i);
    this.starts[k + 1] = from + key.length;
    // Keep the load factor under a half.
    if (2 * (k + 1) > this.slots.length >> 1) this.rehash(this.slots.length);
    this.place(k, hash);
    return k;
  }

  private place(k: number, hash: number): void {
    const slots = this.slots;
    const mask = (slots.length >> 1) - 1;
    let slot = hash & mask;
    while (slots[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
    slots[2 * slot] = hash;
    slots[2 * slot + 1] = k + 1;
  }

  private rehash(size: number): void {
    const old = this.slots;
    this.slots = new Int32Array(size * 2);
    for (let s = 0; s < old.length; s += 2) if (old[s + 1] !== 0) this.place(old[s + 1] - 1, old[s]);
  }
}
