/**
 * The synonym edges between phrase nodes: each phrase's k nearest at cosine ≥ a threshold, candidates
 * from LSH buckets. The rule and its incremental upkeep live beside the store, which keeps each phrase's
 * bucket keys (`phrase_keys`, their heads in heads-file.ts) and repairs the edges when phrases leave;
 * the indexer adds phrases through it.
 */
import type { SynonymEdge } from "./types.ts";

/** HippoRAG 2's synonymy threshold on phrase-embedding cosine. */
export const SYNONYM_THRESHOLD = 0.8;

/**
 * Synonym neighbours each phrase keeps: its k nearest above the threshold, by (cosine, then phrase text),
 * and an edge joins two phrases when either is among the other's k. A function of the set of phrases
 * alone, so the graph is the same in whatever order sessions were indexed, and forget stays exact.
 * Uncapped, a large vocabulary of look-alike identifiers made 95 % of all edges synonym edges.
 */
export const SYNONYM_NEIGHBOURS = 5;

/**
 * Candidate pairs come from random-hyperplane LSH: each band is LSH_BITS sign bits of the vector
 * against fixed pseudo-random hyperplanes, stored as one bucket key; a new phrase probes its own key and
 * the LSH_BITS keys one bit away in every band (multi-probe), and is compared only with what they hold.
 * Each bit agrees with probability q = 1 − acos(c)/π for a pair at cosine c, so a band finds the pair
 * with probability q^b + b·q^(b−1)·(1 − q): at c = 0.8 about 0.09 per band and 78 % over 16 bands, at
 * 0.85 92 %, at 0.9 99 % (the k nearest are mostly far above 0.8). 2^18 keys per band keep a newcomer's
 * candidates near 16 · 19 · N / 2^18: about 800 at N = 700,000 phrases.
 */
export const LSH_BANDS = 16;
export const LSH_BITS = 18;

/**
 * A bucket's candidates are its BUCKET_LIMIT phrases of lowest rank (`phraseRank`, a hash of the text):
 * bottom-k sampling, so which phrases a bucket offers depends on its set of phrases alone, and a
 * newcomer changes at most one of them (it pushes out the highest-ranked, or is not among them). A dense
 * cluster of look-alikes (error codes, generated names) sharing a bucket offers a fixed sample of itself
 * instead of all of it, so a newcomer's comparisons are bounded by LSH_BANDS · (LSH_BITS + 1) ·
 * BUCKET_LIMIT whatever the store's size. (The rule before closed a bucket past the limit: a newcomer
 * closing one made every list that met a candidate through it be recomputed, 2,740 lists for one
 * session on the 100,000-record synthetic store.) 16, not 8: 8 halves a session's synonym upkeep there
 * but its candidates hold 32 % of a phrase's true 5 nearest instead of 46 % (docs/memory.md).
 */
export const BUCKET_LIMIT = 16;

/** Names the synonym rule a store's edges follow: a store built under another is recomputed. */
export const SYNONYM_RULE = `knn${SYNONYM_NEIGHBOURS}-t${SYNONYM_THRESHOLD}-lsh${LSH_BANDS}x${LSH_BITS}-bottom${BUCKET_LIMIT}`;

/**
 * A phrase's rank in its buckets: a 53-bit hash of its text (two multiplicative lanes, then mixed), the
 * same in every process; two phrases of one rank are ordered by their text.
 */
export function phraseRank(phrase: string): number {
  let lo = 0x811c9dc5;
  let hi = 0x01000193 ^ phrase.length;
  for (let i = 0; i < phrase.length; i++) {
    const c = phrase.charCodeAt(i);
    lo = Math.imul(lo ^ c, 0x01000193);
    hi = Math.imul(hi ^ c, 0x5bd1e995);
    hi ^= hi >>> 13;
  }
  lo ^= lo >>> 16;
  lo = Math.imul(lo, 0x85ebca6b);
  lo ^= lo >>> 13;
  hi = Math.imul(hi ^ (hi >>> 16), 0xc2b2ae35);
  hi ^= hi >>> 16;
  return (hi >>> 11) * 2 ** 32 + (lo >>> 0);
}

/**
 * The hyperplanes of `dim`-wide vectors, the same in every process (a fixed-seed generator), stored
 * dimension-major (`planes[d · P + p]`) so a vector's P projections are summed one dimension at a time.
 */
const planesByDim = new Map<number, Float64Array>();
const PLANES = LSH_BANDS * LSH_BITS;

function hyperplanes(dim: number): Float64Array {
  let planes = planesByDim.get(dim);
  if (planes) return planes;
  planes = new Float64Array(PLANES * dim);
  let seed = 0x5eed_1234;
  const uniform = () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return (seed + 1) / 2 ** 32;
  };
  // Gaussian components (Box–Muller) make the hyperplanes' directions uniform on the sphere.
  for (let p = 0; p < PLANES; p++)
    for (let d = 0; d < dim; d++)
      planes[d * PLANES + p] = Math.fround(
        Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform()),
      );
  planesByDim.set(dim, planes);
  return planes;
}

const projections = new Float64Array(PLANES);

/** The keys a phrase is looked up under: each band's key and those one bit away from it. */
export function probeKeys(keys: number[]): number[] {
  const out: number[] = [];
  for (const key of keys) {
    out.push(key);
    for (let bit = 0; bit < LSH_BITS; bit++) out.push(key ^ (1 << bit));
  }
  return out;
}

/**
 * A vector's projections on the LSH_BANDS · LSH_BITS hyperplanes, band by band: bit `k` of band b's
 * key is the sign of projection b · LSH_BITS + (LSH_BITS − 1 − k). The array is reused by the next call.
 */
export function bandProjections(vector: Float32Array, dim = vector.length): Float64Array {
  const planes = hyperplanes(dim);
  projections.fill(0);
  for (let d = 0; d < dim; d++) {
    const x = vector[d];
    const row = d * PLANES;
    for (let p = 0; p < PLANES; p++) projections[p] += planes[row + p] * x;
  }
  return projections;
}

