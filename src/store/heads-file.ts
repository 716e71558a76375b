/**
 * The synonym buckets' heads: each bucket's BUCKET_LIMIT phrases of lowest rank and the ties of the
 * last, by row id. The truth is `phrase_keys` (each phrase's rank and bucket keys, a row per phrase in
 * row-id order, so a session appends to it); a bucket's heads are looked up here, in arrays sorted by
 * key, never in a table ordered by key (one was: `phrase_buckets`, whose random inserts were two
 * thirds of the pages a new session wrote at 100,000 synthetic records).
 *
 * `BucketHeads` is a base (each bucket's heads as of one row id) and an overlay (every bucket key of
 * the phrases after it, sorted by key and rank): a bucket's heads are the lowest of its base heads and
 * its overlay entries, which is exact because phrases are only added between bases (the `limit` lowest
 * of a union are the `limit` lowest of the union of each part's `limit` lowest). Any deletion of
 * phrases makes a new base.
 *
 * The heads file beside memory.db (`memory.heads.bin`, home/paths.ts headsFilePath), read and written
 * by the indexer alone, keeps a base and a log of the phrases after it: each run appends its phrases,
 * and when the log passes REBUILD_SHARE of the base, base and log are merged into a new base (no table
 * scan). It holds row ids and ranks only (no phrase text, so nothing of a forgotten phrase outlives
 * forget through it), and is rebuilt from the table when it names another store, deletion count or
 * synonym rule. A run that ended before appending leaves phrases the log lacks: the next one reads
 * them from the table. A damaged base (its CRC) or a bad log record is no file or the log's end.
 *
 * Layout (32-bit words in the machine's order, the file never leaves it): a head of HEAD_WORDS words
 * (magic, version, CRC-32 of the store's identity and rule, the base's last row id, its bucket count n,
 * its entry count m, the CRC-32 of the base), then the base — ranks (m float64, first so they are
 * aligned), bucket keys (n, ascending), starts (n + 1), entries (m row ids, each bucket's in rank
 * order) — then the log: per phrase its row id, its rank (high and low words), its LSH_BANDS keys and
 * a check.
 */
import { closeSync, constants, openSync, renameSync, rmSync } from "node:fs";
import { readAligned, wordsCheck, writeAt } from "../home/file-io.ts";
import { headsFilePath } from "../home/paths.ts";
import { Growable } from "./growable.ts";
import { BUCKET_LIMIT, LSH_BANDS, LSH_BITS, SYNONYM_RULE } from "./synonyms.ts";

const MAGIC = 0x48534654; // "TFSH" in the machine's order
/** 2: ranks in the base and the log (1: row ids alone, the table gave the rest). */
const VERSION = 2;
const HEAD_WORDS = 8;
const LOG_WORDS = 4 + LSH_BANDS;
/**
 * The log's phrases, as a share of the base's last row id, past which base and log are merged into a
 * new base: every run sorts the log's entries (LSH_BANDS a phrase) to read them, and a merge writes the
 * whole base (~120 MB at 100,000 records, well under a second).
 */
const REBUILD_SHARE = 0.02;

/** A phrase's rank and bucket keys (a row of `phrase_keys`). */
export interface KeyedPhrase {
  id: number;
  rank: number;
  keys: ArrayLike<number>;
}

/** Phrases as columns: row ids, ranks, and LSH_BANDS keys each. */
export interface PhraseColumns {
  ids: Int32Array;
  ranks: Float64Array;
  keys: Int32Array;
}

/** Each bucket's heads: `keys` ascending, bucket i's entries (row ids) and ranks from starts[i] to starts[i + 1], by rank. */
export interface HeadsBase {
  keys: Int32Array;
  starts: Int32Array;
  entries: Int32Array;
  ranks: Float64Array;
}

