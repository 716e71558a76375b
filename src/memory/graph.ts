/**
 * Turning extractor output (local or OpenIE) into a chunk's graph contribution, and the synonym edges
 * between phrase nodes. Both graph sources end in the same ChunkGraph shape, so everything after this
 * point (store, PPR) is blind to where a fact came from.
 */
import type { OpenIEResult } from "../llm/openie.ts";
import type { ChunkGraph, EntityMention, FactMention, SynonymEdge } from "../store/types.ts";
import { normalizePhrase, phraseLabel } from "./phrases.ts";

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
 * with probability q^b + b·q^(b−1)·(1 − q): at c = 0.8 about 0.13 per band and 89 % over 16 bands, at
 * 0.85 97 %, at 0.9 99.8 %. Buckets of 2^16 keys keep the candidates a small share of the phrases.
 */
export const LSH_BANDS = 16;
export const LSH_BITS = 16;

/** Names the synonym rule a store's edges follow: a store built under another is recomputed. */
export const SYNONYM_RULE = `knn${SYNONYM_NEIGHBOURS}-t${SYNONYM_THRESHOLD}-lsh${LSH_BANDS}x${LSH_BITS}`;

/** A chunk's graph from a validated OpenIE result: each triple term is a phrase node, as in HippoRAG 2. */
export function graphFromOpenIE(result: OpenIEResult): ChunkGraph {
  const entities = new Map<string, EntityMention>();
  const facts = new Map<string, FactMention>();
  const mention = (raw: string) => {
    const phrase = normalizePhrase(raw);
    if (phrase && !entities.has(phrase)) entities.set(phrase, { phrase, label: phraseLabel(raw) });
    return phrase;
  };
  for (const [s, p, o] of result.triples) {
    const subject = mention(s);
    const object = mention(o);
    const predicate = p.normalize("NFKC").replace(/\s+/gu, " ").trim().toLowerCase();
    if (!subject || !object || subject === object || !predicate) continue;
    facts.set(`${subject}\u0001${predicate}\u0001${object}`, { subject, predicate, object });
  }
  // HippoRAG 2 builds phrase nodes from triple terms only; named entities that no triple uses still
  // link their passage, which keeps a passage with no triple reachable from the graph.
  for (const e of result.entities) mention(e);
  return { entities: [...entities.values()], facts: [...facts.values()] };
}

/** The hyperplanes of `dim`-wide vectors: the same for every process (a fixed-seed generator). */
const planesByDim = new Map<number, Float32Array>();