/** A vector's LSH_BANDS bucket keys (band number and its sign bits in one integer). */
export function bandKeys(vector: Float32Array, dim = vector.length): number[] {
  return keysOfProjections(bandProjections(vector, dim));
}

/** The bucket keys of bandProjections' projections. */
export function keysOfProjections(projections: Float64Array): number[] {
  const keys: number[] = [];
  for (let band = 0; band < LSH_BANDS; band++) {
    let bits = 0;
    for (let bit = 0; bit < LSH_BITS; bit++)
      bits = (bits << 1) | (projections[band * LSH_BITS + bit] >= 0 ? 1 : 0);
    keys.push(band * 2 ** LSH_BITS + bits);
  }
  return keys;
}

/** Cosine of two L2-normalised rows, summed in one fixed order, so the same pair always scores the same. */
export function cosine(v: Float32Array, w: Float32Array): number {
  let s = 0;
  for (let d = 0; d < v.length; d++) s += v[d] * w[d];
  return s;
}

/**
 * Dimensions scored before the bound check. Model2vec models are PCA-rotated, so the leading dimensions
 * carry most of a vector's energy: after them, partial + |tail(v)|·|tail(w)| (Cauchy–Schwarz) bounds the
 * cosine, and most candidates are ruled out without reading their tails.
 */
const BOUND_DIMS = 16;

/** The norm of a row past BOUND_DIMS. */
function tailNorm(v: Float32Array, at = 0, dim = v.length): number {
  let s = 0;
  for (let d = BOUND_DIMS; d < dim; d++) s += v[at + d] * v[at + d];
  return Math.sqrt(s);
}

/** Whether neighbour (b, sb) ranks before (a, sa): higher cosine first, then the phrase text. */
function ranksBefore(b: string, sb: number, a: string, sa: number): boolean {
  return sb > sa || (sb === sa && b < a);
}

/** The k best of a neighbour list by (cosine, then phrase text). */
export function nearest(neighbours: Iterable<[string, number]>, k = SYNONYM_NEIGHBOURS): [string, number][] {
  const best: [string, number][] = [];
  for (const [phrase, score] of neighbours) {
    let at = best.length;
    while (at > 0 && ranksBefore(phrase, score, best[at - 1][0], best[at - 1][1])) at--;
    if (at >= k) continue;
    best.splice(at, 0, [phrase, score]);
    if (best.length > k) best.pop();
  }
  return best;
}

/** Where the synonym graph reads stored phrases: the store, as it was when a run started. */
export interface SynonymSource {
  /** Nothing stored to read (a first run): the graph then never asks. */
  readonly empty?: boolean;
  /**
   * The lowest-ranked stored phrases of each of these buckets: at least `limit` where a bucket holds
   * that many, and every phrase ranked no higher than its limit-th (ties by rank all there), each with
   * its rank, the bucket it came from, and its vector the first time this source returns the phrase
   * (the graph keeps every phrase it is given).
   */
  bucketHeads(keys: number[], limit: number): HeadRows;
  /** The name of a stored phrase that bucketHeads gave without one (by its row id). */
  phraseName?(id: number): string;
  /** Stored phrases' row ids and vectors (absent: not stored). */
  phraseVectors(phrases: string[]): Map<string, { id: number; vector: Float32Array }>;
  /**
   * Stored phrases' synonym edges (other phrase, cosine, the other's row id); a phrase with none may
   * be absent. `ids[i]`: the row id of `phrases[i]` where the caller knows it (0: not known).
   */
  synonymNeighbours(phrases: string[], ids?: ArrayLike<number>): Map<string, [string, number, number][]>;
  /** Runs `work`, which calls the reads above, with what they read held open across them. */
  reading?<T>(work: () => T): T;
}

/**
 * Bucket heads as columns. The phrases, each once: `phrases[p]`, its row id `ids[p]`, its vector (where
 * the source gives it: the first call to return the phrase) the `dim` floats of `vectors[p]` from
 * `vectorAt[p]`, a view of a whole file's records that the phrases share, so a session's ~500k phrases
 * at 100,000 records make no object or view each. Row i: phrase `heads[i]` heads bucket `keys[i]`.
 * A phrase's name may be left out (undefined: the source's `phraseName` gives it when asked), and its
 * rank (`ranks[p]`, phraseRank of its name) given where the source keeps it: of the ~500k heads a
 * session meets at 100,000 records, only the few thousand that become neighbours are ever named. The
 * columns are read before the source's next call, which may reuse their memory.
 */
export interface HeadRows {
  phrases: (string | undefined)[];
  ranks?: ArrayLike<number>;
  ids: ArrayLike<number>;
  vectors: (Float32Array | undefined)[];
  vectorAt: ArrayLike<number>;
  keys: ArrayLike<number>;
  heads: ArrayLike<number>;
}

/** What a set of new phrases changes: edges to add (or revive) and edges no longer kept. */
export interface SynonymChanges {
  add: SynonymEdge[];
  drop: { a: string; b: string }[];
}

type Neighbours = [string, number][];

/**
 * The capped synonym graph as phrases arrive or leave. A bucket's heads are its `limit` phrases of
 * lowest (rank, text); two phrases are candidates when, in some band, their bucket keys are at most one
 * bit apart and each is among its own bucket's heads. Each phrase keeps the k best candidates at
 * cosine ≥ the threshold. All of it depends on the set of phrases alone.
 *
 * Holds the phrases it met by number (those a run registered, and stored ones read as heads of a
 * bucket or as an edge's end) and each bucket's heads once read, so a batch not written yet is seen by
 * the next one and a stored bucket is read once per run; the run's cost follows the buckets its new
 * phrases touch, each bounded by `limit`.
 */
