/**
 * Personalized PageRank on an undirected weighted graph in CSR form (ngraph.pagerank has no
 * personalisation vector), over typed arrays, by a local forward push from a sparse reset: a query reads
 * the part of the graph its reset reaches, not the whole graph.
 */
import { guardOf, type PageGuard } from "./snapshot-pages.ts";

/** Rows of neighbours: node i's are `column[offsets[i] .. offsets[i+1])` (nodes past `offsets` have none). */
export interface CsrRows {
  offsets: Int32Array;
  column: Int32Array;
  weight: Float64Array;
}

/**
 * An undirected weighted graph: each edge is stored in both directions. `added` holds further rows over
 * every node (a persisted snapshot's edges since its base was written, and weight changes of the base's
 * edges as entries of the difference), read after each node's own: the graph is the sum of the two.
 */
export interface CsrGraph extends CsrRows {
  nodes: number;
  /** Sum of node i's edge weights over both row sets (its out-weight). */
  strength: Float64Array;
  added?: CsrRows;
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

/** A reset vector given by its non-zero entries only. */
export interface SparseReset {
  nodes: ArrayLike<number>;
  weights: ArrayLike<number>;
  /**
   * Reset weights of nodes 0 … length − 1 that are not pushed but kept where they are (in the estimate,
   * as a first push would put them, without spreading to the neighbours); summing to 0.
   */
  inPlace?: Float64Array;
}

/** What a local PageRank did: nodes it reached and CSR entries it read (its cost, whatever the graph's size). */
export interface PushWork {
  touched: number;
  pushes: number;
  entries: number;
}

/**
 * Scratch arrays of one graph's size for `localPageRank`, allocated once per graph and cleaned after each
 * call through the list of nodes it touched, so a query never writes (or zeroes) an array of every node.
 */
export class PushScratch {
  readonly estimate: Float64Array;
  readonly residual: Float64Array;
  readonly queue: Int32Array;
  readonly queued: Uint8Array;
  readonly touched: Int32Array;
  readonly seen: Uint8Array;
  constructor(nodes: number) {
    this.estimate = new Float64Array(nodes);
    this.residual = new Float64Array(nodes);
    this.queue = new Int32Array(nodes);
    this.queued = new Uint8Array(nodes);
    this.touched = new Int32Array(nodes);
    this.seen = new Uint8Array(nodes);
  }
}

/**
 * Nodes whose rows are checked together: a fresh process's push reaches most nodes of a store like 16×
 * LoCoMo (46,816 of 57,265), and one check per node cost it ~10 ms of calls in the slow tiers; a block
 * of 64 rows spans ~2.5 KB of neighbours at 10 entries a node, about what one row's pages would be.
 */
const ROW_BLOCK_BITS = 6;

/**
 * Page checks of a graph mapped from recall.bin, by blocks of rows: a block's rows (their offsets,
 * neighbours and weights, in each row set) are checked the first time the push reads one of them.
 * PERF: one byte per block tested inline per push.
 */
class RowChecks {
  readonly checked: Uint8Array;
  constructor(
    nodes: number,
    private readonly layers: { rows: CsrRows; pages: (PageGuard | undefined)[] }[],
  ) {
    this.checked = new Uint8Array((nodes >> ROW_BLOCK_BITS) + 1);
  }