function hyperplanes(dim: number): Float32Array {
  let planes = planesByDim.get(dim);
  if (planes) return planes;
  planes = new Float32Array(LSH_BANDS * LSH_BITS * dim);
  let seed = 0x5eed_1234;
  const uniform = () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return (seed + 1) / 2 ** 32;
  };
  // Gaussian components (Box–Muller) make the hyperplanes' directions uniform on the sphere.
  for (let i = 0; i < planes.length; i++)
    planes[i] = Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  planesByDim.set(dim, planes);
  return planes;
}

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
  const keys: number[] = [];
  for (let band = 0; band < LSH_BANDS; band++) {
    let bits = 0;
    for (let bit = 0; bit < LSH_BITS; bit++) {
      const at = (band * LSH_BITS + bit) * dim;
      let s = 0;
      for (let d = 0; d < dim; d++) s += planes[at + d] * vector[d];
      bits = (bits << 1) | (s >= 0 ? 1 : 0);
    }
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

/** `cosine(v, w)` when it can reach `threshold`, else -1; the same sum in the same order as cosine. */
function cosineAtLeast(v: Float32Array, tv: number, w: Float32Array, tw: number, threshold: number): number {
  const head = Math.min(BOUND_DIMS, v.length);
  let s = 0;
  for (let d = 0; d < head; d++) s += v[d] * w[d];
  if (s + tv * tw < threshold - 1e-6) return -1;
  for (let d = head; d < v.length; d++) s += v[d] * w[d];
  return s;
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
  /** Stored phrases in any of these LSH buckets, with their vectors (a phrase may come more than once). */
  phrasesInBands(keys: number[]): { phrase: string; vector: Float32Array }[];
  /** A stored phrase's synonym edges (other phrase, cosine). */
  synonymNeighbours(phrase: string): [string, number][];
}

/** What a set of new phrases changes: edges to add (or revive) and edges no longer kept. */
export interface SynonymChanges {
  add: SynonymEdge[];
  drop: { a: string; b: string }[];
}

/**
 * The capped synonym graph as phrases arrive. Holds the phrases a run registered (vectors and buckets)
 * and the neighbour lists it touched, so a batch not written yet is seen by the next one; everything
 * else is read from the source on first use, so a run's cost follows the phrases it touches.
 */
export class SynonymGraph {
  /** Registered phrases by number: names and vectors. */
  private readonly names: string[] = [];
  private readonly vectors: Float32Array[] = [];
  private tails = new Float64Array(1024);
  /**
   * The buckets of registered phrases as linked lists over typed arrays (keys are dense, below
   * LSH_BANDS · 2^LSH_BITS): `head[key]` is the bucket's last entry, entry e holds phrase `member[e]`
   * and continues at `link[e]` (-1 ends it). Map lookups of the 272 probe keys cost more than the
   * comparisons they lead to.
   */
  private readonly head = new Int32Array(LSH_BANDS * 2 ** LSH_BITS).fill(-1);
  private member = new Int32Array(1024);
  private link = new Int32Array(1024);
  private entries = 0;
  /** Marks the registered phrases met while collecting one phrase's candidates. */
  private seen = new Int32Array(0);
  private stamp = 0;
  private readonly adjacency = new Map<string, Map<string, number>>();

  constructor(
    private readonly source: SynonymSource,
    private readonly k = SYNONYM_NEIGHBOURS,
  ) {}

  private enter(key: number, phrase: number): void {
    if (this.entries === this.member.length) {
      const grow = (a: Int32Array) => {
        const out = new Int32Array(a.length * 2);
        out.set(a);
        return out;
      };
      this.member = grow(this.member);
      this.link = grow(this.link);
    }
    this.member[this.entries] = phrase;
    this.link[this.entries] = this.head[key];
    this.head[key] = this.entries++;
  }

  private edgesOf(phrase: string): Map<string, number> {
    let edges = this.adjacency.get(phrase);
    if (!edges) this.adjacency.set(phrase, (edges = new Map(this.source.synonymNeighbours(phrase))));
    return edges;
  }

  /** The phrase's k nearest: by the rule, the k best of its edges (its own k are among them). */
  private nearestOf(phrase: string): [string, number][] {
    return nearest(this.edgesOf(phrase), this.k);
  }

  /** Every phrase (registered or stored) at cosine ≥ the threshold that shares a bucket with `vector`. */
  private neighboursOf(phrase: string, vector: Float32Array, keys: number[]): [string, number][] {
    if (this.seen.length < this.names.length) this.seen = new Int32Array(this.names.length * 2);
    const stamp = ++this.stamp;
    const out: [string, number][] = [];
    const probes = probeKeys(keys);
    const hits: number[] = [];
    const tail = tailNorm(vector);
    for (const key of probes) {
      for (let e = this.head[key]; e >= 0; e = this.link[e]) {
        const j = this.member[e];
        if (this.seen[j] === stamp) continue;
        this.seen[j] = stamp;
        hits.push(j);
        const score = cosineAtLeast(vector, tail, this.vectors[j], this.tails[j], SYNONYM_THRESHOLD);
        if (score >= SYNONYM_THRESHOLD && this.names[j] !== phrase) out.push([this.names[j], score]);
      }
    }
    const stored = this.source.phrasesInBands(probes);
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
   * Registers new phrases (rows of `vectors`) and returns how the edges change: each new phrase's k
   * nearest, and for each phrase a new one enters the k of, its list recomputed from the old k plus the
   * newcomers; an edge that falls out of one list stays while the other end still keeps it.
   */
  add(fresh: string[], vectors: Float32Array): SynonymChanges {
    const dim = fresh.length ? vectors.length / fresh.length : 0;
    const keysOf = new Map<string, number[]>();
    const vectorOf = (i: number) => vectors.subarray(i * dim, (i + 1) * dim);
    fresh.forEach((phrase, i) => {
      const keys = bandKeys(vectorOf(i), dim);
      keysOf.set(phrase, keys);
      const n = this.names.push(phrase) - 1;
      this.vectors.push(vectorOf(i));
      if (n === this.tails.length) {
        const grown = new Float64Array(n * 2);
        grown.set(this.tails);
        this.tails = grown;
      }
      this.tails[n] = tailNorm(vectorOf(i));
      for (const key of keys) this.enter(key, n);
    });
    const freshSet = new Set(fresh);
    const newNearest = new Map<string, [string, number][]>();
    const arrivals = new Map<string, [string, number][]>();
    for (const [i, phrase] of fresh.entries()) {
      const found = this.neighboursOf(phrase, vectorOf(i), keysOf.get(phrase)!);
      newNearest.set(phrase, nearest(found, this.k));
      for (const [other, score] of found) {
        if (freshSet.has(other)) continue;
        let list = arrivals.get(other);
        if (!list) arrivals.set(other, (list = []));
        list.push([phrase, score]);
      }
    }
    const oldNearest = new Map<string, [string, number][]>();
    for (const [phrase, newcomers] of arrivals) {
      const old = this.nearestOf(phrase);
      oldNearest.set(phrase, old);
      newNearest.set(phrase, nearest([...old, ...newcomers], this.k));
    }
    const keeps = (phrase: string, other: string) =>
      (newNearest.get(phrase) ?? this.nearestOf(phrase)).some(([p]) => p === other);
    const changes: SynonymChanges = { add: [], drop: [] };
    for (const [phrase, list] of newNearest) {
      const edges = this.edgesOf(phrase);
      for (const [other, score] of list) {
        if (edges.has(other)) continue;
        edges.set(other, score);
        this.edgesOf(other).set(phrase, score);
        changes.add.push({ a: phrase, b: other, score });
      }
    }
    for (const [phrase, old] of oldNearest) {
      const kept = new Set(newNearest.get(phrase)!.map(([p]) => p));
      for (const [other] of old) {
        if (kept.has(other) || keeps(other, phrase) || !this.edgesOf(phrase).has(other)) continue;
        this.edgesOf(phrase).delete(other);
        this.edgesOf(other).delete(phrase);
        changes.drop.push({ a: phrase, b: other });
      }
    }
    return changes;
  }

  /**
   * After phrases were removed from the source (and their edges with them): the edges the remaining
   * `phrases` gain, each one's k nearest recomputed from its buckets. Removal only ever lets a phrase
   * keep more of its neighbours, so nothing else changes.
   */
  repair(phrases: Iterable<{ phrase: string; vector: Float32Array }>): SynonymEdge[] {
    const added: SynonymEdge[] = [];
    for (const { phrase, vector } of phrases) {
      const edges = this.edgesOf(phrase);
      for (const [other, score] of nearest(this.neighboursOf(phrase, vector, bandKeys(vector)), this.k)) {
        if (edges.has(other)) continue;
        edges.set(other, score);
        this.edgesOf(other).set(phrase, score);
        added.push({ a: phrase, b: other, score });
      }
    }
    return added;
  }
}