export class SynonymGraph {
  /**
   * Phrases met, by number: names, ranks, vectors, norms past BOUND_DIMS, bucket keys (LSH_BANDS per
   * phrase). Phrase n's vector is the `dim` floats from `vectorAt[n]` of `mapped` (where `inMapped[n]`)
   * or of `flat`: stored phrases' vectors are read where the source keeps them (its mapped file), not
   * copied (a session's ~500k at 100,000 records were 128 MB of fresh pages, filled and grown twice).
   */
  private readonly names: (string | undefined)[] = [];
  /** Each phrase's row id (0: not stored, a newcomer), so a name left out can be asked for. */
  private rowOf = new Int32Array(1024);
  /**
   * Numbers by text, for the phrases met by name (newcomers, edges' ends, repairs), and by row id
   * (`byRow[id]` = number + 1) for stored ones: a session's ~490k bucket heads at 100,000 records are
   * looked up by row id only (a string Map of them cost ~0.25 s a session). A stored phrase met by
   * name is found by its row id (the source gives it) and gets its name entered then.
   */
  private readonly numbers = new Map<string, number>();
  private byRow = new Int32Array(0);
  /** Row ids of edges' other ends, from synonymNeighbours, until readVectors looks them up. */
  private readonly endRows = new Map<string, number>();
  private ranks = new Float64Array(1024);
  private flat = new Float32Array(0);
  /** Floats of `flat` in use. */
  private flatUsed = 0;
  /** The source's array that vectors are read in place from (the first shared array it gives). */
  private mapped: Float32Array<ArrayBufferLike> = new Float32Array(0);
  private vectorAt = new Int32Array(1024);
  private inMapped = new Uint8Array(1024);
  private dim = 0;
  private tails = new Float64Array(1024);
  /**
   * Phrase n's first BOUND_DIMS dimensions, copied side by side: what a meeting reads, in one place
   * instead of the head of a 320-byte record somewhere in a 281 MB file (at 100,000 records).
   */
  private prefix = new Float32Array(1024 * BOUND_DIMS);
  /**
   * Bucket keys, LSH_BANDS a phrase, of the phrases whose keys were computed (phrase n's at slot
   * `keySlot[n]` − 1; 0: not computed): most stored phrases met are only compared with, never probe.
   */
  private keys = new Int32Array(1024 * LSH_BANDS);
  private keySlot = new Int32Array(1024);
  private keySlots = 0;
  /**
   * Each bucket's heads as a linked list in (rank, text) order over typed arrays (keys are dense, below
   * LSH_BANDS · 2^LSH_BITS): `first[key]` its first entry (-1: none); entry e holds phrase `chain[2·e]`
   * and continues at `chain[2·e + 1]`. An entry pushed out is reused (`spare`). `loaded[key]`: the
   * stored heads are in (a bucket is read before anything enters it, so the list is always the heads
   * of the stored and registered phrases together).
   */
  private readonly first = new Int32Array(LSH_BANDS * 2 ** LSH_BITS).fill(-1);
  private readonly loaded = new Uint8Array(LSH_BANDS * 2 ** LSH_BITS);
  private chain = new Int32Array(2048);
  private entries = 0;
  private spare = -1;
  /** Marks the phrases met while collecting one phrase's candidates. */
  private seen = new Int32Array(0);
  private stamp = 0;
  private readonly adjacency = new Map<string, Map<string, number>>();

  constructor(
    private readonly source: SynonymSource,
    private readonly k = SYNONYM_NEIGHBOURS,
    private readonly limit = BUCKET_LIMIT,
  ) {}

  /**
   * The phrase's number by name, giving it one (and its rank) when first met with its vector: the `dim`
   * floats of `vectors` from `at` (`dim` is the newcomers' or, in `repair`, the first stored vector's),
   * copied. `id`: its row id, where stored (a phrase met by row id before keeps its number).
   */
  private numberOf(phrase: string, vectors: Float32Array | undefined, at = 0, id?: number): number {
    let n = this.numbers.get(phrase);
    if (n !== undefined) return n;
    n = id === undefined ? -1 : this.rowNumber(id);
    if (n < 0) {
      n = this.newNumber(phrase, vectors, at);
      if (id !== undefined) this.setRow(id, n);
    }
    this.names[n] ??= phrase;
    this.numbers.set(phrase, n);
    return n;
  }

  /**
   * The number of the stored phrase with row id `id`, giving it one when first met (see numberOf); its
   * vector read in place where `vectors` is the array the graph maps.
   */
  private numberOfRow(
    id: number,
    phrase: string | undefined,
    vectors: Float32Array | undefined,
    at: number,
    rank?: number,
  ): number {
    let n = this.rowNumber(id);
    if (n < 0) this.setRow(id, (n = this.newNumber(phrase, vectors, at, vectors === this.mapped, rank)));
    return n;
  }

  /** The number of row id `id`; -1 when not met by it. */
  private rowNumber(id: number): number {
    return id < this.byRow.length ? this.byRow[id] - 1 : -1;
  }

  /** Row id `id` is phrase n (byRow grown to hold it). */
  private setRow(id: number, n: number): void {
    if (id >= this.byRow.length)
      this.byRow = grown(this.byRow, new Int32Array(Math.max(1024, id + 1, this.byRow.length * 2)));
    this.byRow[id] = n + 1;
    this.rowOf[n] = id;
  }

  /** Phrase n's name, asked of the source where it was met without one. */
  private nameOf(n: number): string {
    let name = this.names[n];
    if (name === undefined) {
      if (!this.source.phraseName) throw new Error("synonym graph: a phrase came without its name");
      name = this.names[n] = this.source.phraseName(this.rowOf[n]);
    }
    return name;
  }

