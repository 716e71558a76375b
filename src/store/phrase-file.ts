/**
 * The stored phrases' vectors and names by row id, as fixed-width records in one file beside memory.db
 * (`memory.phrases.bin`, home/paths.ts phraseFilePath), read and written by the indexer alone. The
 * synonym upkeep of one new session reads the vector of every head of every bucket its new phrases
 * probe (580k phrases for ~600 new ones at 100,000 synthetic records): as SQLite rows at random that
 * is 6.7 µs a phrase; a record of a mapped file is a check and a copy.
 *
 * A cache of the entities table, never the truth: each record carries a check seeded with its row id,
 * so a torn append, a hole or a damaged page reads as absent (the caller reads that row from the store
 * and has the file rebuilt); any deletion of phrases removes the file, since a forgotten phrase's text
 * must not outlive forget; and its head names the store it caches (meta `store_id` and `deletions`, as
 * recall.bin's header does), so a store rebuilt, replaced or deleted from beneath it is never read
 * through it.
 *
 * Layout: a 32-byte head (magic, version, vector width, name bytes a record holds, the CRC-32 of the
 * store's identity), then record `id` at HEAD_BYTES + (id − 1) · recordBytes: its check (u32,
 * home/file-io.ts `wordsCheck` of the record's other words), name length (u16; LONG_NAME: too long,
 * read from the store), two spare bytes, the vector (f32 × dim), the name's UTF-8 bytes. Words are the
 * machine's (little-endian on every target); the file never leaves it.
 */
import { closeSync, constants, fstatSync, openSync, rmSync } from "node:fs";
import { readAligned, readAt, wordsCheck, writeAt } from "../home/file-io.ts";
import { phraseFilePath } from "../home/paths.ts";

const MAGIC = "TFPHRASE";
/** 2: records checked by wordsCheck (1: by CRC-32, a call and a view per record, ~0.45 s a session at 100k records). */
const VERSION = 2;
const HEAD_BYTES = 32;
/** A name longer than this is read from the store (phrases are short: capitalised words, identifiers). */
const NAME_BYTES = 56;
/** The name-length mark of a record whose name did not fit. */
const LONG_NAME = 0xffff;
/** Records written a call: one buffer, one write. */
const WRITE_BATCH = 4096;

