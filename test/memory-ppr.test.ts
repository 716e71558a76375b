import { describe, expect, test } from "bun:test";
import { buildCsr, type CsrGraph, personalizedPageRank } from "../src/memory/recall/ppr.ts";
import { GRAPH_SETTINGS, topIndices } from "../src/memory/recall/snapshot.ts";
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

describe("personalised PageRank (Gauss–Seidel) against the power iteration", () => {
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
    const { scores } = personalizedPageRank(graph, Float64Array.from([1, 0, 0, 0]), {
      damping: 0.5,
      tolerance: 1e-14,
    });
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
    const { scores } = personalizedPageRank(graph, reset, { damping: 0.5, tolerance: 1e-14 });
    const reference = powerIteration(graph, reset, 0.5);
    for (let i = 0; i < 3; i++) expect(scores[i]).toBeCloseTo(reference[i], 10);
    // x2 = s2 = ½ and x0 + x1 = s0 / (1 − d) = 1, so p2 = ½ / 1.5.
    expect(scores[2]).toBeCloseTo(1 / 3, 10);
  });

  test("random recall-shaped graphs: the same scores at a tight tolerance, in fewer passes", () => {
    for (const seed of [1, 2, 3, 4]) {
      const { graph, reset } = recallShapedGraph(seed, 600, 150);
      const reference = powerIteration(graph, reset, 0.5);
      const { scores, iterations } = personalizedPageRank(graph, reset, { damping: 0.5, tolerance: 1e-12 });
      let worst = 0;
      for (let i = 0; i < graph.nodes; i++) worst = Math.max(worst, Math.abs(scores[i] - reference[i]));
      expect(worst).toBeLessThan(1e-12);
      expect(scores.reduce((s, v) => s + v, 0)).toBeCloseTo(1, 12);
      expect(iterations).toBeGreaterThan(1);
      expect(iterations).toBeLessThan(40);
    }
  });

  test("at recall's tolerance each passage's score is within the tolerance of the top one, and the top 20 differ only in near ties", () => {
    for (const seed of [11, 12, 13, 14, 15, 16]) {
      const { graph, reset, passages } = recallShapedGraph(seed, 2000, 400);
      const reference = powerIteration(graph, reset, GRAPH_SETTINGS.damping).subarray(0, passages);
      const { scores } = personalizedPageRank(graph, reset, {
        damping: GRAPH_SETTINGS.damping,
        tolerance: GRAPH_SETTINGS.pprTolerance,
        maxIterations: GRAPH_SETTINGS.pprMaxIterations,
        scored: passages,
      });
      const ours = scores.subarray(0, passages);
      const expected = topIndices(reference, 20);
      const tie = 2 * GRAPH_SETTINGS.pprTolerance * reference[expected[0]];
      for (let i = 0; i < passages; i++)
        expect(Math.abs(ours[i] - reference[i])).toBeLessThan(
          GRAPH_SETTINGS.pprTolerance * reference[expected[0]],
        );
      const got = topIndices(ours, 20);
      // Ranked in the reference's order, or the two swapped are a tie within the tolerance.
      for (let r = 1; r < got.length; r++)
        expect(reference[got[r]]).toBeLessThan(reference[got[r - 1]] + tie);
      for (const node of got) expect(reference[node]).toBeGreaterThan(reference[expected[19]] - tie);
      expect(got.filter((node) => expected.includes(node)).length).toBeGreaterThanOrEqual(19);
    }
  });

  test("an all-zero reset vector gives all-zero scores and no sweep", () => {
    const { graph } = recallShapedGraph(5, 50, 10);
    const { scores, iterations } = personalizedPageRank(graph, new Float64Array(graph.nodes));
    expect(scores.every((v) => v === 0)).toBe(true);
    expect(iterations).toBe(0);
  });
});