  /**
   * A new number for `phrase` (with its vector, rank, tail norm), entered in neither index; its vector
   * read from `vectors` in place, or copied into `flat`. A phrase given without its name comes with its
   * rank.
   */
  private newNumber(
    phrase: string | undefined,
    vectors: Float32Array | undefined,
    at: number,
    inPlace = false,
    rank?: number,
  ): number {
    if (!vectors) throw new Error(`synonym graph: ${phrase} came without its vector`);
    if (phrase === undefined && rank === undefined)
      throw new Error("synonym graph: a phrase came without a name or rank");
    const n = this.names.push(phrase) - 1;
    this.reserve(n + 1, inPlace ? 0 : 1);
    const { dim } = this;
    const bounded = Math.min(BOUND_DIMS, dim);
    for (let d = 0; d < bounded; d++) this.prefix[n * BOUND_DIMS + d] = vectors[at + d];
    if (inPlace) {
      this.inMapped[n] = 1;
      this.vectorAt[n] = at;
      this.tails[n] = tailNorm(vectors, at, dim);
    } else {
      // Copied by hand: a view of each vector to copy from costs more than the copy.
      const { flat } = this;
      const to = this.flatUsed;
      this.flatUsed += dim;
      for (let d = 0; d < dim; d++) flat[to + d] = vectors[at + d];
      this.inMapped[n] = 0;
      this.vectorAt[n] = to;
      this.tails[n] = tailNorm(flat, to, dim);
    }
    this.ranks[n] = rank ?? phraseRank(phrase!);
    return n;
  }

  /**
   * Room for `count` phrases in the per-phrase arrays and for `copied` more vectors in `flat`, at least
   * doubling what they hold when they grow. A source's call hands over up to ~500k phrases at once (at
   * 100,000 records), so load() reserves for all of them first: one copy of the arrays instead of one
   * per doubling.
   */
  private reserve(count: number, copied: number): void {
    if (count > this.ranks.length) {
      const size = Math.max(count, this.ranks.length * 2);
      this.ranks = grown(this.ranks, new Float64Array(size));
      this.rowOf = grown(this.rowOf, new Int32Array(size));
      this.tails = grown(this.tails, new Float64Array(size));
      this.prefix = grown(this.prefix, new Float32Array(size * BOUND_DIMS));
      this.keySlot = grown(this.keySlot, new Int32Array(size));
      this.vectorAt = grown(this.vectorAt, new Int32Array(size));
      this.inMapped = grown(this.inMapped, new Uint8Array(size));
    }
    const floats = this.flatUsed + copied * this.dim;
    if (floats > this.flat.length)
      this.flat = grown(this.flat, new Float32Array(Math.max(1024 * this.dim, floats, this.flat.length * 2)));
  }

  /** Where phrase n's LSH_BANDS bucket keys start in `keys`, computing them when first needed. */
  private keyAt(n: number): number {
    if (!this.keySlot[n]) {
      const at = this.keySlots++ * LSH_BANDS;
      if (at === this.keys.length) this.keys = grown(this.keys, new Int32Array(this.keys.length * 2));
      this.keys.set(bandKeys(this.row(n), this.dim), at);
      this.keySlot[n] = this.keySlots;
    }
    return (this.keySlot[n] - 1) * LSH_BANDS;
  }

  /** Phrase n's bucket key in band `band`. */
  private keyOf(n: number, band: number): number {
    const at = this.keyAt(n);
    return this.keys[at + band];
  }

  /** Phrase n's vector. */
  private row(n: number): Float32Array {
    const at = this.vectorAt[n];
    return (this.inMapped[n] ? this.mapped : this.flat).subarray(at, at + this.dim);
  }

  /** Whether phrase a comes before phrase b in a bucket: lower rank, then text. */
  private before(a: number, b: number): boolean {
    return (
      this.ranks[a] < this.ranks[b] || (this.ranks[a] === this.ranks[b] && this.nameOf(a) < this.nameOf(b))
    );
  }

  /**
   * Phrase n enters bucket `key` if it is among its heads; returns the phrase it pushed out of them
   * (-1: none, the bucket had room or n is not a head).
   */
  private enter(key: number, n: number): number {
    const { chain } = this;
    let previous = -1;
    let e = this.first[key];
    let count = 0;
    for (; e >= 0 && this.before(chain[2 * e], n); e = chain[2 * e + 1]) {
      previous = e;
      count++;
    }
    if (e >= 0 && chain[2 * e] === n) return -1;
    if (count >= this.limit) return -1;
    const entry = this.newEntry();
    this.chain[2 * entry] = n;
    this.chain[2 * entry + 1] = e;
    if (previous >= 0) this.chain[2 * previous + 1] = entry;
    else this.first[key] = entry;
    // Past the limit: the last head goes.
    for (
      count++, previous = entry, e = this.chain[2 * entry + 1];
      e >= 0;
      previous = e, e = this.chain[2 * e + 1]
    )
      if (++count > this.limit) {
        this.chain[2 * previous + 1] = -1;
        const out = this.chain[2 * e];
        this.chain[2 * e + 1] = this.spare;
        this.spare = e;
        return out;
      }
    return -1;
  }

  /** Whether phrase n is among the heads of bucket `key` (read). */
  private heads(key: number, n: number): boolean {
    for (let e = this.first[key]; e >= 0; e = this.chain[2 * e + 1]) if (this.chain[2 * e] === n) return true;
    return false;
  }

  /** Reads the stored heads of the buckets not read yet, in a few queries. */
  private load(keys: Iterable<number>): void {
    if (this.source.empty) return;
    const missing: number[] = [];
    for (const key of keys)
      if (!this.loaded[key]) {
        this.loaded[key] = 1;
        missing.push(key);
      }
    if (!missing.length) return;
    const {
      phrases,
      ids,
      vectors,
      vectorAt,
      keys: rowKeys,
      heads,
      ranks,
    } = this.source.bucketHeads(missing, this.limit);
    let given = 0;
    let copied = 0;
    for (const vector of vectors)
      if (vector) {
        given++;
        // The first array longer than one vector is the source's shared one: read in place from then on.
        if (!this.mapped.length && this.dim && vector.length > this.dim) this.mapped = vector;
        if (vector !== this.mapped) copied++;
      }
    this.reserve(this.names.length + given, copied);
    const numbers = new Int32Array(phrases.length);
    for (let p = 0; p < phrases.length; p++)
      numbers[p] = this.numberOfRow(ids[p], phrases[p], vectors[p], vectorAt[p], ranks?.[p]);
    for (let i = 0; i < rowKeys.length; ) {
      const key = rowKeys[i];
      i = this.appendHeads(key, rowKeys, heads, numbers, i);
      for (; i < rowKeys.length && rowKeys[i] === key; i++) this.enter(key, numbers[heads[i]]);
    }
  }

