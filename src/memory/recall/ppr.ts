/**
 * Personalized PageRank on an undirected weighted graph in CSR form (ngraph.pagerank has no
 * personalisation vector). Power iteration over typed arrays, stopped when the L1 change of the
 * score vector falls below a tolerance.
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
  /** Stop when the L1 change between iterations is below this. */
  tolerance: number;
  maxIterations: number;
}

export const PPR_DEFAULTS: PprOptions = { damping: 0.5, tolerance: 1e-8, maxIterations: 100 };

/**
 * Scores of every node for a personalisation (reset) vector, which is normalised to sum 1.
 * A node with no edges sends its mass back through the reset vector (as igraph/PRPACK do), so the
 * scores keep summing to 1.
 */
export function personalizedPageRank(
  graph: CsrGraph,
  reset: Float64Array,
  options: Partial<PprOptions> = {},
): { scores: Float64Array; iterations: number } {
  const { damping, tolerance, maxIterations } = { ...PPR_DEFAULTS, ...options };
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
      const mass = p[i];
      if (mass === 0) continue;
      const strength = graph.strength[i];
      if (strength === 0) {
        dangling += mass;
        continue;
      }
      const share = (damping * mass) / strength;
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
