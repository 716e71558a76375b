/**
 * The in-memory form of a store snapshot that every retrieval mode runs on: chunk vectors, BM25
 * postings, fact vectors and the passage+phrase graph in CSR form. Built once per store generation
 * and kept warm in a long-lived process (the MCP server).
 */
import type { StaticModel } from "../../embed/model.ts";
import { type FloatRows, floatRows } from "../../simd/float-dots.ts";
import type { StoreSnapshot } from "../../store/types.ts";
import { lexicalTokens } from "../tokens.ts";
import { Bm25Index } from "./bm25.ts";
import { type CsrGraph, localPageRank, PushScratch, type PushWork, type SparseReset } from "./ppr.ts";
import type { SnapshotAdditions } from "./snapshot-additions.ts";
import { deltaOfSnapshot, extendArrays, type SnapshotArrays } from "./snapshot-build.ts";
import { guardOf } from "./snapshot-pages.ts";
import { type Role, speakerNames } from "./speakers.ts";

/**
 * Graph-search settings. The first three are HippoRAG 2's: facts linked per query, the passage nodes'
 * reset weight, PPR damping. The two mixes are ours: HippoRAG 2 links the query to facts and passages
 * with a 4k-dimension LLM embedder; our static 64-dimension model alone links poorly, so the query's
 * BM25 over fact texts and over passages joins the dense cosine (tuned on LoCoMo and MuSiQue; see
 * docs/memory.md). A mix of 1 is pure dense, HippoRAG 2's recipe.
 */
export const GRAPH_SETTINGS = {
  linkTopFacts: 5,
  passageNodeWeight: 0.05,
  damping: 0.5,
  factDenseMix: 0.5,
  passageDenseMix: 0.25,
  /**
   * Passages pushed from PPR's reset (those of the best query scores; see graphSeeds): HippoRAG 2 seeds
   * every passage, which makes every query diffuse over the whole graph. LoCoMo questions asked of the
   * whole store in one project, hybrid recall@10 against every passage pushed and solved exactly: 1×
   * (3,075 passages) 61.0 against 60.8, 16× 62.8 against 61.6. MuSiQue (1,890 passages) hybrid @5 65.9
   * against 66.2 with 300, 1,000 or 1,500: one question's supporting passage swaps ranks 5 and 6 with a
   * passage of its own document (docs/memory.md, "Query cost").
   */
  passageSeeds: 300,
  /**
   * The push's residual threshold, as a share of the largest reset weight per unit of a node's strength:
   * each score is then low by at most 2 × this × the largest weight × the node's strength. MuSiQue hybrid
   * recall@5 (300 seeds) 64.9 at 1e-4, 65.9 at 3e-5, 1e-5 and 1e-6: the LLM graph's RRF follows PPR's
   * order, so near-ties need this precision; CSR entries read per query fall ~10× from 1e-5 to 1e-4.
   */
  pushTolerance: 3e-5,
  /**
   * Up to this many facts, a query's fact linking scores every fact (a dense scan, ~5–10 ms per 100,000
   * facts warm on the dev box; LoCoMo at 16× holds 33,767, MuSiQue 16,978): HippoRAG 2's linking. Above
   * it only the facts sharing a term with the query are scored (the FACT_CANDIDATES best by BM25), so a
   * store of millions of facts costs what the query's postings cost. That changes the linking (no fact
   * is found by meaning alone; scores are normalised among the candidates): with this at 0, MuSiQue hybrid
   * recall@5 66.2 → 65.4 (docs/memory.md, "Query cost").
   */
  denseFactScanLimit: 100_000,
};

/**
 * Above GRAPH_SETTINGS.denseFactScanLimit, the facts of the best BM25 scores that get a dense cosine:
 * a common word of a large-vocabulary store matches a third of its facts (141,000 of 468,000 at 20,000 synthetic
 * records, 15 ms of cosines), and a fact below the 4,096th by BM25 would need a cosine far above theirs
 * to reach the top 5.
 */