/** Phrases as columns, from rows. */
export function phraseColumns(phrases: Iterable<KeyedPhrase>): PhraseColumns {
  const ids = new Growable(Int32Array);
  const ranks = new Growable(Float64Array);
  const keys = new Growable(Int32Array);
  for (const p of phrases) {
    ids.push(p.id);
    ranks.push(p.rank);
    for (let b = 0; b < LSH_BANDS; b++) keys.push(p.keys[b]);
  }
  return { ids: ids.view(), ranks: ranks.view(), keys: keys.view() };
}

/**
 * Phrase indexes by (rank, row id): the ranks sorted as numbers, then each phrase (in row-id order) put
 * at the first free place of its rank. PERF: a comparator sort took ~1 s for 879k phrases.
 */
function byRank(ranks: Float64Array, ids: Int32Array): Uint32Array {
  const sorted = ranks.slice().sort();
  // Callers give phrases in row-id order; any other order is sorted first.
  const byId = Uint32Array.from({ length: ids.length }, (_, i) => i);
  if (ids.some((id, i) => i > 0 && ids[i - 1] > id)) byId.sort((x, y) => ids[x] - ids[y]);
  const order = new Uint32Array(ids.length);
  const taken = new Uint8Array(ids.length);
  for (const p of byId) {
    let low = 0;
    let high = sorted.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (sorted[middle] < ranks[p]) low = middle + 1;
      else high = middle;
    }
    while (taken[low]) low++;
    taken[low] = 1;
    order[low] = p;
  }
  return order;
}

/**
 * The heads of every bucket the phrases are in (only the keys `only` marks, where given): at most
 * `limit` a bucket and the ties of the last. Band by band, a counting sort of the phrases in rank order.
 */
export function headsBaseOf(phrases: PhraseColumns, limit = BUCKET_LIMIT, only?: Uint8Array): HeadsBase {
  const { ids, ranks, keys } = phrases;
  const order = byRank(ranks, ids);
  const width = 2 ** LSH_BITS;
  const start = new Int32Array(width + 1);
  const members = new Uint32Array(ids.length);
  const bucketKeys = new Growable(Int32Array);
  const starts = new Growable(Int32Array);
  const entries = new Growable(Int32Array);
  const entryRanks = new Growable(Float64Array);
  for (let band = 0; band < LSH_BANDS; band++) {
    start.fill(0);
    for (let p = 0; p < ids.length; p++) start[(keys[p * LSH_BANDS + band] & (width - 1)) + 1]++;
    for (let b = 0; b < width; b++) start[b + 1] += start[b];
    const fill = start.slice(0, width);
    for (const p of order) members[fill[keys[p * LSH_BANDS + band] & (width - 1)]++] = p;
    for (let b = 0; b < width; b++) {
      const from = start[b];
      const to = start[b + 1];
      const key = band * width + b;
      if (from === to || (only && !only[key])) continue;
      bucketKeys.push(key);
      starts.push(entries.length);
      for (let i = from; i < to; i++) {
        const p = members[i];
        if (i - from >= limit && ranks[p] !== ranks[members[i - 1]]) break;
        entries.push(ids[p]);
        entryRanks.push(ranks[p]);
      }
    }
  }
  starts.push(entries.length);
  return {
    keys: bucketKeys.view(),
    starts: starts.view(),
    entries: entries.view(),
    ranks: entryRanks.view(),
  };
}

/**
 * Bits of a bucket key below its prefix: a sorted key array's directory gives each prefix's range, so
 * a lookup searches ~2^KEY_SHIFT keys' worth of one range instead of the whole array (at 100,000
 * records 2.1 M keys: 21 random reads a lookup, ~1 µs each of a session's ~150k, against 2–3).
 */
const KEY_SHIFT = 8;

/** An ascending key array with a directory of where each key prefix starts. */
class SortedKeys {
  private readonly directory: Int32Array;

  constructor(readonly keys: Int32Array) {
    const prefixes = (LSH_BANDS * 2 ** LSH_BITS) >>> KEY_SHIFT;
    this.directory = new Int32Array(prefixes + 1);
    let i = 0;
    for (let p = 0; p <= prefixes; p++) {
      while (i < keys.length && keys[i] >>> KEY_SHIFT < p) i++;
      this.directory[p] = i;
    }
  }