  /**
   * Links the rows from `from` of bucket `key` (not entered into yet) at its list's end while they come
   * in strictly rising rank and within the limit, as a source that keeps heads in order gives them;
   * returns the first row it did not take, which enter() places (a tie, rows out of order, or past
   * the limit). PERF: entering each of a session's ~950k head rows at 100,000 records walked its
   * bucket's list from the front.
   */
  private appendHeads(
    key: number,
    rowKeys: ArrayLike<number>,
    heads: ArrayLike<number>,
    numbers: Int32Array,
    from: number,
  ): number {
    if (this.first[key] >= 0) return from;
    let i = from;
    let last = -1;
    let tail = -1;
    for (let count = 0; i < rowKeys.length && rowKeys[i] === key && count < this.limit; i++, count++) {
      const n = numbers[heads[i]];
      if (last >= 0 && !(this.ranks[last] < this.ranks[n])) break;
      const entry = this.newEntry();
      this.chain[2 * entry] = n;
      this.chain[2 * entry + 1] = -1;
      if (tail >= 0) this.chain[2 * tail + 1] = entry;
      else this.first[key] = entry;
      tail = entry;
      last = n;
    }
    return i;
  }

  /** A free chain entry (a spare one, or a new one at the end). */
  private newEntry(): number {
    let entry = this.spare;
    if (entry >= 0) this.spare = this.chain[2 * entry + 1];
    else {
      if (2 * this.entries === this.chain.length)
        this.chain = grown(this.chain, new Int32Array(this.chain.length * 2));
      entry = this.entries++;
    }
    return entry;
  }

  /** The buckets of these phrases, read. */
  private loadOwn(phrases: Iterable<number>): void {
    if (this.source.empty) return;
    const keys = new Set<number>();
    for (const n of phrases) {
      const at = this.keyAt(n);
      for (let b = 0; b < LSH_BANDS; b++) keys.add(this.keys[at + b]);
    }
    this.load(keys);
  }

  /** The buckets these phrases find candidates in (their own read first): the probes of each band they head. */
  private loadProbes(phrases: Iterable<number>): void {
    if (this.source.empty) return;
    const list = [...phrases];
    this.loadOwn(list);
    const probes = new Set<number>();
    for (const n of list)
      for (let b = 0; b < LSH_BANDS; b++) {
        const key = this.keyOf(n, b);
        if (!this.heads(key, n)) continue;
        probes.add(key);
        for (let bit = 0; bit < LSH_BITS; bit++) probes.add(key ^ (1 << bit));
      }
    this.load(probes);
  }

  /** Adds to `out` both phrases' keys in the bands where they are one bit apart at most. */
  private closeKeys(x: number, y: number, out: Set<number>): void {
    for (let b = 0; b < LSH_BANDS; b++) {
      const kx = this.keyOf(x, b);
      const ky = this.keyOf(y, b);
      const diff = kx ^ ky;
      if ((diff & (diff - 1)) !== 0) continue;
      out.add(kx);
      out.add(ky);
    }
  }

  /** Whether phrases x and y are candidates: in some band one bit apart at most, each among its bucket's heads (their buckets read). */
  private candidates(x: number, y: number): boolean {
    for (let b = 0; b < LSH_BANDS; b++) {
      const kx = this.keyOf(x, b);
      const ky = this.keyOf(y, b);
      const diff = kx ^ ky;
      if ((diff & (diff - 1)) === 0 && this.heads(kx, x) && this.heads(ky, y)) return true;
    }
    return false;
  }

  /** Every candidate of phrase n at cosine ≥ the threshold, by number (its buckets and probes read). */
  private neighboursOf(n: number): [number, number][] {
    if (this.seen.length < this.names.length) this.seen = new Int32Array(this.names.length * 2);
    const stamp = ++this.stamp;
    const out: [number, number][] = [];
    const { flat, mapped, vectorAt, inMapped, dim, tails, prefix, first, seen } = this;
    const vector = this.row(n);
    const tail = tails[n];
    const bounded = Math.min(BOUND_DIMS, dim);
    const threshold = SYNONYM_THRESHOLD - 1e-6;
    seen[n] = stamp;
    for (let b = 0; b < LSH_BANDS; b++) {
      const own = this.keyOf(n, b);
      if (!this.heads(own, n)) continue;
      for (let probe = -1; probe < LSH_BITS; probe++) {
        const key = probe < 0 ? own : own ^ (1 << probe);
        for (let e = first[key]; e >= 0; e = this.chain[2 * e + 1]) {
          const j = this.chain[2 * e];
          if (seen[j] === stamp) continue;
          seen[j] = stamp;
          // j is a candidate only if it heads its own bucket of this band, which is `key`.
          // The cosine's first BOUND_DIMS terms, then the rest only when the Cauchy–Schwarz bound lets
          // it reach the threshold: the same sum in the same order as cosine().
          let score = 0;
          let d = 0;
          for (const at = j * BOUND_DIMS; d < bounded; d++) score += vector[d] * prefix[at + d];
          if (score + tail * tails[j] < threshold) continue;
          const other = inMapped[j] ? mapped : flat;
          const base = vectorAt[j];
          for (; d < dim; d++) score += vector[d] * other[base + d];
          if (score >= SYNONYM_THRESHOLD) out.push([j, score]);
        }
      }
    }
    return out;
  }

  private named(list: [number, number][]): Neighbours {
    return list.map(([j, score]) => [this.nameOf(j), score]);
  }

  private edgesOf(phrase: string): Map<string, number> {
    let edges = this.adjacency.get(phrase);
    if (!edges) {
      this.readEdges([phrase]);
      edges = this.adjacency.get(phrase)!;
    }
    return edges;
  }