export const FACT_CANDIDATES = 4096;

/**
 * Above GRAPH_SETTINGS.denseFactScanLimit, a query term held by more facts than this is left out of
 * fact linking (unless every term is): its IDF is low (~3.3 at 468,000 facts) and its postings are the
 * part of a query's work that grows with the store — on the synthetic store `src`, `ts` and numbers
 * reach 10⁵ facts each. There, against every fact scanned and PPR solved exactly: hybrid top 10 98.1 %
 * the same with the cap, 98.7 % without; fact linking 7.2 → 1.2 ms CPU, warm recall() 12.0 → 6.4 ms.
 */
export const FACT_TERM_POSTINGS = 16_384;

/**
 * Share of a neighbouring chunk's score a chunk borrows (previous and next in its session): an answer
 * often sits in the turn after the one whose words match (LoCoMo BM25 recall@10 62.8 → 68.2 at 0.5).
 */
export const SESSION_SMOOTHING = 0.5;

/**
 * Pseudo-relevance feedback (RM3-style) for hybrid's BM25 list: the top `documents` BM25 chunks vote for
 * their words (term frequency × the chunk's share of the top score × IDF), the best `terms` words not in
 * the query form a second query, and its min-max BM25 joins the original's at `weight`. A question names
 * one side of what it asks about ("Melanie's pets"), the best matches name the other ("Oliver", "Luna"),
 * which then finds the turns that share no word with the question. Tuned on LoCoMo conversations 0–4,
 * conversations 5–9 held out (docs/memory.md): 3 / 10 / 0.2; 5 or 10 documents and weight 0.4 were worse.
 */
export const FEEDBACK = { documents: 3, terms: 10, weight: 0.2 } as const;

export interface Ranked {
  /** Index into `chunks`. */
  chunk: number;
  score: number;
  /** The chunk's turns the hit holds (indices into its `turns`); all of them when absent. */
  turns?: number[];
}

/** A chunk as recall shows it. */
export type RecallChunk = StoreSnapshot["chunks"][number];

/** Chunks by passage index: all in memory, or read from the store on demand (a persisted snapshot). */
export interface ChunkSource {
  chunk(index: number): RecallChunk;
  all(): RecallChunk[];
}

export class MemoryIndex {
  readonly generation: number;
  readonly dim: number;
  /** Passages are graph nodes 0..chunkCount-1 (in chunk order); phrases from passageCapacity on. */
  readonly chunkCount: number;
  readonly passageCapacity: number;
  /** Passages and facts of the base arrays; those of the additions follow them. */
  private readonly baseChunks: number;
  private readonly baseFacts: number;
  private readonly vectors: Float32Array[];
  private readonly bm25: Bm25Index;
  private readonly factBm25: Bm25Index;
  private readonly factVectors: Float32Array[];
  /** Graph node of each fact's subject and object (the base's facts, then the additions'). */
  private readonly factSubject: Int32Array[];
  private readonly factObject: Int32Array[];
  readonly graph: CsrGraph;
  /** Number of passages holding each phrase node (its context-edge degree). */
  private readonly phraseChunks: Int32Array;
  readonly entityCount: number;
  readonly factCount: number;
  readonly edgeCount: number;
  /** Share of passages whose graph an LLM built (OpenIE) rather than the local extractor. */
  readonly llmGraphShare: number;
  /** Previous and next chunk of the same session (-1 at the ends). */
  private readonly previous: Int32Array;
  private readonly next: Int32Array;
  /** Lower-cased person name → the role it names, learned from how the turns address each other. */
  readonly speakerNames: Map<string, Role>;

