import { describe, expect, test } from "bun:test";
import {
  buildCsr,
  type CsrGraph,
  localPageRank,
  PushScratch,
  type SparseReset,
} from "../src/memory/recall/ppr.ts";
import { GRAPH_SETTINGS, largestSet, topIndices } from "../src/memory/recall/snapshot.ts";
import { powerIteration as referenceIteration } from "./support/ppr-reference.ts";

const powerIteration = (graph: CsrGraph, reset: Float64Array, damping: number, tolerance?: number) =>
  referenceIteration(graph, reset, damping, tolerance).scores;

/** A fixed-seed generator, so a failing graph can be rebuilt. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
}

/**
 * A graph shaped like recall's: `passages` nodes in session chains (sequence edges of weight 3), each
 * linked to a few of `phrases` phrase nodes (a skewed choice, so some phrases are hubs), phrases linked
 * to each other, and a few nodes with no edge at all. Its reset vector is recall's too: every passage a
 * small prior, a few phrase seeds.
 */
function recallShapedGraph(seed: number, passages: number, phrases: number) {
  const random = generator(seed);
  const a: number[] = [];
  const b: number[] = [];
  const w: number[] = [];
  const isolated = new Set([passages - 1, passages + phrases - 1]);
  const link = (x: number, y: number, weight: number) => {
    if (x === y || isolated.has(x) || isolated.has(y)) return;
    a.push(x);
    b.push(y);
    w.push(weight);
  };
  for (let p = 0; p < passages; p++) {
    if (p % 8 !== 7) link(p, p + 1, 3);
    const mentions = 1 + Math.floor(random() * 6);
    for (let m = 0; m < mentions; m++)
      link(p, passages + Math.floor(random() ** 2 * phrases), 1 + Math.floor(random() * 3));
  }
  for (let f = 0; f < phrases * 2; f++)
    link(
      passages + Math.floor(random() * phrases),
      passages + Math.floor(random() * phrases),
      random() + 0.1,
    );
  const nodes = passages + phrases;
  const graph = buildCsr(nodes, Int32Array.from(a), Int32Array.from(b), Float64Array.from(w));
  const reset = new Float64Array(nodes);
  for (let p = 0; p < passages; p++) reset[p] = GRAPH_SETTINGS.passageNodeWeight * random();
  for (let s = 0; s < 5; s++) reset[passages + Math.floor(random() * phrases)] += random() / 10;
  return { graph, reset, passages };
}

/** A dense reset as the push takes it: its non-zero entries. */
function sparse(reset: Float64Array): SparseReset {
  const nodes: number[] = [];
  const weights: number[] = [];
  reset.forEach((w, i) => {
    if (w > 0) {
      nodes.push(i);
      weights.push(w);
    }
  });
  return { nodes, weights };
}

/** Every node's pushed score (normalised to sum 1), and the work done. */
function push(graph: CsrGraph, reset: Float64Array, tolerance: number, scratch?: PushScratch) {
  const scores = new Float64Array(graph.nodes);
  const work = localPageRank(graph, sparse(reset), 0.5, tolerance, scores, scratch);
  return { scores, work };
}

/** Recall's reset, made sparse the way graphSeeds makes it: the `seeds` largest passage priors and the phrase seeds. */
function recallSeeds(reset: Float64Array, passages: number, seeds: number): Float64Array {
  const out = new Float64Array(reset.length);
  for (const p of largestSet(reset.subarray(0, passages), seeds)) out[p] = reset[p];
  for (let i = passages; i < reset.length; i++) out[i] = reset[i];
  return out;
}