  /** Reads the edges of the phrases whose edges are not held yet, in one query per slice. */
  private readEdges(phrases: Iterable<string>): void {
    const missing = new Set<string>();
    for (const phrase of phrases) if (!this.adjacency.has(phrase)) missing.add(phrase);
    if (!missing.size) return;
    // The row ids known (of phrases met as bucket heads or as edges' ends) spare the source their lookup.
    const list = [...missing];
    const ids = list.map((phrase) => {
      const n = this.numbers.get(phrase);
      return n === undefined ? (this.endRows.get(phrase) ?? 0) : this.rowOf[n];
    });
    const found = this.source.empty ? new Map() : this.source.synonymNeighbours(list, ids);
    for (const phrase of missing) {
      const edges = new Map<string, number>();
      for (const [other, score, id] of found.get(phrase) ?? []) {
        edges.set(other, score);
        if (!this.numbers.has(other)) this.endRows.set(other, id);
      }
      this.adjacency.set(phrase, edges);
    }
  }

  /** Numbers the stored phrases not met yet (reading their vectors); those not stored stay unnumbered. */
  private readVectors(phrases: Iterable<string>): void {
    if (this.source.empty) return;
    const missing = new Set<string>();
    for (const phrase of phrases) {
      if (this.numbers.has(phrase)) continue;
      // An edge's end met before as a bucket head: its number by row id.
      const id = this.endRows.get(phrase);
      const n = id === undefined ? -1 : this.rowNumber(id);
      if (n >= 0) {
        this.numbers.set(phrase, n);
        this.names[n] ??= phrase;
      } else missing.add(phrase);
    }
    if (!missing.size) return;
    for (const [phrase, { id, vector }] of this.source.phraseVectors([...missing])) {
      this.dim ||= vector.length;
      this.numberOf(phrase, vector, 0, id);
    }
  }

  /** The phrase's k nearest: by the rule, the k best of its edges (its own k are among them). */
  private nearestOf(phrase: string): Neighbours {
    return nearest(this.edgesOf(phrase), this.k);
  }

  /**
   * Registers new phrases (rows of `vectors`) and returns how the edges change. Let S be the phrases
   * before and S' = S ∪ the newcomers. Which lists can change, and why these are all:
   * - A bucket's heads in S' are the `limit` lowest of its heads in S and its newcomers, so a phrase of S
   *   heads a bucket in S' only if it did in S: pairs within S only lose candidacy, and a pair (u, v)
   *   loses it only if u or v was pushed out of the heads of the bucket that joined them ("evicted").
   * - A phrase u of S whose list held none of the candidates it lost keeps its old k among the rest
   *   (taking away what ranks below the k changes nothing), so its new list is the k best of its old k
   *   and the newcomers it is now a candidate of (the k best of a union = the k best of the k best of
   *   each part). The newcomers' candidates are exactly those phrases, found from the newcomers' side
   *   (candidacy is symmetric).
   * - A phrase whose old list held a lost candidate v is joined to v by an edge, and u or v is evicted:
   *   so checking every edge of every evicted phrase against the rule in S' finds all of them; each end
   *   of an edge that lost candidacy whose old list (the k best of its edges) held the other end gets
   *   its list recomputed from its candidates in S' (at least one end did: the edge is there because
   *   one keeps the other). An end whose list did not hold it is a phrase of the point above.
   * - Newcomers get their lists from their candidates in S'.
   * Each newcomer evicts at most one phrase per band, and every list read holds at most LSH_BANDS ·
   * (LSH_BITS + 1) · limit candidates, so the work per newcomer is bounded whatever the store's size.
   */
  add(fresh: string[], vectors: Float32Array): SynonymChanges {
    return this.reading(() => this.changesOf(fresh, vectors));
  }

  /** `work` under the source's `reading`, where it has one. */
  private reading<T>(work: () => T): T {
    return this.source.reading ? this.source.reading(work) : work();
  }

  private changesOf(fresh: string[], vectors: Float32Array): SynonymChanges {
    const dim = fresh.length ? vectors.length / fresh.length : 0;
    this.dim ||= dim;
    const newcomers: number[] = [];
    fresh.forEach((phrase, i) => {
      if (!this.numbers.has(phrase)) newcomers.push(this.numberOf(phrase, vectors, i * dim));
    });
    const isNew = new Set(newcomers);
    this.loadOwn(newcomers);
    const evicted = new Set<number>();
    for (const n of newcomers)
      for (let b = 0; b < LSH_BANDS; b++) {
        const out = this.enter(this.keyOf(n, b), n);
        if (out >= 0 && !isNew.has(out)) evicted.add(out);
      }
    this.loadProbes(newcomers);
    const newNearest = new Map<string, Neighbours>();
    const arrivals = new Map<number, [number, number][]>();
    for (const n of newcomers) {
      const found = this.neighboursOf(n);
      newNearest.set(this.nameOf(n), nearest(this.named(found), this.k));
      arrive(arrivals, n, found, (j) => !isNew.has(j));
    }
    // Edges of evicted phrases that lost candidacy: each end whose list held the other is recomputed.
    const recompute = new Set<number>();
    const evictedNames = [...evicted].map((n) => this.nameOf(n));
    this.readEdges(evictedNames);
    const ends = new Set<string>();
    for (const phrase of evictedNames) for (const other of this.edgesOf(phrase).keys()) ends.add(other);
    this.readVectors(ends);
    // Only the buckets of bands where an edge's two keys are one bit apart at most can join its ends.
    const close = new Set<number>();
    for (const e of evicted)
      for (const other of this.edgesOf(this.nameOf(e)).keys()) {
        const w = this.numbers.get(other);
        if (w !== undefined) this.closeKeys(e, w, close);
      }
    this.load(close);
    // The edges that lost candidacy; only their ends' lists are read.
    const lost: [number, number, string][] = [];
    for (const e of evicted)
      for (const other of this.edgesOf(this.nameOf(e)).keys()) {
        const w = this.numbers.get(other);
        if (w !== undefined && !this.candidates(e, w)) lost.push([e, w, other]);
      }
    this.readEdges(lost.map(([, , other]) => other));
    // PERF: recomputing both ends of every such edge read the probes of ~2x the phrases (2.8 s of a
    // session's 6.6 s at 100,000 synthetic records); an end that only the other kept has its list still.
    const lists = new Map<string, Set<string>>();
    const keeps = (phrase: string, other: string) => {
      let list = lists.get(phrase);
      if (!list) lists.set(phrase, (list = new Set(this.nearestOf(phrase).map(([p]) => p))));
      return list.has(other);
    };
    for (const [e, w, other] of lost) {
      if (keeps(this.nameOf(e), other)) recompute.add(e);
      if (keeps(other, this.nameOf(e))) recompute.add(w);
    }
    for (const n of newcomers) recompute.delete(n);
    this.loadProbes(recompute);
    for (const n of recompute)
      newNearest.set(this.nameOf(n), nearest(this.named(this.neighboursOf(n)), this.k));
    this.mergeArrivals(arrivals, recompute, newNearest);
    return this.reconcile(newNearest);
  }