  /** `additions`: rows added since `arrays` were written (a persisted snapshot's recall.add.bin). */
  constructor(
    readonly arrays: SnapshotArrays,
    private readonly source: ChunkSource,
    readonly additions?: SnapshotAdditions,
  ) {
    const add = additions;
    this.generation = add?.generation ?? arrays.generation;
    this.dim = arrays.dim;
    this.baseChunks = arrays.chunkIds.length;
    this.baseFacts = arrays.factIds.length;
    this.chunkCount = this.baseChunks + (add?.chunkIds.length ?? 0);
    this.passageCapacity = arrays.passageCapacity;
    this.vectors = add ? [arrays.vectors, add.vectors] : [arrays.vectors];
    this.factVectors = add ? [arrays.factVectors, add.factVectors] : [arrays.factVectors];
    this.bm25 = new Bm25Index(add ? [arrays.chunkPostings, add.chunkPostings] : arrays.chunkPostings);
    this.factBm25 = new Bm25Index(add ? [arrays.factPostings, add.factPostings] : arrays.factPostings);
    this.llmGraphShare = this.chunkCount ? (add?.llmChunks ?? arrays.llmChunks) / this.chunkCount : 0;
    this.speakerNames = speakerNames(add?.vocatives ?? arrays.vocatives);
    this.entityCount = arrays.entityIds.length + (add?.entityIds.length ?? 0);
    this.factCount = this.baseFacts + (add?.factIds.length ?? 0);
    this.edgeCount = add?.edgeCount ?? arrays.edgeCount;
    this.graph = add
      ? { ...arrays.graph, nodes: add.strength.length, strength: add.strength, added: add.rows }
      : arrays.graph;
    this.phraseChunks = add?.phraseChunks ?? arrays.phraseChunks;
    this.factSubject = add ? [arrays.factSubject, add.factSubject] : [arrays.factSubject];
    this.factObject = add ? [arrays.factObject, add.factObject] : [arrays.factObject];
    this.previous = add?.previous ?? arrays.previous;
    this.next = add?.next ?? arrays.next;
  }

  /** Chunk `index` (a passage index, as rankings name chunks). */
  chunk(index: number): RecallChunk {
    return this.source.chunk(index);
  }

  private everyChunk?: RecallChunk[];

  /**
   * Every chunk, read whole once and kept (browsing a project's memory; benchmarks and tests map
   * rankings back); a query reads only its own chunks through `chunk`.
   */
  get chunks(): RecallChunk[] {
    this.everyChunk ??= this.source.all();
    return this.everyChunk;
  }

  /**
   * The index of a snapshot read through the MemoryStore interface. Vectors stored under another model
   * than `model` (the user switched models) are re-embedded in memory so every score compares like with like.
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
    const arrays = extendArrays(undefined, deltaOfSnapshot(snapshot, vectors, factVectors, model.dim));
    return new MemoryIndex(arrays, { chunk: (i) => snapshot.chunks[i], all: () => snapshot.chunks });
  }

  /** Cosine of the query with every chunk (rows are L2-normalised, so a dot product). */
  denseScores(query: Float32Array): Float64Array {
    this.chunkDense ??= new PartedRows(this.vectors, this.dim);
    return this.chunkDense.dots(query);
  }

  private chunkDense?: PartedRows;
  private factDense?: PartedRows;

  bm25Scores(query: string): Float64Array {
    return this.bm25.scores(query);
  }

