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
