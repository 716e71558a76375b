import type { CsrGraph } from "../../src/memory/recall/ppr.ts";

/**
 * The reference: the power iteration recall ran before the Gauss–Seidel solver (p ← d·W·p +
 * (1 − d + d·dangling)·s, stopped when the L1 change is below the tolerance), kept to pin the solver's
 * scores and rankings (test/memory-ppr.test.ts) and as the baseline of benchmark/recall-cost.ts.
 */
export function powerIteration(
  graph: CsrGraph,
  reset: Float64Array,
  damping: number,
  tolerance = 1e-13,
  maxIterations = 1000,
): { scores: Float64Array; iterations: number } {
  const n = graph.nodes;
  let total = 0;
  for (let i = 0; i < n; i++) total += reset[i];
  const s = new Float64Array(n);
  if (total <= 0) return { scores: s, iterations: 0 };
  for (let i = 0; i < n; i++) s[i] = reset[i] / total;
  let p = Float64Array.from(s);
  let next = new Float64Array(n);
  let iterations = 0;
  while (iterations < maxIterations) {
    iterations++;
    next.fill(0);
    let dangling = 0;
    for (let i = 0; i < n; i++) {
      if (p[i] === 0) continue;
      if (graph.strength[i] === 0) {
        dangling += p[i];
        continue;
      }
      const share = (damping * p[i]) / graph.strength[i];
      for (let k = graph.offsets[i]; k < graph.offsets[i + 1]; k++)
        next[graph.column[k]] += share * graph.weight[k];
    }
    const jump = 1 - damping + damping * dangling;
    let change = 0;
    for (let i = 0; i < n; i++) {
      next[i] += jump * s[i];
      change += Math.abs(next[i] - p[i]);
    }
    [p, next] = [next, p];
    if (change < tolerance) break;
  }
  return { scores: p, iterations };
}

/**
 * The solver recall ran before its local push (kept as the baseline of benchmark/recall-cost.ts and to
 * check the push against an exact solution): x = s + d·W·x by Gauss–Seidel sweeps over every node in
 * gather form, stopped when a sweep moves no scored node's x by more than `tolerance` of the top scored
 * x; scores normalised to sum 1.
 */
export function gaussSeidelPageRank(
  graph: CsrGraph,
  reset: Float64Array,
  {
    damping,
    tolerance,
    scored = graph.nodes,
    maxIterations = 1000,
  }: {
    damping: number;
    tolerance: number;
    scored?: number;
    maxIterations?: number;
  },
): { scores: Float64Array; iterations: number } {
  const { nodes: n, offsets, column, weight, strength, added } = graph;
  let total = 0;
  for (let i = 0; i < n; i++) total += reset[i];
  const x = new Float64Array(n);
  if (total <= 0) return { scores: x, iterations: 0 };
  const s = new Float64Array(n);
  const share = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    s[i] = reset[i] / total;
    x[i] = s[i];
    share[i] = strength[i] > 0 ? x[i] / strength[i] : 0;
  }
  let iterations = 0;
  while (iterations < maxIterations) {
    iterations++;
    let change = 0;
    let top = 0;
    for (let i = 0; i < n; i++) {
      let incoming = 0;
      if (i + 1 < offsets.length)
        for (let k = offsets[i], end = offsets[i + 1]; k < end; k++) incoming += weight[k] * share[column[k]];
      // A persisted base's added rows (recall.add.bin) are part of the graph too.
      if (added)
        for (let k = added.offsets[i], end = added.offsets[i + 1]; k < end; k++)
          incoming += added.weight[k] * share[added.column[k]];
      const value = s[i] + damping * incoming;
      if (i < scored) {
        change = Math.max(change, Math.abs(value - x[i]));
        top = Math.max(top, value);
      }
      x[i] = value;
      if (strength[i] > 0) share[i] = value / strength[i];
    }
    if (top <= 0 || change / top <= tolerance) break;
  }
  let sum = 0;
  for (let i = 0; i < n; i++) sum += x[i];
  for (let i = 0; i < n; i++) x[i] /= sum;
  return { scores: x, iterations };
}
