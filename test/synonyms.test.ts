import { describe, expect, test } from "bun:test";
import {
  bandKeys,
  cosine,
  LSH_BANDS,
  LSH_BITS,
  nearest,
  phraseRank,
  SYNONYM_THRESHOLD,
  SynonymGraph,
  type SynonymSource,
  synonymEdgesOf,
} from "../src/store/synonyms.ts";
import { seededRandom } from "./support/random.ts";
import { headRows, type StoredEdge, type StoredPhrase, storedPhraseReads } from "./support/synonym-store.ts";

const unit = (v: number[]) => {
  const n = Math.hypot(...v);
  return new Float32Array(v.map((x) => x / n));
};

/** Tight clusters (cosine > 0.9 inside one) in 16 dimensions: their phrases share crowded buckets. */
function clustered(seed: number, count: number, clusters: number, prefix = "p"): StoredPhrase[] {
  const random = seededRandom(seed);
  const centres = Array.from({ length: clusters }, () => Array.from({ length: 16 }, () => random() - 0.5));
  return Array.from({ length: count }, (_, i) => {
    const vector = unit(centres[i % clusters].map((x) => x + (random() - 0.5) * 0.08));
    return { name: `${prefix}${i}`, vector, keys: bandKeys(vector) };
  });
}

const pair = (e: { a: string; b: string }) => [e.a, e.b].sort().join("-");

/** The rule by brute force: each bucket's `limit` heads by (rank, text), every pair checked. */
function reference(phrases: StoredPhrase[], k: number, limit: number): string[] {
  const members = new Map<number, StoredPhrase[]>();
  for (const p of phrases) for (const key of p.keys) members.set(key, [...(members.get(key) ?? []), p]);
  const order = (x: StoredPhrase, y: StoredPhrase) =>
    phraseRank(x.name) - phraseRank(y.name) || (x.name < y.name ? -1 : 1);
  const heads = new Map([...members].map(([key, list]) => [key, new Set(list.sort(order).slice(0, limit))]));
  const edges = new Set<string>();
  for (const p of phrases) {
    const found: [string, number][] = [];
    for (const q of phrases) {
      if (q === p) continue;
      const joined = p.keys.some((key, band) => {
        const diff = key ^ q.keys[band];
        return (diff & (diff - 1)) === 0 && heads.get(key)!.has(p) && heads.get(q.keys[band])!.has(q);
      });
      const score = cosine(p.vector, q.vector);
      if (joined && score >= SYNONYM_THRESHOLD) found.push([q.name, score]);
    }
    for (const [q] of nearest(found, k)) edges.add([p.name, q].sort().join("-"));
  }
  return [...edges].sort();
}

/**
 * A store as the indexer leaves it between runs: earlier runs' phrases and the edges the graph
 * returned, read back through the SynonymSource the way the SQLite store serves it (a bucket's rows
 * in rank order, at least `limit` of them). Counts the bucket rows it serves.
 */
function fakeStore() {
  const stored: StoredPhrase[] = [];
  const edges = new Map<string, StoredEdge>();
  const served = { buckets: 0, rows: 0 };
  const source: SynonymSource = {
    bucketHeads: (keys, limit) =>
      headRows(
        keys.flatMap((key) => {
          served.buckets++;
          const rows = stored
            .filter((p) => p.keys.includes(key))
            .map((p) => ({
              key,
              phrase: p.name,
              id: stored.indexOf(p) + 1,
              rank: phraseRank(p.name),
              vector: p.vector,
            }))
            .sort((x, y) => x.rank - y.rank)
            .slice(0, limit);
          served.rows += rows.length;
          return rows;
        }),
      ),
    ...storedPhraseReads(stored, edges),
  };
  /** One run: a new graph over what is stored, the batches added, then written. */
  const run = (batches: StoredPhrase[][], k: number, limit: number) => {
    const graph = new SynonymGraph(source, k, limit);
    for (const batch of batches) {
      const changes = graph.add(
        batch.map((p) => p.name),
        new Float32Array(batch.flatMap((p) => [...p.vector])),
      );
      for (const e of changes.add) edges.set(pair(e), e);
      for (const e of changes.drop) edges.delete(pair(e));
    }
    stored.push(...batches.flat());
  };
  /**
   * Phrases leave, with their edges, as forget takes them, and the graph repairs the rest: those joined
   * to one that left, and the phrases that moved up into the heads of a bucket one left.
   */
  const remove = (names: string[], k: number, limit: number) => {
    const leaving = new Set(names);
    const headsOf = (key: number) =>
      stored
        .filter((p) => p.keys.includes(key))
        .sort((x, y) => phraseRank(x.name) - phraseRank(y.name) || (x.name < y.name ? -1 : 1))
        .slice(0, limit)
        .map((p) => p.name);
    const keys = [...new Set(stored.filter((p) => leaving.has(p.name)).flatMap((p) => p.keys))];
    const before = new Map(keys.map((key) => [key, new Set(headsOf(key))]));
    const bereaved = new Set<string>();
    for (const [id, e] of edges)
      if (leaving.has(e.a) || leaving.has(e.b)) {
        for (const end of [e.a, e.b]) if (!leaving.has(end)) bereaved.add(end);
        edges.delete(id);
      }
    stored.splice(0, stored.length, ...stored.filter((p) => !leaving.has(p.name)));
    const movedUp = new Set<string>();
    for (const key of keys)
      for (const name of headsOf(key)) if (!before.get(key)!.has(name)) movedUp.add(name);
    const changes = new SynonymGraph(source, k, limit).repair(bereaved, movedUp);
    for (const e of changes.add) edges.set(pair(e), e);
    for (const e of changes.drop) edges.delete(pair(e));
    return { movedUp: movedUp.size, bereaved: bereaved.size };
  };
  return { run, remove, served, source, stored, edges: () => [...edges.keys()].sort() };
}