  /**
   * Each stored phrase that new candidates arrived at (not one whose list is recomputed anyway) takes
   * the k best of its own k (the k best of its edges) and the arrivals, into `newNearest` where one of
   * them entered it.
   */
  private mergeArrivals(
    arrivals: Map<number, [number, number][]>,
    recomputed: Set<number>,
    newNearest: Map<string, Neighbours>,
  ): void {
    this.readEdges([...arrivals.keys()].map((j) => this.nameOf(j)));
    for (const [j, list] of arrivals) {
      if (recomputed.has(j)) continue;
      const phrase = this.nameOf(j);
      const before = this.nearestOf(phrase);
      // A phrase that moved up in one band may be a candidate through another already (in the list).
      const held = new Set(before.map(([other]) => other));
      const arrived = this.named(list).filter(([other]) => !held.has(other));
      const after = nearest([...before, ...arrived], this.k);
      // A list no arrival entered is the one it had: reconcile need not read its ends.
      const entered = new Set(arrived.map(([other]) => other));
      if (after.some(([other]) => entered.has(other))) newNearest.set(phrase, after);
    }
  }

  /**
   * After phrases left the source (with their bucket rows and edges). A bucket's heads after are its
   * heads before less those that left, plus the next phrases by rank ("moved up"), so a pair of
   * phrases that stayed keeps its candidacy, and the only pairs that gain it have a moved-up end. So:
   * `phrases` — those joined to a phrase that left (a member of their list may be gone) — and
   * `movedUp` get their lists recomputed from their candidates; each phrase a moved-up one is a
   * candidate of now (candidacy is symmetric: the moved-up one's own candidates) takes the k best of
   * its k and it, as add() does for a newcomer; every other list is what it was. (Recomputing the heads
   * of every bucket one bit from where a phrase moved up, as before, read ~100k lists for a session
   * forgotten at 100,000 synthetic records: 131 s of a 273 s forget.)
   */
  repair(phrases: Iterable<string>, movedUp: Iterable<string> = []): SynonymChanges {
    return this.reading(() => this.repaired([...phrases], [...movedUp]));
  }

  private repaired(list: string[], movedUp: string[]): SynonymChanges {
    this.readVectors([...list, ...movedUp]);
    const risen = new Set(movedUp.flatMap((phrase) => this.numbers.get(phrase) ?? []));
    const recompute = new Set([...list.flatMap((phrase) => this.numbers.get(phrase) ?? []), ...risen]);
    this.loadProbes(recompute);
    const newNearest = new Map<string, Neighbours>();
    const arrivals = new Map<number, [number, number][]>();
    for (const n of recompute) {
      const found = this.neighboursOf(n);
      newNearest.set(this.nameOf(n), nearest(this.named(found), this.k));
      if (risen.has(n)) arrive(arrivals, n, found);
    }
    this.mergeArrivals(arrivals, recompute, newNearest);
    return this.reconcile(newNearest);
  }

  /**
   * The edge changes once the phrases of `newNearest` have those lists (every other phrase keeps its own,
   * the k best of its edges): an edge stays or comes when either end keeps the other.
   */
  private reconcile(newNearest: Map<string, Neighbours>): SynonymChanges {
    const keeps = new Map<string, Set<string>>();
    const keptBy = (phrase: string): Set<string> => {
      let set = keeps.get(phrase);
      if (!set) {
        const list = newNearest.get(phrase) ?? this.nearestOf(phrase);
        keeps.set(phrase, (set = new Set(list.map(([p]) => p))));
      }
      return set;
    };
    // Every list a pair's fate needs is read before any edge changes: the new lists, and the old one
    // (from its edges) of an end whose partner's new list does not hold it. PERF: reading the edges of
    // every end read ~4,000 phrases' edges a session at 100,000 synthetic records, most of them pairs
    // that one end's new list settles.
    this.readEdges(newNearest.keys());
    const pairs = new Map<string, { a: string; b: string; score: number }>();
    for (const [phrase, list] of newNearest) {
      for (const [other, score] of list) pairs.set(pairKey(phrase, other), { a: phrase, b: other, score });
      for (const [other, score] of this.edgesOf(phrase))
        if (!pairs.has(pairKey(phrase, other)))
          pairs.set(pairKey(phrase, other), { a: phrase, b: other, score });
    }
    const open = [...pairs.values()].filter(({ a, b }) => !keptBy(a).has(b) && !newNearest.has(b));
    this.readEdges(open.map(({ b }) => b));
    const changing: { a: string; b: string; score: number; wanted: boolean }[] = [];
    for (const { a, b, score } of pairs.values()) {
      const wanted = keptBy(a).has(b) || keptBy(b).has(a);
      if (wanted !== this.edgesOf(a).has(b)) changing.push({ a, b, score, wanted });
    }
    // The held edges of both ends change (a later batch reads them from here, not the store).
    this.readEdges(changing.map(({ b }) => b));
    const changes: SynonymChanges = { add: [], drop: [] };
    for (const { a, b, score, wanted } of changing)
      if (wanted) {
        this.edgesOf(a).set(b, score);
        this.edgesOf(b).set(a, score);
        changes.add.push({ a, b, score });
      } else {
        this.edgesOf(a).delete(b);
        this.edgesOf(b).delete(a);
        changes.drop.push({ a, b });
      }
    return changes;
  }
}

