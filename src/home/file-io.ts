/** Positioned whole reads and writes on an open file: the loops a short read or write needs, once. */
import { readFileSync, readSync, writeSync } from "node:fs";

/** Reads `length` bytes at `position` (fewer at the end of the file). */
export function readAt(fd: number, position: number, length: number, into?: Buffer): Buffer {
  const buffer = into && into.length >= length ? into.subarray(0, length) : Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buffer, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done === length ? buffer : buffer.subarray(0, done);
}

/**
 * A file's bytes read whole into memory of their own (no mapping held, so the file can be removed while
 * they are read), starting at a multiple of `alignment` bytes: a read's buffer that does not is copied.
 */
export function readAligned(path: string, alignment: number): Uint8Array {
  const data = readFileSync(path);
  return data.byteOffset % alignment === 0 ? data : new Uint8Array(data);
}

/** Writes all of `data` at `position`. */
export function writeAt(fd: number, data: Uint8Array, position: number): void {
  for (let done = 0; done < data.length; )
    done += writeSync(fd, data, done, data.length - done, position + done);
}

/**
 * A check of `count` 32-bit words from `from`, seeded (a record's row id): MurmurHash3 (x86, 32-bit).
 * Any damage to them (a torn append, a hole, a bad page) passes with odds of 2⁻³²; it runs on a mapped
 * file's words themselves, so checking ~500k records makes no view or native call each.
 */
export function wordsCheck(
  words: Int32Array | Uint32Array,
  from: number,
  count: number,
  seed: number,
): number {
  let h = seed | 0;
  for (let i = from, end = from + count; i < end; i++) {
    let k = Math.imul(words[i], 0xcc9e2d51);
    k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  h ^= count * 4;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