  /** The first place holding at least `key`. */
  lowerBound(key: number): number {
    const { keys, directory } = this;
    const prefix = key >>> KEY_SHIFT;
    let low = directory[prefix];
    let high = directory[prefix + 1];
    while (low < high) {
      const middle = (low + high) >> 1;
      if (keys[middle] < key) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** Where `key` is (-1: absent). */
  find(key: number): number {
    const at = this.lowerBound(key);
    return at < this.keys.length && this.keys[at] === key ? at : -1;
  }
}

export class BucketHeads {
  private readonly baseKeys: SortedKeys;
  private readonly overlay: SortedKeys;

  private constructor(
    private readonly base: HeadsBase,
    /** The overlay: one entry per bucket key of each phrase after the base, by (key, rank, row id). */
    private readonly overlayKeys: Int32Array,
    private readonly overlayIds: Int32Array,
    private readonly overlayRanks: Float64Array,
    /** The file this came from, and its log's end: the last row id it holds and its end in bytes. */
    private readonly file?: { path: string; baseUpTo: number; logUpTo: number; logEnd: number },
  ) {
    this.baseKeys = new SortedKeys(base.keys);
    this.overlay = new SortedKeys(overlayKeys);
  }

  /** Heads from a base alone (no file): the table's phrases, or some of their buckets. */
  static of(base: HeadsBase): BucketHeads {
    return new BucketHeads(base, new Int32Array(0), new Int32Array(0), new Float64Array(0));
  }

  /**
   * The heads file of the store named `identity` as of row `upTo`: its base and the phrases after it
   * (the log's, then `unlogged(after, upTo)` for those past the log's end); undefined where there is
   * none usable (absent, of another store or rule, damaged). `whole`: read into memory instead of
   * mapped (so the file can be removed while it is read) and never appended to.
   */
  static open(
    path: string,
    identity: string,
    upTo: number,
    unlogged: (after: number, upTo: number) => Iterable<KeyedPhrase>,
    options: { whole?: boolean } = {},
  ): BucketHeads | undefined {
    let words: Int32Array;
    try {
      // The base's ranks are read as float64 (a mapping starts at a page).
      const bytes = options.whole ? readAligned(path, 8) : Bun.mmap(path, { shared: false });
      words = new Int32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2);
    } catch {
      return undefined;
    }
    if (words.length < HEAD_WORDS || words[0] !== MAGIC || words[1] !== VERSION) return undefined;
    if (words[2] >>> 0 !== nameOf(identity) || words[3] > upTo) return undefined;
    const [baseUpTo, n, m] = [words[3], words[4], words[5]];
    const baseEnd = HEAD_WORDS + 2 * m + n + (n + 1) + m;
    if (n < 0 || m < 0 || baseEnd > words.length) return undefined;
    const baseBytes = new Uint8Array(
      words.buffer,
      words.byteOffset + HEAD_WORDS * 4,
      (baseEnd - HEAD_WORDS) * 4,
    );
    if (Bun.hash.crc32(baseBytes) !== words[6] >>> 0) return undefined;
    const ranks = new Float64Array(words.buffer, words.byteOffset + HEAD_WORDS * 4, m);
    let at = HEAD_WORDS + 2 * m;
    const base: HeadsBase = {
      ranks,
      keys: words.subarray(at, (at += n)),
      starts: words.subarray(at, (at += n + 1)),
      entries: words.subarray(at, (at += m)),
    };
    // The log up to its first record that does not check out (a torn append: written over next time).
    const after: KeyedPhrase[] = [];
    let logUpTo = baseUpTo;
    let logEnd = at * 4;
    for (; at + LOG_WORDS <= words.length; at += LOG_WORDS) {
      const id = words[at];
      if (id <= logUpTo || wordsCheck(words, at, LOG_WORDS - 1, id) !== words[at + LOG_WORDS - 1] >>> 0)
        break;
      if (id <= upTo)
        after.push({
          id,
          rank: (words[at + 1] >>> 0) * 2 ** 32 + (words[at + 2] >>> 0),
          keys: words.subarray(at + 3, at + 3 + LSH_BANDS),
        });
      logUpTo = id;
      logEnd = (at + LOG_WORDS) * 4;
    }
    if (logUpTo < upTo) for (const p of unlogged(logUpTo, upTo)) after.push(p);
    const overlay = phraseColumns(after);
    // Entries by (key, rank, row id): each one number, key · 2^28 + the phrase's place by rank, sorted
    // as numbers (a comparator over a session's ~300k entries cost ~0.15 s).
    const rankOrder = byRank(overlay.ranks, overlay.ids);
    const sorted = new Float64Array(overlay.keys.length);
    rankOrder.forEach((p, place) => {
      for (let band = 0; band < LSH_BANDS; band++)
        sorted[p * LSH_BANDS + band] = overlay.keys[p * LSH_BANDS + band] * 2 ** 28 + place;
    });
    sorted.sort();
    const keys = new Int32Array(sorted.length);
    const ids = new Int32Array(sorted.length);
    const entryRanks = new Float64Array(sorted.length);
    sorted.forEach((value, i) => {
      const p = rankOrder[value % 2 ** 28];
      keys[i] = Math.floor(value / 2 ** 28);
      ids[i] = overlay.ids[p];
      entryRanks[i] = overlay.ranks[p];
    });
    return new BucketHeads(
      base,
      keys,
      ids,
      entryRanks,
      options.whole ? undefined : { path, baseUpTo, logUpTo, logEnd },
    );
  }

  /**
   * These heads with some buckets' replaced (their row ids and ranks, in rank order): after phrases
   * left, the buckets they were in, read again from the table, and every other bucket as it was.
   */
  replacing(buckets: Map<number, { ids: number[]; ranks: number[] }>): BucketHeads {
    const heads = new BucketHeads(this.base, this.overlayKeys, this.overlayIds, this.overlayRanks, this.file);
    heads.replaced = buckets;
    return heads;
  }

  private replaced?: Map<number, { ids: number[]; ranks: number[] }>;

  /**
   * Appends the row ids of bucket `key`'s heads to `out`, in rank order (their ranks to `ranks`, where given): its
   * `limit` lowest ranks and the ties of the last (`limit` at most the base's, BUCKET_LIMIT).
   */
  headsOf(
    key: number,
    limit: number,
    out: { push(id: number): void },
    ranks?: { push(rank: number): void },
  ): void {
    this.select(key, limit, out, ranks);
  }

  /** headsOf, with each head's rank appended to `ranks` where given. */
  private select(
    key: number,
    limit: number,
    out: { push(id: number): void },
    ranks?: { push(rank: number): void },
  ): void {
    const replaced = this.replaced?.get(key);
    if (replaced) {
      for (let i = 0; i < replaced.ids.length; i++) {
        if (i >= limit && replaced.ranks[i] !== replaced.ranks[i - 1]) return;
        out.push(replaced.ids[i]);
        ranks?.push(replaced.ranks[i]);
      }
      return;
    }
    const { base, overlayKeys, overlayIds, overlayRanks } = this;
    const b = this.baseKeys.find(key);
    let i = b < 0 ? 0 : base.starts[b];
    const baseEnd = b < 0 ? 0 : base.starts[b + 1];
    let j = overlayKeys.length ? this.overlay.lowerBound(key) : 0;
    let kept = 0;
    let last = -1;
    for (;;) {
      const fromBase = i < baseEnd;
      const fromOverlay = j < overlayKeys.length && overlayKeys[j] === key;
      if (!fromBase && !fromOverlay) return;
      const takeBase = fromBase && (!fromOverlay || base.ranks[i] <= overlayRanks[j]);
      const rank = takeBase ? base.ranks[i] : overlayRanks[j];
      if (kept >= limit && rank !== last) return;
      out.push(takeBase ? base.entries[i++] : overlayIds[j++]);
      ranks?.push(rank);
      kept++;
      last = rank;
    }
  }

  /** Base and overlay as one base (what a new file holds). */
  merged(): HeadsBase {
    const keys = new Growable(Int32Array);
    const starts = new Growable(Int32Array);
    const entries = new Growable(Int32Array);
    const ranks = new Growable(Float64Array);
    const { base, overlayKeys } = this;
    let i = 0;
    let j = 0;
    while (i < base.keys.length || j < overlayKeys.length) {
      const key =
        j >= overlayKeys.length || (i < base.keys.length && base.keys[i] <= overlayKeys[j])
          ? base.keys[i]
          : overlayKeys[j];
      keys.push(key);
      starts.push(entries.length);
      this.select(key, BUCKET_LIMIT, entries, ranks);
      if (i < base.keys.length && base.keys[i] === key) i++;
      while (j < overlayKeys.length && overlayKeys[j] === key) j++;
    }
    starts.push(entries.length);
    return { keys: keys.view(), starts: starts.view(), entries: entries.view(), ranks: ranks.view() };
  }

  /** Whether the phrases after the base up to row `upTo` have grown past `share` of it, so a new base pays. */
  stale(upTo: number, share = REBUILD_SHARE): boolean {
    const baseUpTo = this.file?.baseUpTo ?? 0;
    return upTo - baseUpTo > share * baseUpTo;
  }

  /** Appends to the file's log the phrases after its last (`keysOf(after, upTo)`, in row-id order). */
  append(upTo: number, keysOf: (after: number, upTo: number) => Iterable<KeyedPhrase>): void {
    const { file } = this;
    if (!file || file.logUpTo >= upTo) return;
    const records: number[] = [];
    for (const p of keysOf(file.logUpTo, upTo))
      records.push(p.id, Math.floor(p.rank / 2 ** 32), p.rank % 2 ** 32, ...Array.from(p.keys), 0);
    if (!records.length) return;
    const words = Int32Array.from(records);
    for (let at = 0; at < words.length; at += LOG_WORDS)
      words[at + LOG_WORDS - 1] = wordsCheck(words, at, LOG_WORDS - 1, words[at]);
    const fd = openSync(file.path, constants.O_WRONLY);
    try {
      writeAt(fd, new Uint8Array(words.buffer), file.logEnd);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Writes a heads file anew for the store named `identity`, its base `base` as of row `upTo`: a
   * temporary file renamed over the old, so a reader sees the old file or the new one whole.
   */
  static write(path: string, identity: string, upTo: number, base: HeadsBase): void {
    const { keys, starts, entries, ranks } = base;
    const words = new Int32Array(2 * ranks.length + keys.length + starts.length + entries.length);
    new Float64Array(words.buffer, 0, ranks.length).set(ranks);
    let at = 2 * ranks.length;
    for (const part of [keys, starts, entries]) {
      words.set(part, at);
      at += part.length;
    }
    const head = new Int32Array(HEAD_WORDS);
    head.set([MAGIC, VERSION, nameOf(identity), upTo, keys.length, entries.length]);
    head[6] = Bun.hash.crc32(new Uint8Array(words.buffer));
    // One name (one indexer a project at a time): a build killed half-way leaves a file the next overwrites.
    const temporary = `${path}.tmp`;
    const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o600);
    try {
      writeAt(fd, new Uint8Array(head.buffer), 0);
      writeAt(fd, new Uint8Array(words.buffer), HEAD_WORDS * 4);
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

/** Removes the heads file of the store at `storeFile`, and a build's leftover (none for a store in memory). */
export function removeHeadsFileOf(storeFile: string): void {
  const path = headsFilePath(storeFile);
  if (path)
    for (const file of [path, `${path}.tmp`])
      try {
        rmSync(file, { force: true });
      } catch {}
}