/**
 * Every synonym edge of a set of phrases under the rule, from scratch and band by band: each band's
 * buckets are grouped once (a counting sort of the phrases in (rank, text) order, so a bucket's heads are
 * its first `limit`), every pair of heads one bit apart at most is scored once, and each phrase keeps
 * its k best in fixed arrays. Memory is the vectors, their keys and k entries per phrase (no per-phrase
 * objects), which is what recomputing a store under a new rule needs at 100,000 records (878k phrases);
 * the same edges as SynonymGraph's (tests). Edges as row numbers: a < b, and b among a's k or a among b's.
 */
export function synonymEdgesOf(
  names: string[],
  vectors: Float32Array,
  k = SYNONYM_NEIGHBOURS,
  limit = BUCKET_LIMIT,
  /** The phrases' bucket keys (LSH_BANDS a phrase), where the caller has them. */
  given?: Int32Array,
): { a: number; b: number; score: number }[] {
  const count = names.length;
  const dim = count ? vectors.length / count : 0;
  const keys = given ?? new Int32Array(count * LSH_BANDS);
  const tails = new Float64Array(count);
  for (let n = 0; n < count; n++) {
    const row = vectors.subarray(n * dim, (n + 1) * dim);
    if (!given) keys.set(bandKeys(row, dim), n * LSH_BANDS);
    tails[n] = tailNorm(row);
  }
  const ranks = names.map(phraseRank);
  const byRank = Array.from({ length: count }, (_, n) => n).sort(
    (x, y) => ranks[x] - ranks[y] || (names[x] < names[y] ? -1 : names[x] > names[y] ? 1 : 0),
  );
  const best = new Int32Array(count * k).fill(-1);
  const bestScore = new Float64Array(count * k);
  /** Offers y to x's list (kept by cosine, then text; a pair met in two bands is offered twice). */
  const offer = (x: number, y: number, score: number) => {
    const base = x * k;
    let at = k;
    for (let i = 0; i < k; i++) {
      const j = best[base + i];
      if (j === y) return;
      if (at === k && (j < 0 || ranksBefore(names[y], score, names[j], bestScore[base + i]))) at = i;
    }
    if (at === k) return;
    for (let i = k - 1; i > at; i--) {
      best[base + i] = best[base + i - 1];
      bestScore[base + i] = bestScore[base + i - 1];
    }
    best[base + at] = y;
    bestScore[base + at] = score;
  };
  const width = 2 ** LSH_BITS;
  const start = new Int32Array(width + 1);
  const members = new Int32Array(count);
  const bounded = Math.min(BOUND_DIMS, dim);
  const threshold = SYNONYM_THRESHOLD - 1e-6;
  const score = (x: number, y: number) => {
    let s = 0;
    let d = 0;
    const bx = x * dim;
    const by = y * dim;
    for (; d < bounded; d++) s += vectors[bx + d] * vectors[by + d];
    if (s + tails[x] * tails[y] < threshold) return -1;
    for (; d < dim; d++) s += vectors[bx + d] * vectors[by + d];
    return s;
  };
  for (let band = 0; band < LSH_BANDS; band++) {
    // Bucket of each phrase in this band, phrases of a bucket in rank order (a stable counting sort).
    start.fill(0);
    for (let n = 0; n < count; n++) start[(keys[n * LSH_BANDS + band] & (width - 1)) + 1]++;
    for (let b = 0; b < width; b++) start[b + 1] += start[b];
    const fill = start.slice(0, width);
    for (const n of byRank) members[fill[keys[n * LSH_BANDS + band] & (width - 1)]++] = n;
    const heads = (b: number) => Math.min(limit, start[b + 1] - start[b]);
    for (let b = 0; b < width; b++) {
      const here = heads(b);
      if (!here) continue;
      // Each pair of buckets once: the bucket itself and those one bit away above it.
      for (let probe = -1; probe < LSH_BITS; probe++) {
        const other = probe < 0 ? b : b ^ (1 << probe);
        if (other < b) continue;
        const there = heads(other);
        for (let i = 0; i < here; i++) {
          const x = members[start[b] + i];
          for (let j = other === b ? i + 1 : 0; j < there; j++) {
            const y = members[start[other] + j];
            const s = score(x, y);
            if (s < SYNONYM_THRESHOLD) continue;
            offer(x, y, s);
            offer(y, x, s);
          }
        }
      }
    }
  }
  const edges: { a: number; b: number; score: number }[] = [];
  const keeps = (x: number, y: number) => {
    for (let i = 0; i < k; i++) if (best[x * k + i] === y) return true;
    return false;
  };
  for (let x = 0; x < count; x++)
    for (let i = 0; i < k; i++) {
      const y = best[x * k + i];
      if (y < 0) break;
      // Once per pair: from the lower row when both keep each other.
      if (keeps(y, x) && y < x) continue;
      edges.push(
        x < y ? { a: x, b: y, score: bestScore[x * k + i] } : { a: y, b: x, score: bestScore[x * k + i] },
      );
    }
  return edges;
}

/** Notes phrase n as an arrival at each of its candidates `found` (those `stored` accepts). */
function arrive(
  arrivals: Map<number, [number, number][]>,
  n: number,
  found: [number, number][],
  stored: (j: number) => boolean = () => true,
): void {
  for (const [j, score] of found) {
    if (!stored(j)) continue;
    let list = arrivals.get(j);
    if (!list) arrivals.set(j, (list = []));
    list.push([n, score]);
  }
}

function pairKey(a: string, b: string): string {
  return a < b ? `${a}\u0001${b}` : `${b}\u0001${a}`;
}

/** `into` (a larger array) holding `from`'s values first. */
function grown<T extends Float64Array | Float32Array | Int32Array | Uint8Array>(from: T, into: T): T {
  into.set(from as never);
  return into;
}
