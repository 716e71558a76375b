/**
 * The in-memory form of a store snapshot that every retrieval mode runs on: chunk vectors, BM25
 * postings, fact vectors and the passage+phrase graph in CSR form. Built once per store generation
 * and kept warm in a long-lived process (the MCP server).
 */
import type { StaticModel } from "../../embed/model.ts";
import { EDGE_KIND, type StoreSnapshot } from "../../store/types.ts";
import { Bm25Index } from "./bm25.ts";
import { buildCsr, type CsrGraph, personalizedPageRank } from "./ppr.ts";

/** HippoRAG 2's settings: facts linked per query, passage-node reset weight, PPR damping. */
export const LINK_TOP_FACTS = 5;
export const PASSAGE_NODE_WEIGHT = 0.05;
export const PPR_DAMPING = 0.5;

export type Mode = "hybrid" | "graph" | "dense" | "bm25";

export interface Ranked {
  /** Index into `chunks`. */
  chunk: number;
  score: number;
}

export class MemoryIndex {
  readonly chunks: StoreSnapshot["chunks"];
  readonly generation: number;
  readonly dim: number;
  private readonly vectors: Float32Array;
  private readonly bm25: Bm25Index;
  private readonly factVectors: Float32Array;
  /** Graph node of each fact's subject and object. */
  private readonly factSubject: Int32Array;
  private readonly factObject: Int32Array;
  readonly graph: CsrGraph;
  /** Passages are nodes 0..P-1 (in chunk order); phrases follow. */
  private readonly passageCount: number;
  /** Number of passages holding each phrase node (its context-edge degree). */
  private readonly phraseChunks: Int32Array;
  readonly entityCount: number;
  readonly factCount: number;
  readonly edgeCount: number;

  private constructor(snapshot: StoreSnapshot, vectors: Float32Array, factVectors: Float32Array) {
    this.chunks = snapshot.chunks;
    this.generation = snapshot.generation;
    this.dim = snapshot.dim;
    this.vectors = vectors;
    this.factVectors = factVectors;
    this.bm25 = Bm25Index.fromTexts(snapshot.chunks.map((c) => c.text));
    const P = snapshot.chunks.length;
    this.passageCount = P;
    const chunkNode = new Map<number, number>();
    snapshot.chunks.forEach((c, i) => {
      chunkNode.set(c.id, i);
    });
    const entityNode = new Map<number, number>();
    snapshot.entities.forEach((e, i) => {
      entityNode.set(e.id, P + i);
    });
    this.entityCount = snapshot.entities.length;
    const { kind, a, b, weight } = snapshot.edges;
    const ea = new Int32Array(kind.length);
    const eb = new Int32Array(kind.length);
    const ew = new Float64Array(kind.length);
    const phraseChunks = new Int32Array(snapshot.entities.length);
    let m = 0;
    for (let e = 0; e < kind.length; e++) {
      const x = kind[e] === EDGE_KIND.context ? chunkNode.get(a[e]) : entityNode.get(a[e]);
      const y = entityNode.get(b[e]);
      if (x === undefined || y === undefined || weight[e] <= 0) continue;
      if (kind[e] === EDGE_KIND.context) phraseChunks[y - P]++;
      ea[m] = x;
      eb[m] = y;
      ew[m++] = weight[e];
    }
    this.edgeCount = m;
    this.phraseChunks = phraseChunks;
    this.graph = buildCsr(
      P + snapshot.entities.length,
      ea.subarray(0, m),
      eb.subarray(0, m),
      ew.subarray(0, m),
    );
    this.factCount = snapshot.facts.length;
    this.factSubject = new Int32Array(snapshot.facts.length);
    this.factObject = new Int32Array(snapshot.facts.length);
    snapshot.facts.forEach((f, i) => {
      this.factSubject[i] = entityNode.get(f.subject) ?? -1;
      this.factObject[i] = entityNode.get(f.object) ?? -1;
    });
  }