  /** BM25 with pseudo-relevance feedback (see FEEDBACK): min-max BM25 + weight × min-max expansion BM25. */
  feedbackBm25Scores(query: string, bm25 = this.bm25Scores(query)): Float64Array {
    const { documents, terms, weight } = FEEDBACK;
    const top = topIndices(bm25, documents).filter((i) => bm25[i] > 0);
    const base = minMax(bm25);
    if (!top.length) return base;
    const asked = new Set(lexicalTokens(query));
    const votes = new Map<string, number>();
    for (const doc of top) {
      const tokens = lexicalTokens(this.chunk(doc).text);
      const share = bm25[doc] / bm25[top[0]] / tokens.length;
      for (const token of tokens) if (!asked.has(token)) votes.set(token, (votes.get(token) ?? 0) + share);
    }
    const ranked = [...votes]
      .map(([term, vote]) => [term, vote * this.bm25.idf(term)] as const)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, terms);
    const total = ranked.reduce((sum, [, w]) => sum + w, 0);
    if (!(total > 0)) return base;
    addNormalised(base, this.bm25.weightedScores(new Map(ranked.map(([t, w]) => [t, w / total]))), weight);
    return base;
  }

  /** Each chunk's score plus SESSION_SMOOTHING × its session neighbours' scores. */
  smoothAlongSessions(scores: ArrayLike<number>, share = SESSION_SMOOTHING): Float64Array {
    guardOf(this.previous)?.all();
    guardOf(this.next)?.all();
    const out = new Float64Array(scores.length);
    for (let i = 0; i < scores.length; i++) {
      const p = this.previous[i];
      const n = this.next[i];
      out[i] = scores[i] + (p >= 0 ? share * scores[p] : 0) + (n >= 0 ? share * scores[n] : 0);
    }
    return out;
  }

  /**
   * HippoRAG 2's graph search: link the query to its top facts; seed each fact's phrases with the fact's
   * score divided by the number of passages holding the phrase (rare phrases are specific); give every
   * passage a reset weight of passageNodeWeight × its min-max normalised query score; run PPR and score
   * passages by their PageRank. Falls back to the passage scores when the graph has no facts.
   */
  graphScores(
    query: string,
    vector: Float32Array,
    dense = this.denseScores(vector),
    bm25 = this.bm25Scores(query),
  ): Float64Array {
    const settings = GRAPH_SETTINGS;
    if (this.factCount === 0) return mix(dense, bm25, settings.passageDenseMix);
    const scores = new Float64Array(this.chunkCount);
    this.pushScratch ??= new PushScratch(this.graph.nodes);
    this.lastPprWork = localPageRank(
      this.graph,
      this.graphSeeds(query, vector, dense, bm25),
      settings.damping,
      settings.pushTolerance,
      scores,
      this.pushScratch,
    );
    return scores;
  }

  private pushScratch?: PushScratch;
  /** What the last graphScores' PageRank touched (benchmark/recall-cost.ts reports it). */
  lastPprWork?: PushWork;

  /**
   * graphScores' PPR reset: the linked facts' phrases, and the passageSeeds passages of the best query
   * scores, pushed; every other passage keeps its own reset in place (its own score, not spread to its
   * neighbours), so a query's graph work follows its seeds while every passage still ranks. Passages are
   * weighted passageNodeWeight × (min-max score − the mean score of the passages not pushed): that mean
   * is the part of the reset every passage shares, which diffuses over the graph to nearly the same share
   * of every score, so leaving it out keeps the passages' differences.
   */
  graphSeeds(query: string, vector: Float32Array, dense: Float64Array, bm25: Float64Array): SparseReset {
    const settings = GRAPH_SETTINGS;
    const P = this.chunkCount;
    const passagePrior = mix(dense, bm25, settings.passageDenseMix);
    const seeded = largestSet(passagePrior, settings.passageSeeds);
    const nodes: number[] = [];
    const weights: number[] = [];
    let inPlace: Float64Array | undefined;
    let shared = 0;
    if (seeded.length < P) {
      let total = 0;
      for (let i = 0; i < P; i++) total += passagePrior[i];
      for (const p of seeded) total -= passagePrior[p];
      shared = total / (P - seeded.length);
      inPlace = new Float64Array(P);
      for (let i = 0; i < P; i++) inPlace[i] = (passagePrior[i] - shared) * settings.passageNodeWeight;
    }
    for (const p of seeded) {
      nodes.push(p);
      weights.push((passagePrior[p] - shared) * settings.passageNodeWeight);
      if (inPlace) inPlace[p] = 0;
    }
    for (const [node, { sum, count }] of this.linkedPhrases(query, vector)) {
      nodes.push(node);
      weights.push(sum / count);
    }
    return { nodes, weights, inPlace };
  }

  /**
   * The query's top facts' phrases, each seeded with the fact's score divided by the number of passages
   * holding the phrase, summed over the facts naming it (graphSeeds takes their mean, as HippoRAG 2 does).
   * Up to denseFactScanLimit facts every fact is a candidate; above it only the facts sharing a term
   * with the query (their BM25 postings), min-max normalised among themselves, so the work follows the
   * query's postings and not the store's millions of fact vectors.
   */
  private linkedPhrases(query: string, vector: Float32Array): Map<number, { sum: number; count: number }> {
    const settings = GRAPH_SETTINGS;
    const C = this.passageCapacity;
    let factScores: Float64Array;
    let candidates: Int32Array | undefined;
    if (this.factCount <= settings.denseFactScanLimit) {
      this.factDense ??= new PartedRows(this.factVectors, this.dim);
      const dense = this.factDense.dots(vector);
      factScores = mix(dense, this.factBm25.scores(query), settings.factDenseMix);
    } else {
      const matched = this.factBm25.matches(query, FACT_TERM_POSTINGS);
      const kept = Int32Array.from(largestSet(matched.scores, FACT_CANDIDATES));
      candidates = kept.map((i) => matched.docs[i]);
      const dense = this.factDots(vector, candidates);
      factScores = mix(
        dense,
        kept.length === matched.docs.length
          ? matched.scores
          : Float64Array.from(kept, (i) => matched.scores[i]),
        settings.factDenseMix,
      );
    }
    const phrases = new Map<number, { sum: number; count: number }>();
    const holderPages = guardOf(this.phraseChunks);
    for (const c of topIndices(factScores, settings.linkTopFacts)) {
      if (!(factScores[c] > 0)) continue;
      const f = candidates ? candidates[c] : c;
      const part = f < this.baseFacts ? 0 : 1;
      const at = part ? f - this.baseFacts : f;
      const [subjects, objects] = [this.factSubject[part], this.factObject[part]];
      guardOf(subjects)?.at(at);
      guardOf(objects)?.at(at);
      for (const node of [subjects[at], objects[at]]) {
        if (node < 0) continue;
        holderPages?.at(node - C);
        const holders = this.phraseChunks[node - C];
        const seed = phrases.get(node) ?? { sum: 0, count: 0 };
        seed.sum += holders > 0 ? factScores[c] / holders : factScores[c];
        seed.count++;
        phrases.set(node, seed);
      }
    }
    return phrases;
  }

  /** The query's dot product with the vectors of these facts (each in its part: base or additions). */
  private factDots(vector: Float32Array, facts: Int32Array): Float64Array {
    const out = new Float64Array(facts.length);
    this.factVectors.forEach((rows, part) => {
      const first = part ? this.baseFacts : 0;
      const end = part ? this.factCount : this.baseFacts;
      const places: number[] = [];
      for (let i = 0; i < facts.length; i++) if (facts[i] >= first && facts[i] < end) places.push(i);
      if (!places.length) return;
      const local = Int32Array.from(places, (i) => facts[i] - first);
      const pages = guardOf(rows);
      if (pages) for (const f of local) pages.range(f * this.dim, (f + 1) * this.dim);
      const dots = dotRows(rows, vector, local, this.dim);
      places.forEach((i, k) => {
        out[i] = dots[k];
      });
    });
    return out;
  }

  /**
   * The reset over every graph node that graph search used before its reset was made sparse: every
   * passage its prior (benchmark/recall-cost.ts solves it exactly as the baseline of graphScores).
   */
  fullGraphReset(query: string, vector: Float32Array, dense: Float64Array, bm25: Float64Array): Float64Array {
    const settings = GRAPH_SETTINGS;
    const passagePrior = mix(dense, bm25, settings.passageDenseMix);
    const reset = new Float64Array(this.graph.nodes);
    for (const [node, { sum, count }] of this.linkedPhrases(query, vector)) reset[node] = sum / count;
    for (let i = 0; i < this.chunkCount; i++) reset[i] = passagePrior[i] * settings.passageNodeWeight;
    return reset;
  }
}

