/**
 * The synonym buckets' heads as of a base point, beside memory.db (`memory.heads.bin`, home/paths.ts
 * headsFilePath), read and written by the indexer alone. One new session's synonym upkeep reads the
 * heads of ~125k buckets (~950k rows) at 100,000 synthetic records; through phrase_buckets' key that is
 * two B-tree searches a bucket and ~1.1 s, as a sorted array of a mapped file a binary search.
 *
 * A cache of phrase_buckets, never the truth, and it holds row ids only (no phrase text, so nothing of
 * a forgotten phrase can outlive forget through it). Its base is each bucket's heads as the store had
 * them up to one row id; a phrase added after that enters some buckets, whose heads may have changed:
 * the log after the base lists those phrases with their bucket keys, and such a "changed" bucket is read
 * from the store. Every run appends its phrases to the log at its end; the base is rebuilt from the
 * table when the log grows past REBUILD_SHARE of it, or when the file names another store, deletion
 * count or synonym rule (any deletion of phrases: forget, a rule recomputed). A run that ended before
 * appending leaves phrases the log lacks: the next one finds their keys from their vectors. A damaged
 * base (its CRC) or a bad log record is no file: the store is read, and the next run's end rebuilds it.
 *
 * Layout (32-bit words in the machine's order, the file never leaves it): a head of HEAD_WORDS words
 * (magic, version, CRC-32 of the store's identity and rule, the base's last row id, its bucket count n,
 * its entry count m, the CRC-32 of the base), then the base — bucket keys (n, ascending), starts (n + 1),
 * entries (m: each bucket's heads by row id, the rows phrase_buckets gives for it: its `limit` lowest
 * ranks and the ties of the last) — then the log: per phrase its row id, its LSH_BANDS keys and a check.
 */
import { closeSync, constants, openSync, renameSync, rmSync } from "node:fs";
import { wordsCheck, writeAt } from "../home/file-io.ts";
import { headsFilePath } from "../home/paths.ts";
import { BUCKET_LIMIT, LSH_BANDS, LSH_BITS, SYNONYM_RULE } from "./synonyms.ts";

const MAGIC = 0x48534654; // "TFSH" in the machine's order
const VERSION = 1;
const HEAD_WORDS = 8;
const LOG_WORDS = 2 + LSH_BANDS;
/**
 * The log's phrases, as a share of the base's last row id, past which the base is built again: the
 * buckets they entered are read from the store (at 5 % of 878k phrases, ~17 % of a session's buckets at
 * most), and a base costs 6–7 s to build at 100,000 records with the store in the page cache (once per
 * ~110 sessions there).
 */
const REBUILD_SHARE = 0.05;

/** A phrase added after the base, and its bucket keys. */
export interface KeyedPhrase {
  id: number;
  keys: ArrayLike<number>;
}

export class HeadsFile {
  /** Whether a phrase entered bucket `key` after the base (up to the rows asked for): read it from the store. */
  readonly changed = new Uint8Array(LSH_BANDS * 2 ** LSH_BITS);

  private constructor(
    private readonly path: string,
    private readonly keys: Int32Array,
    private readonly starts: Int32Array,
    private readonly entries: Int32Array,
    /** The base's last row id. */
    private readonly baseUpTo: number,
    /** The last row id the log holds (the base's where it is empty), and where the log ends in bytes. */
    private logUpTo: number,
    private logEnd: number,
  ) {}

