import { gunzipSync, gzipSync, inflateRawSync, deflateRawSync } from "node:zlib";

/**
 * The release's compressed assets: one binary in a `.tar.gz` (Linux, macOS) or a `.zip` (Windows), as
 * `tar`, Homebrew, Scoop and PowerShell's Expand-Archive read them. Written by build/package.ts, read back
 * by `triforge update`. One entry each, so this is the small subset of both formats that one file needs.
 */

/** The release asset for a target (`linux-x64`, `windows-x64`, …). */
export function releaseAsset(target: string): string {
  return `triforge-${target}${target.startsWith("windows") ? ".zip" : ".tar.gz"}`;
}

/** The binary's name inside its asset. */
export function binaryInAsset(target: string): string {
  return target.startsWith("windows") ? "triforge.exe" : "triforge";
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

/** A POSIX (ustar) tar of one executable file, gzip-compressed. `mtime` fixed so a rebuild gives the same bytes. */
export function tarGz(name: string, data: Uint8Array, mtime = 0): Uint8Array {
  if (Buffer.byteLength(name) > 100) throw new Error(`tar entry name too long: ${name}`);
  const header = Buffer.alloc(BLOCK);
  header.write(name, 0, "utf8");
  header.write(octal(0o755, 8), 100, "ascii");
  header.write(octal(0, 8), 108, "ascii");
  header.write(octal(0, 8), 116, "ascii");
  header.write(octal(data.length, 12), 124, "ascii");
  header.write(octal(mtime, 12), 136, "ascii");
  header.write("        ", 148, "ascii"); // the checksum counts its own field as spaces
  header.write("0", 156, "ascii");
  header.write("ustar\0", 257, "ascii");
  header.write("00", 263, "ascii");
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
  const padding = (BLOCK - (data.length % BLOCK)) % BLOCK;
  // Two zero blocks end the archive.
  return gzipSync(Buffer.concat([header, data, Buffer.alloc(padding + 2 * BLOCK)]), { level: 9 });
}

/** The file `name` from a `.tar.gz`; throws when the archive does not hold it. */
export function fromTarGz(archive: Uint8Array, name: string): Uint8Array {
  const tar = gunzipSync(archive);
  let at = 0;
  while (at + BLOCK <= tar.length) {
    const header = tar.subarray(at, at + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const text = (start: number, length: number) =>
      header.toString("utf8", start, start + length).replace(/\0.*$/s, "");
    const size = Number.parseInt(text(124, 12).trim() || "0", 8);
    const prefix = text(345, 155);
    const entry = prefix ? `${prefix}/${text(0, 100)}` : text(0, 100);
    const type = text(156, 1);
    const start = at + BLOCK;
    if ((type === "0" || type === "") && entry.replace(/^\.\//, "") === name) {
      if (start + size > tar.length) throw new Error(`${name} is cut short in the archive`);
      return tar.subarray(start, start + size);
    }
    at = start + Math.ceil(size / BLOCK) * BLOCK;
  }
  throw new Error(`the archive holds no ${name}`);
}

/** 1980-01-01 00:00 in MS-DOS time, the earliest a zip can say: a fixed date keeps the bytes reproducible. */
const DOS_DATE = (0 << 9) | (1 << 5) | 1;
const DOS_TIME = 0;

/** A zip of one file, deflated. */
export function zip(name: string, data: Uint8Array): Uint8Array {
  const fileName = Buffer.from(name, "utf8");
  const compressed = deflateRawSync(data, { level: 9 });
  const crc = Bun.hash.crc32(data);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4); // version needed: 2.0 (deflate)
  local.writeUInt16LE(0x0800, 6); // the name is UTF-8
  local.writeUInt16LE(8, 8); // deflate
  local.writeUInt16LE(DOS_TIME, 10);
  local.writeUInt16LE(DOS_DATE, 12);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(compressed.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(fileName.length, 26);
  local.writeUInt16LE(0, 28);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix, so the mode below is read as one
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(0x0800, 8);
  central.writeUInt16LE(8, 10);
  central.writeUInt16LE(DOS_TIME, 12);
  central.writeUInt16LE(DOS_DATE, 14);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(compressed.length, 20);
  central.writeUInt32LE(data.length, 24);
  central.writeUInt16LE(fileName.length, 28);
  central.writeUInt32LE(((0o100755 << 16) >>> 0) as number, 38); // a regular, executable file
  central.writeUInt32LE(0, 42); // its local header starts the archive
  const centralOffset = local.length + fileName.length + compressed.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + fileName.length, 12);
  end.writeUInt32LE(centralOffset, 16);
  return Buffer.concat([local, fileName, compressed, central, fileName, end]);
}

/** The file `name` from a zip (stored or deflated), its CRC checked; throws when the archive does not hold it. */
export function fromZip(archive: Uint8Array, name: string): Uint8Array {
  const bytes = Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength);
  let end = -1;
  // The end record is the last 22 bytes, unless a comment (at most 65535 bytes) follows it.
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 0xffff); i--) {
    if (bytes.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error("not a zip archive (no end record)");
  const count = bytes.readUInt16LE(end + 10);
  let at = bytes.readUInt32LE(end + 16);
  for (let i = 0; i < count; i++) {
    if (bytes.readUInt32LE(at) !== 0x02014b50) throw new Error("damaged zip archive (central directory)");
    const method = bytes.readUInt16LE(at + 10);
    const crc = bytes.readUInt32LE(at + 16);
    const compressedSize = bytes.readUInt32LE(at + 20);
    const nameLength = bytes.readUInt16LE(at + 28);
    const extraLength = bytes.readUInt16LE(at + 30);
    const commentLength = bytes.readUInt16LE(at + 32);
    const offset = bytes.readUInt32LE(at + 42);
    const entry = bytes.toString("utf8", at + 46, at + 46 + nameLength);
    if (entry === name) {
      const start = offset + 30 + bytes.readUInt16LE(offset + 26) + bytes.readUInt16LE(offset + 28);
      const stored = bytes.subarray(start, start + compressedSize);
      const data = method === 0 ? stored : method === 8 ? inflateRawSync(stored) : undefined;
      if (!data) throw new Error(`${name} uses zip compression method ${method}, which triforge cannot read`);
      if (Bun.hash.crc32(data) !== crc) throw new Error(`${name} is damaged in the archive (CRC mismatch)`);
      return data;
    }
    at += 46 + nameLength + extraLength + commentLength;
  }
  throw new Error(`the archive holds no ${name}`);
}

/** A release asset of `target` holding `binary`. */
export function packBinary(target: string, binary: Uint8Array): Uint8Array {
  const name = binaryInAsset(target);
  return target.startsWith("windows") ? zip(name, binary) : tarGz(name, binary);
}

/** The binary inside a release asset of `target`. */
export function unpackBinary(target: string, asset: Uint8Array): Uint8Array {
  const name = binaryInAsset(target);
  return target.startsWith("windows") ? fromZip(asset, name) : fromTarGz(asset, name);
}