  check(block: number): void {
    for (const { rows, pages } of this.layers) {
      const [offsets, column, weight] = pages;
      const first = block << ROW_BLOCK_BITS;
      const end = Math.min(rows.offsets.length - 1, first + (1 << ROW_BLOCK_BITS));
      if (first >= end) continue;
      offsets?.range(first, end + 1);
      const from = rows.offsets[first];
      const to = rows.offsets[end];
      column?.range(from, to);
      weight?.range(from, to);
    }
    this.checked[block] = 1;
  }
}

const rowChecks = new WeakMap<CsrGraph, RowChecks | null>();

/** The row checks of a mapped graph, null for one built in memory. */
function rowChecksOf(graph: CsrGraph): RowChecks | null {
  let found = rowChecks.get(graph);
  if (found === undefined) {
    const layers = [graph, ...(graph.added ? [graph.added] : [])].map((rows) => ({
      rows,
      pages: [rows.offsets, rows.column, rows.weight].map(guardOf),
    }));
    found = layers.some((l) => l.pages.some(Boolean)) ? new RowChecks(graph.nodes, layers) : null;
    rowChecks.set(graph, found);
  }
  return found;
}

/** Where a push run stands between `drain` calls. */
interface PushRun {
  head: number;
  tail: number;
  size: number;
  touched: number;
  pushes: number;
  entries: number;
}

/**
 * Personalised PageRank from a sparse reset by forward push (Andersen, Chung and Lang 2006), on the
 * linear system x = s + d·W·x (W the walk's transition matrix; a node with no edges keeps its mass, as
 * igraph/PRPACK return it through the reset), normalised to sum 1 — the fixed point of the power
 * iteration p ← d·W·p + (1 − d + d·dangling)·s. A node holding residual r moves it into its estimate and
 * sends d·r·w/strength to each neighbour; a node is pushed while its residual exceeds `tolerance` × the
 * largest reset weight × its strength. The residual left behind then bounds the error: since
 * W·strength = strength, (I − d·W)⁻¹ maps a residual ≤ ε·strength to at most ε·strength / (1 − d), so
 * every node's score is low by at most that. Each push moves at least ε·strength into the estimates,
 * whose total is at most Σs / (1 − d): the work is bounded by the reset and the tolerance, not by the
 * graph — a component the reset never reaches is never read.
 *
 * Writes the normalised score of each node with index < `out.length` (recall: the passages) into
 * `out`, which must hold zeros: the pushed estimate plus the node's `inPlace` weight. Returns the work.
 */
export function localPageRank(
  graph: CsrGraph,
  reset: SparseReset,
  damping: number,
  tolerance: number,
  out: Float64Array,
  scratch: PushScratch = new PushScratch(graph.nodes),
): PushWork {
  const { strength } = graph;
  // One value per node, read for every neighbour the push meets: checked whole (8 bytes a node, ~1 ms
  // at 10⁶ nodes) rather than page by page in the push's inner loop.
  guardOf(strength)?.all();
  const { estimate, residual, queue, queued, touched, seen } = scratch;
  let largest = 0;
  for (let i = 0; i < reset.nodes.length; i++) if (reset.weights[i] > largest) largest = reset.weights[i];
  if (!(largest > 0)) return { touched: 0, pushes: 0, entries: 0 };
  const epsilon = tolerance * largest;
  const run: PushRun = { head: 0, tail: 0, size: 0, touched: 0, pushes: 0, entries: 0 };
  for (let i = 0; i < reset.nodes.length; i++) {
    const node = reset.nodes[i];
    const w = reset.weights[i];
    if (!(w > 0)) continue;
    if (!seen[node]) {
      seen[node] = 1;
      touched[run.touched++] = node;
    }
    residual[node] += w;
    if (!queued[node] && residual[node] > epsilon * strength[node]) {
      queued[node] = 1;
      queue[run.tail] = node;
      if (++run.tail === queue.length) run.tail = 0;
      run.size++;
    }
  }
  const rows = rowChecksOf(graph);
  while (run.size > 0) drain(graph, scratch, run, damping, epsilon, rows);
  let sum = 0;
  for (let i = 0; i < run.touched; i++) sum += estimate[touched[i]];
  const inPlace = reset.inPlace;
  if (inPlace) for (let i = 0; i < inPlace.length && i < out.length; i++) out[i] = inPlace[i] / sum;
  for (let i = 0; i < run.touched; i++) {
    const v = touched[i];
    if (v < out.length) out[v] += estimate[v] / sum;
    estimate[v] = 0;
    residual[v] = 0;
    seen[v] = 0;
  }
  return { touched: run.touched, pushes: run.pushes, entries: run.entries };
}

/**
 * Up to PUSHES_PER_DRAIN pushes from the FIFO ring `queue` (a node is in it at most once, `queued`, so
 * it never holds more than every node). PERF: a function called again and again rather than one long
 * loop, so a fresh process's JIT compiles it after its first calls and runs the rest optimised (one loop
 * inline: the first query's push at 16× LoCoMo ran in the slow tiers throughout). A graph mapped from
 * recall.bin has a pushed node's row checked as the push first reads it.
 */
function drain(
  graph: CsrGraph,
  scratch: PushScratch,
  run: PushRun,
  damping: number,
  epsilon: number,
  rows: RowChecks | null,
): void {
  const { offsets, column, weight, strength, added } = graph;
  const layers = added ? 2 : 1;
  const { estimate, residual, queue, queued, touched, seen } = scratch;
  const capacity = queue.length;
  let { head, tail, size, touched: touchedCount, entries } = run;
  let budget = PUSHES_PER_DRAIN;
  while (size > 0 && budget-- > 0) {
    const u = queue[head];
    if (++head === capacity) head = 0;
    size--;
    queued[u] = 0;
    const r = residual[u];
    residual[u] = 0;
    estimate[u] += r;
    run.pushes++;
    if (!(strength[u] > 0)) continue;
    const share = (damping * r) / strength[u];
    if (rows !== null && rows.checked[u >> ROW_BLOCK_BITS] === 0) rows.check(u >> ROW_BLOCK_BITS);
    // The node's own row, then its row of `added` (the same loop over each set of rows).
    for (let layer = 0; layer < layers; layer++) {
      const o = layer === 0 ? offsets : (added as CsrRows).offsets;
      if (u + 1 >= o.length) continue;
      const c = layer === 0 ? column : (added as CsrRows).column;
      const w = layer === 0 ? weight : (added as CsrRows).weight;
      const end = o[u + 1];
      entries += end - o[u];
      for (let k = o[u]; k < end; k++) {
        const v = c[k];
        if (!seen[v]) {
          seen[v] = 1;
          touched[touchedCount++] = v;
        }
        const value = residual[v] + share * w[k];
        residual[v] = value;
        if (!queued[v] && value > epsilon * strength[v]) {
          queued[v] = 1;
          queue[tail] = v;
          if (++tail === capacity) tail = 0;
          size++;
        }
      }
    }
  }
  run.head = head;
  run.tail = tail;
  run.size = size;
  run.touched = touchedCount;
  run.entries = entries;
}

const PUSHES_PER_DRAIN = 64;