describe("personalised PageRank by local push against the power iteration", () => {
  test("a hand-solved weighted triangle with a pendant node", () => {
    // Triangle 0–1 (weight 2), 1–2 (1), 0–2 (1); node 3 hangs off 2 (weight 1). All reset mass on node 0,
    // damping ½. Strengths 3, 3, 3, 1; x = s + ½·W·x reads
    //   x0 = 1 + ½(2·x1/3 + x2/3), x1 = ½(2·x0/3 + x2/3), x2 = ½(x0/3 + x1/3 + x3), x3 = ½·x2/3.
    // By elimination: x3 = x2/6, x2 = 2(x0 + x1)/11, x1 = x0/3 + x2/6 ⇒ x = (6/5, 9/20, 3/10, 1/20),
    // Σx = 2 = 1 / (1 − d) (no node without edges), and p = x / Σx.
    const graph = buildCsr(
      4,
      Int32Array.from([0, 1, 0, 2]),
      Int32Array.from([1, 2, 2, 3]),
      Float64Array.from([2, 1, 1, 1]),
    );
    const { scores } = push(graph, Float64Array.from([1, 0, 0, 0]), 1e-15);
    const x = [6 / 5, 9 / 20, 3 / 10, 1 / 20];
    const sum = x.reduce((s, v) => s + v, 0);
    expect(sum).toBeCloseTo(2, 12);
    for (const [i, v] of x.entries()) expect(scores[i]).toBeCloseTo(v / sum, 10);
    expect(powerIteration(graph, Float64Array.from([1, 0, 0, 0]), 0.5)[3]).toBeCloseTo(x[3] / sum, 10);
  });

  test("an isolated node's mass comes back through the reset vector, as in the power iteration", () => {
    // Edge 0–1 and node 2 alone, reset mass on 0 and 2.
    const graph = buildCsr(3, Int32Array.from([0]), Int32Array.from([1]), Float64Array.from([1]));
    const reset = Float64Array.from([1, 0, 1]);
    const { scores } = push(graph, reset, 1e-15);
    const reference = powerIteration(graph, reset, 0.5);
    for (let i = 0; i < 3; i++) expect(scores[i]).toBeCloseTo(reference[i], 10);
    // x2 = s2 = ½ and x0 + x1 = s0 / (1 − d) = 1, so p2 = ½ / 1.5.
    expect(scores[2]).toBeCloseTo(1 / 3, 10);
  });

  test("random recall-shaped graphs with every passage seeded: the exact scores at a tight tolerance", () => {
    for (const seed of [1, 2, 3, 4]) {
      const { graph, reset } = recallShapedGraph(seed, 600, 150);
      const reference = powerIteration(graph, reset, 0.5);
      const { scores } = push(graph, reset, 1e-13);
      let worst = 0;
      for (let i = 0; i < graph.nodes; i++) worst = Math.max(worst, Math.abs(scores[i] - reference[i]));
      expect(worst).toBeLessThan(1e-10);
      expect(scores.reduce((s, v) => s + v, 0)).toBeCloseTo(1, 12);
    }
  });

  test("at recall's tolerance, from recall's sparse seeds: scores within the bound, the top 10 swapped only in near ties", () => {
    for (const seed of [11, 12, 13, 14, 15, 16]) {
      const { graph, reset, passages } = recallShapedGraph(seed, 2000, 400);
      const seeds = recallSeeds(reset, passages, GRAPH_SETTINGS.passageSeeds);
      const reference = powerIteration(graph, seeds, GRAPH_SETTINGS.damping).subarray(0, passages);
      const { scores, work } = push(graph, seeds, GRAPH_SETTINGS.pushTolerance);
      const ours = scores.subarray(0, passages);
      // Unnormalised, each score is low by at most 2 × tolerance × the largest weight × its strength, so
      // normalised (by Σx, the exact solution's sum: no node here without edges is seeded) at most that / Σx.
      let largest = 0;
      let total = 0;
      for (const w of seeds) {
        largest = Math.max(largest, w);
        total += w;
      }
      const sum = total / (1 - GRAPH_SETTINGS.damping);
      for (let i = 0; i < passages; i++) {
        const low = (2 * GRAPH_SETTINGS.pushTolerance * largest * graph.strength[i]) / sum;
        expect(reference[i] - ours[i]).toBeLessThan(low + 1e-15);
      }
      // The normalisation can lift a score a little too: every score within 1 % of the top one.
      const top = reference[topIndices(reference, 1)[0]];
      const bound = 1e-2 * top;
      for (let i = 0; i < passages; i++) expect(Math.abs(ours[i] - reference[i])).toBeLessThan(bound);
      const expected = topIndices(reference, 10);
      const got = topIndices(ours, 10);
      // Ranked in the reference's order, or the two swapped are a tie within twice the bound.
      for (let r = 1; r < got.length; r++)
        expect(reference[got[r]]).toBeLessThan(reference[got[r - 1]] + 2 * bound);
      for (const node of got) expect(reference[node]).toBeGreaterThan(reference[expected[9]] - 2 * bound);
      expect(got.filter((node) => expected.includes(node)).length).toBeGreaterThanOrEqual(9);
      expect(work.pushes).toBeGreaterThan(0);
    }
  });

  test("a large component the reset never reaches is never read: the same work and scores", () => {
    const small = recallShapedGraph(21, 500, 120);
    // The same graph alone and with a 40,000-node component after it (no edge between the two), both
    // built from one edge list so each node's neighbours come in the same order.
    const big = recallShapedGraph(22, 30000, 10000);
    const n = small.graph.nodes;
    const a: number[] = [];
    const b: number[] = [];
    const w: number[] = [];
    let smallEdges = 0;
    for (const g of [small.graph, big.graph]) {
      const shift = g === small.graph ? 0 : n;
      for (let i = 0; i < g.nodes; i++)
        for (let k = g.offsets[i]; k < g.offsets[i + 1]; k++)
          if (i < g.column[k]) {
            a.push(i + shift);
            b.push(g.column[k] + shift);
            w.push(g.weight[k]);
          }
      if (g === small.graph) smallEdges = a.length;
    }
    const csr = (nodes: number, edges: number) =>
      buildCsr(
        nodes,
        Int32Array.from(a.slice(0, edges)),
        Int32Array.from(b.slice(0, edges)),
        Float64Array.from(w.slice(0, edges)),
      );
    const joined = csr(n + big.graph.nodes, a.length);
    const seeds = recallSeeds(small.reset, small.passages, 50);
    const alone = push(csr(n, smallEdges), seeds, GRAPH_SETTINGS.pushTolerance);
    const both = new Float64Array(joined.nodes);
    both.set(seeds);
    const together = push(joined, both, GRAPH_SETTINGS.pushTolerance);
    expect(together.work).toEqual(alone.work);
    expect(together.scores.subarray(0, n)).toEqual(alone.scores);
    expect(together.scores.subarray(n).every((v) => v === 0)).toBe(true);
    expect(together.work.touched).toBeLessThanOrEqual(n);
  });

  test("scratch arrays kept between queries are left clean: the same answer twice, and after another query", () => {
    const { graph, reset, passages } = recallShapedGraph(31, 800, 200);
    const scratch = new PushScratch(graph.nodes);
    const seeds = recallSeeds(reset, passages, 100);
    const first = push(graph, seeds, GRAPH_SETTINGS.pushTolerance, scratch);
    push(
      graph,
      recallSeeds(
        reset.map((v, i) => (i % 3 ? v : 0)),
        passages,
        40,
      ),
      1e-6,
      scratch,
    );
    const again = push(graph, seeds, GRAPH_SETTINGS.pushTolerance, scratch);
    expect(again.scores).toEqual(first.scores);
    expect(scratch.estimate.every((v) => v === 0) && scratch.residual.every((v) => v === 0)).toBe(true);
  });

  test("reset weights kept in place add to their own node's score only, on the pushed scores' scale", () => {
    const { graph, reset, passages } = recallShapedGraph(41, 600, 150);
    const seeds = recallSeeds(reset, passages, 60);
    // The unpushed passages' weights less their mean, as graphSeeds keeps them: they sum to 0.
    const inPlace = new Float64Array(passages);
    let mean = 0;
    for (let i = 0; i < passages; i++) if (seeds[i] === 0) mean += reset[i];
    mean /= passages - 60;
    for (let i = 0; i < passages; i++) if (seeds[i] === 0) inPlace[i] = reset[i] - mean;
    const without = new Float64Array(graph.nodes);
    localPageRank(graph, sparse(seeds), 0.5, GRAPH_SETTINGS.pushTolerance, without);
    const kept = new Float64Array(graph.nodes);
    const work = localPageRank(graph, { ...sparse(seeds), inPlace }, 0.5, GRAPH_SETTINGS.pushTolerance, kept);
    const some = inPlace.findIndex((w) => w !== 0);
    const scale = (kept[some] - without[some]) / inPlace[some];
    expect(scale).toBeGreaterThan(0);
    for (let i = 0; i < graph.nodes; i++)
      expect(kept[i] - without[i]).toBeCloseTo((inPlace[i] ?? 0) * scale, 12);
    expect(kept.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    // Kept in place, never spread: the same push.
    expect(work).toEqual(
      localPageRank(graph, sparse(seeds), 0.5, GRAPH_SETTINGS.pushTolerance, new Float64Array(graph.nodes)),
    );
  });

  test("an all-zero reset vector gives all-zero scores and no push", () => {
    const { graph } = recallShapedGraph(5, 50, 10);
    const { scores, work } = push(graph, new Float64Array(graph.nodes), GRAPH_SETTINGS.pushTolerance);
    expect(scores.every((v) => v === 0)).toBe(true);
    expect(work).toEqual({ touched: 0, pushes: 0, entries: 0 });
  });
});

describe("largestSet", () => {
  test("the k largest positive values, in index order, ties at the cut by lower index", () => {
    const random = generator(7);
    for (let round = 0; round < 50; round++) {
      const n = 1 + Math.floor(random() * 300);
      // Few distinct values, so ties are common; some zeros and negatives, which are never picked.
      const values = Float64Array.from({ length: n }, () => Math.floor(random() * 12) - 2);
      const k = Math.floor(random() * (n + 5));
      const expected = [...values.keys()]
        .filter((i) => values[i] > 0)
        .sort((x, y) => values[y] - values[x] || x - y)
        .slice(0, k)
        .sort((x, y) => x - y);
      expect(largestSet(values, k)).toEqual(expected);
    }
  });
});
