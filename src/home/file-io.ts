/** Positioned whole reads and writes on an open file: the loops a short read or write needs, once. */
import { readSync, writeSync } from "node:fs";

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

/** Writes all of `data` at `position`. */
export function writeAt(fd: number, data: Uint8Array, position: number): void {
  for (let done = 0; done < data.length; )
    done += writeSync(fd, data, done, data.length - done, position + done);
}