/** min-max(weight × min-max(a) + (1 − weight) × min-max(b)). */
export function mix(a: Float64Array, b: Float64Array, weight: number): Float64Array {
  const out = minMax(a);
  for (let i = 0; i < out.length; i++) out[i] *= weight;
  addNormalised(out, b, 1 - weight);
  return minMax(out, out);
}

/**
 * Each row's dot product with `query`. PERF: four running sums per row (~25 % faster than one, warm);
 * the query widened to doubles once (the same products: JavaScript multiplies in doubles either way),
 * not at every multiplication.
 */
export function dotAll(rows: Float32Array, vector: Float32Array, count: number, dim: number): Float64Array {
  const out = new Float64Array(count);
  const query = Float64Array.from(vector.subarray(0, dim));
  const blocked = dim & ~3;
  for (let r = 0; r < count; r++) {
    const base = r * dim;
    let a = 0;
    let b = 0;
    let c = 0;
    let e = 0;
    let d = 0;
    for (; d < blocked; d += 4) {
      a += rows[base + d] * query[d];
      b += rows[base + d + 1] * query[d + 1];
      c += rows[base + d + 2] * query[d + 2];
      e += rows[base + d + 3] * query[d + 3];
    }
    for (; d < dim; d++) a += rows[base + d] * query[d];
    out[r] = a + b + c + e;
  }
  return out;
}

