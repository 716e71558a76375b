/**
 * The synonym edges between phrase nodes: each phrase's k nearest at cosine ≥ a threshold, candidates
 * from LSH buckets. The rule and its incremental upkeep live beside the store, which keeps the buckets
 * (`phrase_bands`) and repairs the edges when phrases leave; the indexer adds phrases through it.
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

/** A bucket holding more phrases than this is a dense cluster: its phrases are not candidates through it. */
export const BUCKET_LIMIT = 16;

/** Names the synonym rule a store's edges follow: a store built under another is recomputed. */
export const SYNONYM_RULE = `knn${SYNONYM_NEIGHBOURS}-t${SYNONYM_THRESHOLD}-lsh${LSH_BANDS}x${LSH_BITS}-cap${BUCKET_LIMIT}`;

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

/** A vector's LSH_BANDS bucket keys (band number and its sign bits in one integer). */
export function bandKeys(vector: Float32Array, dim = vector.length): number[] {
  const planes = hyperplanes(dim);
  projections.fill(0);
  for (let d = 0; d < dim; d++) {
    const x = vector[d];
    const row = d * PLANES;
    for (let p = 0; p < PLANES; p++) projections[p] += planes[row + p] * x;
  }
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
function tailNorm(v: Float32Array): number {
  let s = 0;
  for (let d = BOUND_DIMS; d < v.length; d++) s += v[d] * v[d];
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
  /** Stored phrases in these LSH buckets, with their vectors and the bucket each came from. */
  phrasesInBands(keys: number[]): { phrase: string; vector: Float32Array; key: number }[];
  /** How many stored phrases each of these buckets holds (absent: none). */
  bucketSizes(keys: number[]): Map<number, number>;
  /** Stored phrases' vectors (absent: not stored). */
  phraseVectors(phrases: string[]): Map<string, Float32Array>;
  /** Stored phrases' synonym edges (other phrase, cosine); a phrase with none may be absent. */
  synonymNeighbours(phrases: string[]): Map<string, [string, number][]>;
}

/** What a set of new phrases changes: edges to add (or revive) and edges no longer kept. */
export interface SynonymChanges {
  add: SynonymEdge[];
  drop: { a: string; b: string }[];
}

type Neighbours = [string, number][];

/**
 * The capped synonym graph as phrases arrive or leave. Two phrases are candidates when, in some band,
 * their bucket keys are at most one bit apart and neither bucket holds more than BUCKET_LIMIT phrases;
 * each phrase keeps the k best candidates at cosine ≥ the threshold. A bucket past the limit is a dense
 * cluster of look-alikes (error codes, generated names): scanning it would make every newcomer pay for
 * the whole cluster, the square of its size in all. The rule depends on the set of phrases alone.
 *
 * Holds the phrases a run registered (vectors and buckets) and the neighbour lists it touched, so a
 * batch not written yet is seen by the next one; everything else is read from the source on first use,
 * so a run's cost follows the phrases it touches.
 */
export class SynonymGraph {
  /**
   * Registered phrases by number: names, vectors (row n of `flat`, `dim` wide: one array, so the
   * comparisons read consecutive memory), norms past BOUND_DIMS.
   */
  private readonly names: string[] = [];
  private flat = new Float32Array(0);
  private dim = 0;
  private readonly keys: number[][] = [];
  private tails = new Float64Array(1024);
  private readonly numbers = new Map<string, number>();
  /**
   * The buckets of registered phrases as linked lists over typed arrays (keys are dense, below
   * LSH_BANDS · 2^LSH_BITS): `buckets[2·key]` is the bucket's last entry and `buckets[2·key + 1]` its
   * size; entry e holds phrase `chain[2·e]` and continues at `chain[2·e + 1]` (-1 ends it). Map lookups
   * of the probe keys cost more than the comparisons they lead to, and each pair sits in one cache line:
   * the probes and the chains are read at random, so memory latency is most of a comparison's cost.
   */
  private readonly buckets = initialBuckets();
  private chain = new Int32Array(2048);
  private entries = 0;
  /** Stored phrases per bucket, as read once (the source does not change under a run). */
  private readonly stored = new Map<number, number>();
  /** Stored members of buckets, read for a whole batch at once (see prefetch). */
  private readonly storedMembers = new Map<number, { phrase: string; vector: Float32Array }[]>();
  /** Marks the registered phrases met while collecting one phrase's candidates. */
  private seen = new Int32Array(0);
  private stamp = 0;
  private readonly adjacency = new Map<string, Map<string, number>>();
  /** Stored phrases' vectors and keys, as read for the current batch. */
  private readonly storedVectors = new Map<string, { vector: Float32Array; keys: number[] }>();

  constructor(
    private readonly source: SynonymSource,
    private readonly k = SYNONYM_NEIGHBOURS,
    private readonly limit = BUCKET_LIMIT,
  ) {}

  private enter(key: number, phrase: number): void {
    if (2 * this.entries === this.chain.length) this.chain = grow(this.chain);
    this.chain[2 * this.entries] = phrase;
    this.chain[2 * this.entries + 1] = this.buckets[2 * key];
    this.buckets[2 * key] = this.entries++;
    this.buckets[2 * key + 1]++;
  }

  /** Registered phrase n's vector. */
  private row(n: number): Float32Array {
    return this.flat.subarray(n * this.dim, (n + 1) * this.dim);
  }

  private store(n: number, vector: Float32Array): void {
    this.dim ||= vector.length;
    if ((n + 1) * this.dim > this.flat.length) {
      const grown = new Float32Array(Math.max(1024, (n + 1) * 2) * this.dim);
      grown.set(this.flat);
      this.flat = grown;
    }
    this.flat.set(vector, n * this.dim);
  }

  /** Reads the stored sizes of the buckets not read yet. */
  private readSizes(keys: number[]): void {
    const missing: number[] = [];
    if (this.source.empty) return;
    for (const key of keys) if (!this.stored.has(key)) missing.push(key);
    if (!missing.length) return;
    const found = this.source.bucketSizes(missing);
    for (const key of missing) this.stored.set(key, found.get(key) ?? 0);
  }

  /** Phrases in a bucket, registered and stored (after readSizes). */
  private sizeOf(key: number): number {
    return this.buckets[2 * key + 1] + (this.source.empty ? 0 : (this.stored.get(key) ?? 0));
  }

  private edgesOf(phrase: string): Map<string, number> {
    let edges = this.adjacency.get(phrase);
    if (!edges) {
      this.readEdges([phrase]);
      edges = this.adjacency.get(phrase)!;
    }
    return edges;
  }

  /**
   * Reads the edges of the phrases whose edges are not held yet, in one query per slice: a one-session
   * run on a large-vocabulary store recomputes thousands of lists, and one query per phrase cost most of it.
   */
  private readEdges(phrases: Iterable<string>): void {
    const missing = new Set<string>();
    for (const phrase of phrases) if (!this.adjacency.has(phrase)) missing.add(phrase);
    if (!missing.size) return;
    const found = this.source.empty ? new Map() : this.source.synonymNeighbours([...missing]);
    for (const phrase of missing) this.adjacency.set(phrase, new Map(found.get(phrase) ?? []));
  }

  /** Reads the vectors (and keys) of the stored phrases not read yet, in one query per slice. */
  private readVectors(phrases: Iterable<string>): void {
    if (this.source.empty) return;
    const missing = new Set<string>();
    for (const phrase of phrases)
      if (!this.numbers.has(phrase) && !this.storedVectors.has(phrase)) missing.add(phrase);
    if (!missing.size) return;
    for (const [phrase, vector] of this.source.phraseVectors([...missing]))
      this.storedVectors.set(phrase, { vector, keys: bandKeys(vector) });
  }

  /** The phrase's k nearest: by the rule, the k best of its edges (its own k are among them). */
  private nearestOf(phrase: string): Neighbours {
    return nearest(this.edgesOf(phrase), this.k);
  }

  /** The probe keys of `keys` that lead to candidates: the band's own bucket and the probe within the limit. */
  private openProbes(keys: number[]): number[] {
    const probes = probeKeys(keys);
    this.readSizes(probes);
    const open: number[] = [];
    for (let band = 0; band < keys.length; band++) {
      if (this.sizeOf(keys[band]) > this.limit) continue;
      for (let p = band * (LSH_BITS + 1); p < (band + 1) * (LSH_BITS + 1); p++)
        if (this.sizeOf(probes[p]) <= this.limit) open.push(probes[p]);
    }
    return open;
  }

  /** Every candidate (registered or stored) of a phrase at cosine ≥ the threshold. */
  private neighboursOf(phrase: string, vector: Float32Array, keys = bandKeys(vector)): Neighbours {
    if (this.seen.length < this.names.length) this.seen = new Int32Array(this.names.length * 2);
    const stamp = ++this.stamp;
    const out: Neighbours = [];
    const probes = this.openProbes(keys);
    const hits: number[] = [];
    const tail = tailNorm(vector);
    const { flat, dim, tails, buckets, chain, seen } = this;
    const bounded = Math.min(BOUND_DIMS, dim);
    const threshold = SYNONYM_THRESHOLD - 1e-6;
    // The cosine's first BOUND_DIMS terms, then the rest only when the Cauchy–Schwarz bound lets it reach
    // the threshold: the same sum in the same order as cosine(). PERF: inline over the one array of
    // vectors, as this loop is most of a large-vocabulary index (a newcomer meets up to
    // LSH_BANDS · (LSH_BITS + 1) · BUCKET_LIMIT candidates).
    for (const key of probes) {
      for (let e = buckets[2 * key]; e >= 0; e = chain[2 * e + 1]) {
        const j = chain[2 * e];
        if (seen[j] === stamp) continue;
        seen[j] = stamp;
        if (!this.source.empty) hits.push(j);
        const base = j * dim;
        let score = 0;
        let d = 0;
        for (; d < bounded; d++) score += vector[d] * flat[base + d];
        if (score + tail * tails[j] < threshold) continue;
        for (; d < dim; d++) score += vector[d] * flat[base + d];
        if (score >= SYNONYM_THRESHOLD && this.names[j] !== phrase) out.push([this.names[j], score]);
      }
    }
    const stored = this.source.empty ? [] : this.storedIn(probes);
    if (!stored.length) return out;
    // A stored phrase may also be registered (its batch written), and sits in up to LSH_BANDS buckets.
    const met = new Set<string>([phrase, ...hits.map((j) => this.names[j])]);
    for (const { phrase: other, vector: w } of stored) {
      if (met.has(other)) continue;
      met.add(other);
      const score = cosine(vector, w);
      if (score >= SYNONYM_THRESHOLD) out.push([other, score]);
    }
    return out;
  }

  /**
   * Reads, in a few queries, the stored sizes and members of the buckets these phrases probe: one query
   * per phrase cost a one-session run ~5 ms per new phrase.
   */
  private prefetch(keys: number[][]): void {
    if (this.source.empty) return;
    const probes = [...new Set(keys.flatMap(probeKeys))];
    this.readSizes(probes);
    const open = probes.filter((key) => !this.storedMembers.has(key) && (this.stored.get(key) ?? 0) > 0);
    for (const key of open) this.storedMembers.set(key, []);
    for (const row of open.length ? this.source.phrasesInBands(open) : [])
      this.storedMembers.get(row.key)?.push(row);
  }

  /** Stored members of these buckets (prefetched ones from memory, the rest read now). */
  private storedIn(probes: number[]): { phrase: string; vector: Float32Array }[] {
    const out: { phrase: string; vector: Float32Array }[] = [];
    const unread: number[] = [];
    for (const key of probes) {
      if ((this.stored.get(key) ?? 0) === 0) continue;
      const members = this.storedMembers.get(key);
      if (members) out.push(...members);
      else unread.push(key);
    }
    if (unread.length) out.push(...this.source.phrasesInBands(unread));
    return out;
  }

  /** A phrase's vector: registered, else stored. */
  private vectorOf(phrase: string): Float32Array | undefined {
    const n = this.numbers.get(phrase);
    if (n !== undefined) return this.row(n);
    this.readVectors([phrase]);
    return this.storedVectors.get(phrase)?.vector;
  }

  /** A phrase's bucket keys. */
  private keysOf(phrase: string): number[] {
    const n = this.numbers.get(phrase);
    if (n !== undefined) return this.keys[n];
    this.readVectors([phrase]);
    return this.storedVectors.get(phrase)?.keys ?? [];
  }

  /** Whether two phrases are candidates by their keys: in some band one bit apart at most, both buckets within the limit. */
  private candidates(x: number[], y: number[]): boolean {
    this.readSizes(x);
    this.readSizes(y);
    for (let band = 0; band < x.length && band < y.length; band++) {
      const diff = x[band] ^ y[band];
      if (
        (diff & (diff - 1)) === 0 &&
        this.sizeOf(x[band]) <= this.limit &&
        this.sizeOf(y[band]) <= this.limit
      )
        return true;
    }
    return false;
  }

  /** The phrases these buckets hold, registered and stored (the stored ones' vectors kept). */
  private membersOf(keys: number[]): Set<string> {
    const out = new Set<string>();
    for (const key of keys)
      for (let e = this.buckets[2 * key]; e >= 0; e = this.chain[2 * e + 1])
        out.add(this.names[this.chain[2 * e]]);
    if (!keys.length || this.source.empty) return out;
    for (const { phrase, vector } of this.source.phrasesInBands(keys)) {
      out.add(phrase);
      if (!this.numbers.has(phrase) && !this.storedVectors.has(phrase))
        this.storedVectors.set(phrase, { vector, keys: bandKeys(vector) });
    }
    return out;
  }

  /**
   * Registers new phrases (rows of `vectors`) and returns how the edges change: each new phrase's k
   * nearest; for each phrase a newcomer is a candidate of, its list recomputed from its old k plus the
   * newcomers; and for the phrases of a bucket the newcomers took past the limit (they lost candidates),
   * and those joined to them, their lists recomputed from their candidates.
   */
  add(fresh: string[], vectors: Float32Array): SynonymChanges {
    const dim = fresh.length ? vectors.length / fresh.length : 0;
    const row = (i: number) => vectors.subarray(i * dim, (i + 1) * dim);
    const filled: number[] = [];
    // Stored rows read for an earlier batch go: held for a whole run, a long run into a large store
    // would end up holding most of its phrases.
    this.storedMembers.clear();
    this.storedVectors.clear();
    const keysOf = fresh.map((_, i) => bandKeys(row(i), dim));
    this.prefetch(keysOf);
    fresh.forEach((phrase, i) => {
      const n = this.names.push(phrase) - 1;
      this.numbers.set(phrase, n);
      this.store(n, row(i));
      if (n === this.tails.length) {
        const grown = new Float64Array(n * 2);
        grown.set(this.tails);
        this.tails = grown;
      }
      this.tails[n] = tailNorm(row(i));
      const keys = keysOf[i];
      this.keys.push(keys);
      for (const key of keys) {
        if (this.sizeOf(key) === this.limit) filled.push(key);
        this.enter(key, n);
      }
    });
    const newNearest = new Map<string, Neighbours>();
    const recompute = new Set<string>();
    // A bucket past the limit: an edge whose ends were candidates only through it needs both lists
    // recomputed (any other list keeps its k: losing candidates outside the k changes nothing).
    // Everything these checks read is read first, a query per slice rather than per phrase.
    const members = this.membersOf(filled);
    this.readEdges(members);
    const joined = new Set<string>();
    for (const phrase of members) for (const other of this.edgesOf(phrase).keys()) joined.add(other);
    this.readVectors(joined);
    this.readSizes([...members, ...joined].flatMap((phrase) => this.keysOf(phrase)));
    for (const phrase of members) {
      const mine = this.keysOf(phrase);
      for (const other of this.edgesOf(phrase).keys()) {
        if (this.candidates(mine, this.keysOf(other))) continue;
        recompute.add(phrase);
        recompute.add(other);
      }
    }
    const freshSet = new Set(fresh);
    const arrivals = new Map<string, Neighbours>();
    for (const [i, phrase] of fresh.entries()) {
      const found = this.neighboursOf(phrase, row(i), keysOf[i]);
      newNearest.set(phrase, nearest(found, this.k));
      for (const [other, score] of found) {
        if (freshSet.has(other) || recompute.has(other)) continue;
        let list = arrivals.get(other);
        if (!list) arrivals.set(other, (list = []));
        list.push([phrase, score]);
      }
    }
    const recomputed = [...recompute].filter((phrase) => !freshSet.has(phrase));
    this.readVectors(recomputed);
    for (let at = 0; at < recomputed.length; at += 256) {
      // The buckets of a slice of lists read at once, as for the newcomers (prefetch).
      const slice = recomputed.slice(at, at + 256);
      this.prefetch(slice.map((phrase) => this.keysOf(phrase)));
      for (const phrase of slice) {
        const vector = this.vectorOf(phrase);
        if (vector)
          newNearest.set(phrase, nearest(this.neighboursOf(phrase, vector, this.keysOf(phrase)), this.k));
      }
    }
    // A phrase a newcomer lands near only gains candidates: its old k plus the newcomers hold its new k.
    this.readEdges(arrivals.keys());
    for (const [phrase, newcomers] of arrivals)
      newNearest.set(phrase, nearest([...this.nearestOf(phrase), ...newcomers], this.k));
    return this.reconcile(newNearest);
  }

  /**
   * After phrases left the source (with their bucket rows and edges): `phrases` — those joined to a
   * phrase that left, and those of buckets that fell back within the limit or probe one — get their
   * lists recomputed from their candidates.
   */
  repair(phrases: Iterable<string>): SynonymChanges {
    const newNearest = new Map<string, Neighbours>();
    const list = [...phrases];
    // In slices, each slice's buckets read at once (a store recomputed whole has every phrase here).
    for (let at = 0; at < list.length; at += 256) {
      const slice = list.slice(at, at + 256).flatMap((phrase) => {
        const vector = this.vectorOf(phrase);
        return vector ? [{ phrase, vector, keys: bandKeys(vector) }] : [];
      });
      this.storedMembers.clear();
      this.prefetch(slice.map((p) => p.keys));
      for (const { phrase, vector, keys } of slice)
        newNearest.set(phrase, nearest(this.neighboursOf(phrase, vector, keys), this.k));
    }
    this.storedMembers.clear();
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
    // Every list is read before any edge changes: the lists of untouched phrases come from their edges,
    // read here for all of them at once (the phrases of the new lists, then those they are joined to).
    this.readEdges(newNearest.keys());
    const ends = new Set<string>();
    for (const [phrase, list] of newNearest) {
      for (const [other] of list) ends.add(other);
      for (const other of this.edgesOf(phrase).keys()) ends.add(other);
    }
    this.readEdges(ends);
    const pairs = new Map<string, { a: string; b: string; score: number }>();
    for (const [phrase, list] of newNearest) {
      keptBy(phrase);
      for (const [other, score] of list) {
        keptBy(other);
        pairs.set(pairKey(phrase, other), { a: phrase, b: other, score });
      }
      for (const [other, score] of this.edgesOf(phrase)) {
        keptBy(other);
        if (!pairs.has(pairKey(phrase, other)))
          pairs.set(pairKey(phrase, other), { a: phrase, b: other, score });
      }
    }
    const changes: SynonymChanges = { add: [], drop: [] };
    for (const { a, b, score } of pairs.values()) {
      const wanted = keptBy(a).has(b) || keptBy(b).has(a);
      const present = this.edgesOf(a).has(b);
      if (wanted && !present) {
        this.edgesOf(a).set(b, score);
        this.edgesOf(b).set(a, score);
        changes.add.push({ a, b, score });
      } else if (!wanted && present) {
        this.edgesOf(a).delete(b);
        this.edgesOf(b).delete(a);
        changes.drop.push({ a, b });
      }
    }
    return changes;
  }
}

function pairKey(a: string, b: string): string {
  return a < b ? `${a}\u0001${b}` : `${b}\u0001${a}`;
}

/** Every bucket empty: no last entry (-1), size 0. */
function initialBuckets(): Int32Array {
  const buckets = new Int32Array(2 * LSH_BANDS * 2 ** LSH_BITS);
  for (let key = 0; key < buckets.length; key += 2) buckets[key] = -1;
  return buckets;
}

function grow(a: Int32Array): Int32Array<ArrayBuffer> {
  const out = new Int32Array(a.length * 2);
  out.set(a);
  return out;
}