export interface PhraseRow {
  id: number;
  phrase: string;
  /** The entities table's BLOB: f32 × dim. */
  vector: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class PhraseFile {
  private readonly recordBytes: number;
  private bytes: Uint8Array = new Uint8Array(0);
  private words: Uint32Array = new Uint32Array(0);
  /** The mapped file as floats: row id's vector is `dim` of them from `vectorAt(id)`. */
  floats: Float32Array = new Float32Array(0);
  /** Whether a record that did not check out was met (the file is then removed). */
  private damaged = false;

  private constructor(
    readonly path: string,
    readonly dim: number,
    /** The CRC-32 of the store's identity. */
    private readonly store: number,
  ) {
    this.recordBytes = 8 + dim * 4 + NAME_BYTES;
  }

  /**
   * The file for vectors `dim` wide of the store named `identity`, made current: rows past its last
   * record (`rowsAfter(id, upTo)`, in id order) appended, and the whole file rewritten from
   * `rowsAfter(0, upTo)` when it is absent or of another layout or store. Undefined where it cannot be
   * written (a read-only or full disk) or mapped: the caller reads the store.
   */
  static current(
    path: string,
    dim: number,
    identity: string,
    upTo: number,
    rowsAfter: (id: number, upTo: number) => Iterable<PhraseRow>,
  ): PhraseFile | undefined {
    const file = new PhraseFile(path, dim, Bun.hash.crc32(identity));
    try {
      let last = file.open();
      if (last < 0) {
        removePhraseFile(path);
        last = 0;
      }
      if (last < upTo) file.write(rowsAfter(last, upTo), last === 0);
    } catch {
      removePhraseFile(path);
      return undefined;
    }
    try {
      return file.reading(Bun.mmap(path, { shared: false }));
    } catch {
      // Where files cannot be mapped the store is read: reading the file whole (281 MB at 100,000
      // records) would cost more than the rows a session needs.
      return undefined;
    }
  }

  /**
   * The file as it is, read whole into memory (no mapping is held, so it can be removed while it is
   * read), with no record written; undefined where it is absent or of another layout or store. Forget
   * reads the phrases that stay through it once the file, which holds the forgotten ones' text, is gone.
   */
  static readWhole(path: string, dim: number, identity: string): PhraseFile | undefined {
    const file = new PhraseFile(path, dim, Bun.hash.crc32(identity));
    if (file.open() < 0) return undefined;
    let bytes: Uint8Array;
    try {
      // Records are read as 4-byte words.
      bytes = readAligned(path, 4);
    } catch {
      return undefined;
    }
    if (
      bytes.length < HEAD_BYTES ||
      !Buffer.from(bytes.buffer, bytes.byteOffset, HEAD_BYTES).equals(file.head())
    )
      return undefined;
    return file.reading(bytes);
  }

  /** This file, reading its records from `bytes` (the file's, 4-byte aligned). */
  private reading(bytes: Uint8Array): PhraseFile {
    this.bytes = bytes;
    this.floats = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2);
    this.words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2);
    return this;
  }

  /** The id of the file's last whole record (0: none), -1 when it is absent or of another layout or store. */
  private open(): number {
    let fd: number;
    try {
      fd = openSync(this.path, constants.O_RDONLY);
    } catch {
      return -1;
    }
    try {
      const size = fstatSync(fd).size;
      if (size < HEAD_BYTES || !readAt(fd, 0, HEAD_BYTES).equals(this.head())) return -1;
      return Math.floor((size - HEAD_BYTES) / this.recordBytes);
    } finally {
      closeSync(fd);
    }
  }

  /** The head this file has: magic, version, layout and store. */
  private head(): Buffer {
    const head = Buffer.alloc(HEAD_BYTES);
    head.write(MAGIC, 0, "latin1");
    head.writeUInt32LE(VERSION, 8);
    head.writeUInt32LE(this.dim, 12);
    head.writeUInt32LE(NAME_BYTES, 16);
    head.writeUInt32LE(this.store, 20);
    return head;
  }

  private offsetOf(id: number): number {
    return HEAD_BYTES + (id - 1) * this.recordBytes;
  }

  /** Writes the rows' records at their places (a fresh file: its head first). */
  private write(rows: Iterable<PhraseRow>, fresh: boolean): void {
    const fd = openSync(
      this.path,
      constants.O_RDWR | constants.O_CREAT | (fresh ? constants.O_TRUNC : 0),
      0o600,
    );
    try {
      if (fresh) writeAt(fd, this.head(), 0);
      // Consecutive ids go out in one write; a gap (a row id no phrase holds) starts another.
      // Its own memory (never a pooled slice): records are checked as 4-byte words.
      const buffer = Buffer.from(new ArrayBuffer(WRITE_BATCH * this.recordBytes));
      const words = new Uint32Array(buffer.buffer);
      let first = 0;
      let count = 0;
      const flush = () => {
        if (count) writeAt(fd, buffer.subarray(0, count * this.recordBytes), this.offsetOf(first));
        count = 0;
      };
      for (const row of rows) {
        if (count && (row.id !== first + count || count === WRITE_BATCH)) flush();
        if (!count) first = row.id;
        this.encode(row, buffer, words, count * this.recordBytes);
        count++;
      }
      flush();
    } finally {
      closeSync(fd);
    }
  }

  private encode(row: PhraseRow, into: Buffer, words: Uint32Array, at: number): void {
    const record = into.subarray(at, at + this.recordBytes);
    record.fill(0);
    const name = encoder.encode(row.phrase);
    const fits = name.length <= NAME_BYTES;
    record.writeUInt16LE(fits ? name.length : LONG_NAME, 4);
    record.set(row.vector.subarray(0, this.dim * 4), 8);
    if (fits) record.set(name, 8 + this.dim * 4);
    words[at >> 2] = wordsCheck(words, (at >> 2) + 1, (this.recordBytes >> 2) - 1, row.id);
  }

  /**
   * Where row `id`'s vector starts in `floats` (records are 4-byte aligned), or -1 when the file has no
   * good record of it, and then the file is removed (this mapping still reads its good records; the
   * next run rewrites it).
   */
  vectorAt(id: number): number {
    const { words, recordBytes } = this;
    const at = this.offsetOf(id) >> 2;
    const count = recordBytes >> 2;
    if (id > 0 && at + count <= words.length && wordsCheck(words, at + 1, count - 1, id) === words[at])
      return at + 2;
    if (!this.damaged) {
      this.damaged = true;
      removePhraseFile(this.path);
    }
    return -1;
  }

  /** Whether the record of row `id`, which checked out (`vectorAt`), holds its name (not too long for it). */
  holdsName(id: number): boolean {
    const at = this.offsetOf(id);
    return (this.bytes[at + 4] | (this.bytes[at + 5] << 8)) !== LONG_NAME;
  }

  /** The name of row `id`, whose record checked out (`vectorAt`); undefined: too long for its record. */
  nameOf(id: number): string | undefined {
    const { bytes } = this;
    const at = this.offsetOf(id);
    const length = bytes[at + 4] | (bytes[at + 5] << 8);
    if (length === LONG_NAME) return undefined;
    const start = at + 8 + this.dim * 4;
    return decoder.decode(bytes.subarray(start, start + length));
  }
}

/**
 * Removes a phrase file (its phrases changed in a way appending cannot follow). Something else in its
 * place (a directory) is left: writing there fails, and the store is read instead.
 */
function removePhraseFile(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {}
}

/** Removes the phrase file of the store at `storeFile` (none for a store in memory). */
export function removePhraseFileOf(storeFile: string): void {
  const path = phraseFilePath(storeFile);
  if (path) removePhraseFile(path);
}