  /**
   * The file of the store named `identity` with the buckets its log's phrases up to row `upTo` entered
   * marked changed; undefined where there is none usable (absent, of another store or rule, damaged).
   */
  static open(path: string, identity: string, upTo: number): HeadsFile | undefined {
    let words: Int32Array;
    try {
      const bytes = Bun.mmap(path, { shared: false });
      words = new Int32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2);
    } catch {
      return undefined;
    }
    if (words.length < HEAD_WORDS || words[0] !== MAGIC || words[1] !== VERSION) return undefined;
    if (words[2] >>> 0 !== nameOf(identity) || words[3] > upTo) return undefined;
    const [baseUpTo, n, m] = [words[3], words[4], words[5]];
    const baseEnd = HEAD_WORDS + n + (n + 1) + m;
    if (n < 0 || m < 0 || baseEnd > words.length) return undefined;
    const base = new Uint8Array(words.buffer, words.byteOffset + HEAD_WORDS * 4, (baseEnd - HEAD_WORDS) * 4);
    if (Bun.hash.crc32(base) !== words[6] >>> 0) return undefined;
    let at = HEAD_WORDS;
    const keys = words.subarray(at, (at += n));
    const starts = words.subarray(at, (at += n + 1));
    const entries = words.subarray(at, (at += m));
    const file = new HeadsFile(path, keys, starts, entries, baseUpTo, baseUpTo, at * 4);
    // The log up to its first record that does not check out (a torn append: written over next time).
    for (; at + LOG_WORDS <= words.length; at += LOG_WORDS) {
      const id = words[at];
      if (id <= file.logUpTo || wordsCheck(words, at, LOG_WORDS - 1, id) !== words[at + LOG_WORDS - 1] >>> 0)
        break;
      if (id <= upTo) file.mark(words.subarray(at + 1, at + 1 + LSH_BANDS));
      file.logUpTo = id;
      file.logEnd = (at + LOG_WORDS) * 4;
    }
    return file;
  }

  /** Marks the buckets of the phrases up to row `upTo` the log lacks (a run that ended before its append). */
  markUnlogged(upTo: number, keysOf: (after: number, upTo: number) => Iterable<KeyedPhrase>): void {
    if (this.logUpTo < upTo) for (const phrase of keysOf(this.logUpTo, upTo)) this.mark(phrase.keys);
  }

  private mark(keys: ArrayLike<number>): void {
    for (let b = 0; b < keys.length; b++) this.changed[keys[b]] = 1;
  }

  /** Appends the row ids of bucket `key`'s heads in the base to `out` (an unchanged bucket: its heads now). */
  headsOf(key: number, out: number[]): void {
    const { keys, starts, entries } = this;
    let low = 0;
    let high = keys.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const found = keys[middle];
      if (found < key) low = middle + 1;
      else if (found > key) high = middle - 1;
      else {
        for (let e = starts[middle]; e < starts[middle + 1]; e++) out.push(entries[e]);
        return;
      }
    }
  }

  /** Whether the log up to row `upTo` has grown past `share` of the base, so building it again pays. */
  stale(upTo: number, share = REBUILD_SHARE): boolean {
    return upTo - this.baseUpTo > share * this.baseUpTo;
  }

  /** Appends to the log the phrases after its last (`keysOf(after, upTo)`, in row-id order). */
  append(upTo: number, keysOf: (after: number, upTo: number) => Iterable<KeyedPhrase>): void {
    if (this.logUpTo >= upTo) return;
    const records: number[] = [];
    for (const phrase of keysOf(this.logUpTo, upTo)) records.push(phrase.id, ...Array.from(phrase.keys), 0);
    if (!records.length) return;
    const words = Int32Array.from(records);
    for (let at = 0; at < words.length; at += LOG_WORDS)
      words[at + LOG_WORDS - 1] = wordsCheck(words, at, LOG_WORDS - 1, words[at]);
    const fd = openSync(this.path, constants.O_WRONLY);
    try {
      writeAt(fd, new Uint8Array(words.buffer), this.logEnd);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Writes the file anew for the store named `identity` from its bucket rows up to row `upTo` in
   * (key, rank) order, `[key, rank, entity]`: a temporary file renamed over the old, so a reader sees
   * the old file or the new one whole.
   */
  static write(path: string, identity: string, upTo: number, rows: Iterable<[number, number, number]>): void {
    const keys = new Growable();
    const starts = new Growable();
    const entries = new Growable();
    let key = -1;
    let kept = 0;
    let lastRank = 0;
    for (const [k, rank, entity] of rows) {
      if (k !== key) {
        key = k;
        kept = 0;
        keys.push(k);
        starts.push(entries.length);
      }
      // A bucket's `limit` lowest ranks, and the rows tied with the last of them.
      if (kept < BUCKET_LIMIT || rank === lastRank) {
        entries.push(entity);
        kept++;
        lastRank = rank;
      }
    }
    starts.push(entries.length);
    const base = new Int32Array(keys.length + starts.length + entries.length);
    base.set(keys.view(), 0);
    base.set(starts.view(), keys.length);
    base.set(entries.view(), keys.length + starts.length);
    const head = new Int32Array(HEAD_WORDS);
    head.set([MAGIC, VERSION, nameOf(identity), upTo, keys.length, entries.length]);
    head[6] = Bun.hash.crc32(new Uint8Array(base.buffer));
    // One name (one indexer a project at a time): a build killed half-way leaves a file the next overwrites.
    const temporary = `${path}.tmp`;
    const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o600);
    try {
      writeAt(fd, new Uint8Array(head.buffer), 0);
      writeAt(fd, new Uint8Array(base.buffer), HEAD_WORDS * 4);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  }
}

/** The CRC-32 naming the store and the synonym rule a file was built for. */
function nameOf(identity: string): number {
  return Bun.hash.crc32(`${identity}/${SYNONYM_RULE}`);
}

/** An Int32Array that grows as rows come (a bucket's count is not known before its rows). */
class Growable {
  private data = new Int32Array(1024);
  length = 0;

  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }

  view(): Int32Array {
    return this.data.subarray(0, this.length);
  }
}

/** Removes the heads file of the store at `storeFile`, and a build's leftover (none for a store in memory). */
export function removeHeadsFileOf(storeFile: string): void {
  const path = headsFilePath(storeFile);
  if (path)
    for (const file of [path, `${path}.tmp`])
      try {
        rmSync(file, { force: true });
      } catch {}
}