/** The dot product with `query` of the rows at `indices`: dotAll's sums over a subset, so equal values. */
export function dotRows(
  rows: Float32Array,
  vector: Float32Array,
  indices: Int32Array,
  dim: number,
): Float64Array {
  const out = new Float64Array(indices.length);
  const query = Float64Array.from(vector.subarray(0, dim));
  const blocked = dim & ~3;
  for (let r = 0; r < indices.length; r++) {
    const base = indices[r] * dim;
    let a = 0;
    let b = 0;
    let c = 0;
    let e = 0;
    let d = 0;
    for (; d < blocked; d += 4) {
      a += rows[base + d] * query[d];
      b += rows[base + d + 1] * query[d + 1];
      c += rows[base + d + 2] * query[d + 2];
      e += rows[base + d + 3] * query[d + 3];
    }
    for (; d < dim; d++) a += rows[base + d] * query[d];
    out[r] = a + b + c + e;
  }
  return out;
}

/**
 * dotAll over one index's rows, from its second scan in WebAssembly SIMD (simd/float-dots.ts, the
 * same bits, 2.2–2.3× as fast at 100k rows of 64): the kernel needs the rows copied into its memory
 * (16–20 ms at 100k rows), which a process answering one query (the CLI's recall, a hook) would pay
 * for nothing, and a process answering many (the MCP and HTTP servers) pays once.
 */
class DenseRows {
  private scans = 0;
  private kernel?: FloatRows;

  constructor(
    private readonly rows: Float32Array,
    private readonly count: number,
    private readonly dim: number,
  ) {}

  dots(query: Float32Array): Float64Array {
    if (++this.scans === 2 && this.count >= KERNEL_FROM_ROWS)
      this.kernel = floatRows(this.rows, this.count, this.dim);
    return this.kernel ? this.kernel.dots(query) : dotAll(this.rows, query, this.count, this.dim);
  }
}

/** DenseRows over rows in parts (a base and its additions): each part's dots, one after the other. */
class PartedRows {
  private readonly parts: { rows: Float32Array; dense: DenseRows; count: number }[];
  private readonly count: number;

  constructor(parts: Float32Array[], dim: number) {
    this.parts = parts.map((rows) => {
      const count = dim ? rows.length / dim : 0;
      return { rows, dense: new DenseRows(rows, count, dim), count };
    });
    this.count = this.parts.reduce((sum, p) => sum + p.count, 0);
  }

