/**
 * Personalized PageRank on an undirected weighted graph in CSR form (ngraph.pagerank has no
 * personalisation vector), over typed arrays, stopped when a sweep's L1 change of the scores falls
 * below a tolerance.
 */

/** An undirected weighted graph: each edge is stored in both directions. */
export interface CsrGraph {
  nodes: number;
  /** Neighbours of node i are `column[offsets[i] .. offsets[i+1])`. */
  offsets: Int32Array;
  column: Int32Array;
  weight: Float64Array;
  /** Sum of node i's edge weights (its out-weight). */
  strength: Float64Array;
}

export function buildCsr(nodes: number, a: Int32Array, b: Int32Array, w: Float64Array): CsrGraph {
  const degree = new Int32Array(nodes);
  for (let e = 0; e < a.length; e++) {
    degree[a[e]]++;
    degree[b[e]]++;
  }
  const offsets = new Int32Array(nodes + 1);
  for (let i = 0; i < nodes; i++) offsets[i + 1] = offsets[i] + degree[i];
  const fill = offsets.slice(0, nodes);
  const column = new Int32Array(offsets[nodes]);
  const weight = new Float64Array(offsets[nodes]);
  const strength = new Float64Array(nodes);
  for (let e = 0; e < a.length; e++) {
    const x = a[e];
    const y = b[e];
    const v = w[e];
    column[fill[x]] = y;
    weight[fill[x]++] = v;
    column[fill[y]] = x;
    weight[fill[y]++] = v;
    strength[x] += v;
    strength[y] += v;
  }
  return { nodes, offsets, column, weight, strength };
}

export interface PprOptions {
  /** Probability of following an edge rather than jumping back to the personalisation (HippoRAG 2: 0.5). */
  damping: number;
  /** Stop when no scored node's score moved by more than this share of the highest scored score in a sweep. */
  tolerance: number;
  maxIterations: number;
  /** Nodes 0 … scored − 1 are the ones ranked (recall: the passages); all nodes when absent. */
  scored?: number;
}

export const PPR_DEFAULTS: PprOptions = { damping: 0.5, tolerance: 1e-8, maxIterations: 100 };

/**
 * Scores of every node for a personalisation (reset) vector, which is normalised to sum 1.
 * A node with no edges sends its mass back through the reset vector (as igraph/PRPACK do), so the
 * scores sum to 1.
 *
 * PERF: the power iteration p ← d·W·p + (1 − d + d·dangling)·s has the fixed point p = x / Σx with
 * x = s + d·W·x (W the walk's transition matrix, zero columns for nodes with no edges: their mass
 * returns through s, a scalar the normalisation absorbs). That system is solved by Gauss–Seidel sweeps
 * in gather form — each node reads its neighbours' x / strength, updated values used at once — which
 * needs no scatter buffer and converges in fewer passes over the edges than the power iteration
 * (16× LoCoMo, 1.24 M CSR entries: ~1.5 ms a sweep against ~4 ms an iteration, warm).
 */
export function personalizedPageRank(
  graph: CsrGraph,
  reset: Float64Array,
  options: Partial<PprOptions> = {},
): { scores: Float64Array; iterations: number } {
  const { damping, tolerance, maxIterations } = { ...PPR_DEFAULTS, ...options };
  const { nodes: n, strength } = graph;
  const scored = Math.min(n, options.scored ?? n);
  let total = 0;
  for (let i = 0; i < n; i++) total += reset[i];
  const x = new Float64Array(n);
  if (total <= 0) return { scores: x, iterations: 0 };
  const s = new Float64Array(n);
  /** x_i / strength_i: what node i sends along each unit of edge weight. */
  const share = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    s[i] = reset[i] / total;
    x[i] = s[i];
    share[i] = strength[i] > 0 ? x[i] / strength[i] : 0;
  }
  let iterations = 0;
  while (iterations < maxIterations) {
    iterations++;
    if (sweep(graph, s, x, share, damping, scored) <= tolerance) break;
  }
  let sum = 0;
  for (let i = 0; i < n; i++) sum += x[i];
  for (let i = 0; i < n; i++) x[i] /= sum;
  return { scores: x, iterations };
}

/**
 * One Gauss–Seidel sweep of x = s + d·W·x; returns the largest change of a scored node's x as a share of
 * the largest scored x (rankings need each score right relative to the top ones; a sum over all nodes
 * would loosen as the store grows). A function of its own so the JIT compiles it after the first sweep
 * of a process's first query (measured: that query's PPR at 16× LoCoMo 22 ms of CPU instead of 43 with
 * the loop inline).
 */
function sweep(
  graph: CsrGraph,
  s: Float64Array,
  x: Float64Array,
  share: Float64Array,
  damping: number,
  scored: number,
): number {
  const { nodes: n, offsets, column, weight, strength } = graph;
  let change = 0;
  let top = 0;
  for (let i = 0; i < n; i++) {
    let incoming = 0;
    for (let k = offsets[i], end = offsets[i + 1]; k < end; k++) incoming += weight[k] * share[column[k]];
    const value = s[i] + damping * incoming;
    if (i < scored) {
      const moved = Math.abs(value - x[i]);
      if (moved > change) change = moved;
      if (value > top) top = value;
    }
    x[i] = value;
    if (strength[i] > 0) share[i] = value / strength[i];
  }
  return top > 0 ? change / top : 0;
}