function shuffled<T>(list: T[], random: () => number): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

describe("synonym buckets' heads (bottom-k by rank)", () => {
  test("a phrase's rank is a 53-bit integer of its text alone", () => {
    expect(phraseRank("retry_handler_7")).toBe(phraseRank("retry_handler_7"));
    expect(phraseRank("retry_handler_7")).not.toBe(phraseRank("retry_handler_8"));
    for (const text of ["", "a", "E1234", "src/app/x.ts", "ünïcode"]) {
      const rank = phraseRank(text);
      expect(Number.isSafeInteger(rank) && rank >= 0).toBe(true);
    }
  });

  test("run by run from a store, in random orders and batches, the edges are the rule's by brute force", () => {
    for (const seed of [1, 2, 3]) {
      const random = seededRandom(seed * 101);
      // Buckets of at most 3 heads among clusters of 40: most buckets are crowded.
      const phrases = clustered(seed, 160, 4);
      const expected = reference(phrases, 3, 3);
      expect(expected.length).toBeGreaterThan(80);
      const order = shuffled(phrases, random);
      const store = fakeStore();
      for (let at = 0; at < order.length; ) {
        const size = 1 + Math.floor(random() * 30);
        const run = order.slice(at, at + size);
        const batches: StoredPhrase[][] = [];
        for (let b = 0; b < run.length; ) {
          const step = 1 + Math.floor(random() * 8);
          batches.push(run.slice(b, b + step));
          b += step;
        }
        store.run(batches, 3, 3);
        at += size;
      }
      expect(store.edges()).toEqual(expected);
      // One run of everything at once gives the same edges.
      const once = fakeStore();
      once.run([phrases], 3, 3);
      expect(once.edges()).toEqual(expected);
    }
  }, 30_000);

  test("phrases leaving, then the repair of those joined to them and of those moved up into heads, give the rule's edges by brute force", () => {
    for (const seed of [11, 12, 13]) {
      const random = seededRandom(seed * 31);
      const phrases = clustered(seed, 160, 4);
      const store = fakeStore();
      store.run([phrases], 3, 3);
      let moved = 0;
      for (let round = 0; round < 3; round++) {
        const leaving = shuffled(store.stored, random)
          .slice(0, 15)
          .map((p) => p.name);
        moved += store.remove(leaving, 3, 3).movedUp;
        expect(store.edges()).toEqual(reference(store.stored, 3, 3));
      }
      // Crowded buckets (3 heads among clusters of 40): phrases did move up into heads.
      expect(moved).toBeGreaterThan(0);
    }
  }, 30_000);

  test("the band-by-band computation from scratch (a store recomputed under the rule) gives the rule's edges", () => {
    for (const [seed, limit] of [
      [4, 3],
      [5, 16],
    ]) {
      const phrases = clustered(seed, 200, 5);
      const edges = synonymEdgesOf(
        phrases.map((p) => p.name),
        new Float32Array(phrases.flatMap((p) => [...p.vector])),
        3,
        limit,
      );
      const named = edges.map((e) => pair({ a: phrases[e.a].name, b: phrases[e.b].name }));
      expect(new Set(named).size).toBe(named.length);
      expect(named.sort()).toEqual(reference(phrases, 3, limit));
      for (const e of edges) expect(e.score).toBe(cosine(phrases[e.a].vector, phrases[e.b].vector));
    }
  });

  test("a phrase met as a bucket head (by row id) and then by name is one phrase: repairing keeps the rule's edges", () => {
    // Clusters in 16 dimensions, most buckets crowded (3 heads); a newcomer in the same cluster reads
    // the heads of its buckets and their probes by row id, and the repair then reads every phrase by
    // name. Nothing left the store, so every list is the rule's already and nothing may change.
    const phrases = clustered(7, 160, 4);
    for (const newcomer of [clustered(7, 164, 4, "n").slice(160), clustered(8, 1, 1, "far")]) {
      const store = fakeStore();
      store.run([phrases], 3, 3);
      const graph = new SynonymGraph(store.source, 3, 3);
      graph.add(
        newcomer.map((p) => p.name),
        new Float32Array(newcomer.flatMap((p) => [...p.vector])),
      );
      expect(graph.repair(phrases.map((p) => p.name))).toEqual({ add: [], drop: [] });
    }
  });

  test("a newcomer reads a bounded number of stored buckets' heads, however crowded its cluster", () => {
    const limit = 4;
    const small = fakeStore();
    const large = fakeStore();
    small.run([clustered(5, 100, 2)], 5, limit);
    large.run([clustered(5, 1600, 2)], 5, limit);
    const newcomer = clustered(6, 1, 1, "new");
    for (const store of [small, large]) {
      store.served.rows = 0;
      store.run([newcomer], 5, limit);
    }
    // Its own buckets and the probes of the bands it heads, each at most `limit` rows, and the buckets
    // of the phrases it pushes out (at most one per band) and of their edges' ends.
    const bound = LSH_BANDS * (LSH_BITS + 1) * limit;
    expect(large.served.rows).toBeLessThanOrEqual(bound * 2);
    expect(large.served.rows).toBeLessThan(1600);
  });
});