  dots(query: Float32Array): Float64Array {
    if (this.parts.length === 1) {
      guardOf(this.parts[0].rows)?.all();
      return this.parts[0].dense.dots(query);
    }
    const out = new Float64Array(this.count);
    let at = 0;
    for (const part of this.parts) {
      guardOf(part.rows)?.all();
      out.set(part.dense.dots(query), at);
      at += part.count;
    }
    return out;
  }
}

/** Below this many rows a scan costs tens of microseconds in JavaScript: no copy is worth keeping. */
const KERNEL_FROM_ROWS = 4096;

/**
 * Min-max normalisation to [0, 1], into `out` (a new array unless given; may be `values`). When all
 * values are equal (one chunk, or a tie everywhere) there is no spread to normalise: positive values map
 * to 1 (each is as good as the best), others to 0. PERF: indexed loops, not for…of: a fresh process runs
 * this cold on every store-sized array of its first query, where the iterator cost ~10 ms at 16× LoCoMo.
 */
export function minMax(
  values: Float64Array,
  out: Float64Array = new Float64Array(values.length),
): Float64Array {
  const { lo, span } = rangeOf(values);
  if (!(span > 0)) {
    for (let i = 0; i < values.length; i++) out[i] = values[i] > 0 ? 1 : 0;
    return out;
  }
  for (let i = 0; i < values.length; i++) out[i] = (values[i] - lo) / span;
  return out;
}

/** What minMax normalises `values` by: their lowest value and the span up to the highest (≤ 0: none). */
function rangeOf(values: Float64Array): { lo: number; span: number } {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return { lo, span: hi - lo };
}

/**
 * out[i] += weight × min-max(values)[i], the same arithmetic as adding minMax's array, without it. PERF:
 * a query normalises about eight store-sized arrays (50k passages at 100,000 synthetic records); their
 * copies were an allocation and two passes each.
 */
export function addNormalised(out: Float64Array, values: Float64Array, weight: number): void {
  const { lo, span } = rangeOf(values);
  if (!(span > 0)) for (let i = 0; i < values.length; i++) out[i] += weight * (values[i] > 0 ? 1 : 0);
  else for (let i = 0; i < values.length; i++) out[i] += weight * ((values[i] - lo) / span);
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

/**
 * largestSet's working copy, kept between calls (a query selects from two store-sized arrays: a fresh
 * copy each was 400 KB allocated and collected twice a query at 50k passages).
 */
let selection = new Float64Array(0);

/**
 * Indices of the k largest positive values, in index order (ties at the k-th value by lower index).
 * PERF: one selection pass over a copy (Hoare's quickselect), linear in the array, where topIndices'
 * insertion costs up to k per value.
 */
export function largestSet(values: Float64Array, k: number): number[] {
  const n = values.length;
  const out: number[] = [];
  if (k <= 0) return out;
  let threshold = 0;
  if (k < n) {
    if (selection.length < n) selection = new Float64Array(n);
    const copy = selection;
    copy.set(values);
    let lo = 0;
    let hi = n - 1;
    const target = k - 1; // the k-th largest sits at index k − 1 of a descending order
    while (lo < hi) {
      const pivot = copy[(lo + hi) >> 1];
      let i = lo;
      let j = hi;
      while (i <= j) {
        while (copy[i] > pivot) i++;
        while (copy[j] < pivot) j--;
        if (i <= j) {
          const t = copy[i];
          copy[i++] = copy[j];
          copy[j--] = t;
        }
      }
      if (target <= j) hi = j;
      else if (target >= i) lo = i;
      else break;
    }
    threshold = copy[target];
  }
  let above = 0;
  for (let i = 0; i < n; i++) if (values[i] > threshold && values[i] > 0) above++;
  let ties = k - above;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (!(v > 0)) continue;
    if (v > threshold) out.push(i);
    else if (v === threshold && ties > 0) {
      out.push(i);
      ties--;
    }
  }
  return out;
}