  /**
   * Builds the index. Vectors stored under another model than `model` (the user switched models) are
   * re-embedded in memory so every score compares like with like.
   */
  static async build(snapshot: StoreSnapshot, model: StaticModel): Promise<MemoryIndex> {
    const reembed = async (vectors: Float32Array, models: string[], texts: () => string[]) => {
      if (models.every((m) => m === model.id) && (models.length === 0 || snapshot.dim === model.dim))
        return vectors;
      return model.embedBatch(texts());
    };
    const labels = new Map(snapshot.entities.map((e) => [e.id, e.label]));
    const vectors = await reembed(snapshot.chunkVectors, snapshot.chunkModels, () =>
      snapshot.chunks.map((c) => c.text),
    );
    const factVectors = await reembed(snapshot.factVectors, snapshot.factModels, () =>
      snapshot.facts.map(
        (f) => `${labels.get(f.subject) ?? ""} ${f.predicate} ${labels.get(f.object) ?? ""}`,
      ),
    );
    return new MemoryIndex({ ...snapshot, dim: model.dim }, vectors, factVectors);
  }

  /** Cosine of the query with every chunk (rows are L2-normalised, so a dot product). */
  denseScores(query: Float32Array): Float64Array {
    return dotAll(this.vectors, query, this.chunks.length, this.dim);
  }

  bm25Scores(query: string): Float64Array {
    return this.bm25.scores(query);
  }

  /**
   * HippoRAG 2's graph search: link the query to its top facts; seed each fact's phrases with the fact's
   * score divided by the number of passages holding the phrase (rare phrases are specific); give every
   * passage a reset weight of PASSAGE_NODE_WEIGHT × its min-max normalised dense score; run PPR and
   * score passages by their PageRank. Falls back to dense scores when the graph has no facts.
   */
  graphScores(query: Float32Array, dense = this.denseScores(query)): Float64Array {
    const P = this.passageCount;
    if (this.factCount === 0) return dense;
    const factScores = minMax(dotAll(this.factVectors, query, this.factCount, this.dim));
    const top = topIndices(factScores, LINK_TOP_FACTS);
    const reset = new Float64Array(this.graph.nodes);
    const seen = new Float64Array(this.graph.nodes);
    for (const f of top) {
      for (const node of [this.factSubject[f], this.factObject[f]]) {
        if (node < 0) continue;
        const holders = this.phraseChunks[node - P];
        reset[node] += holders > 0 ? factScores[f] / holders : factScores[f];
        seen[node]++;
      }
    }
    // A phrase named by several linked facts gets their mean weight, as HippoRAG 2 does.
    for (let i = P; i < reset.length; i++) if (seen[i] > 1) reset[i] /= seen[i];
    const passagePrior = minMax(dense);
    for (let i = 0; i < P; i++) reset[i] = passagePrior[i] * PASSAGE_NODE_WEIGHT;
    const { scores } = personalizedPageRank(this.graph, reset, { damping: PPR_DAMPING });
    return scores.subarray(0, P);
  }
}

export function dotAll(rows: Float32Array, query: Float32Array, count: number, dim: number): Float64Array {
  const out = new Float64Array(count);
  for (let r = 0; r < count; r++) {
    const base = r * dim;
    let s = 0;
    for (let d = 0; d < dim; d++) s += rows[base + d] * query[d];
    out[r] = s;
  }
  return out;
}

/** Min-max normalisation to [0, 1]; a constant vector maps to zeros. */
export function minMax(values: Float64Array): Float64Array {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const v of values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  const out = new Float64Array(values.length);
  const span = hi - lo;
  if (!(span > 0)) return out;
  for (let i = 0; i < values.length; i++) out[i] = (values[i] - lo) / span;
  return out;
}

/** Indices of the k largest values, largest first (ties by lower index). */
export function topIndices(values: ArrayLike<number>, k: number): number[] {
  const picked: number[] = [];
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (picked.length === k && v <= values[picked[k - 1]]) continue;
    let pos = picked.length === k ? k - 1 : picked.length;
    if (picked.length < k) picked.push(i);
    while (pos > 0 && values[picked[pos - 1]] < v) {
      picked[pos] = picked[pos - 1];
      pos--;
    }
    picked[pos] = i;
  }
  return picked;
}
