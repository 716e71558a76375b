/**
 * Hybrid fusion of the graph, BM25 and dense scores, with one recipe for each kind of graph — tuned on
 * LoCoMo (conversations, local graph) and MuSiQue (documents, LLM graph); the grid is in docs/memory.md.
 *
 * - LLM-built graph (most passages have OpenIE facts): weighted reciprocal-rank fusion, graph 12× BM25
 *   and 12× dense, small K: PPR's order decides, BM25 and dense only reorder near-ties and fill in below.
 *   Precise facts make PPR's order worth keeping at the top. Equal-weight RRF (K = 60) undoes that gain
 *   (MuSiQue recall@5: graph 65.3 → 49.3), graph 3× (the earlier recipe) still lost to graph (59.9);
 *   min-max score fusion squashes PPR's peaked scores so BM25 decides (53.8).
 * - Local graph (co-occurrence facts): min-max score fusion led by BM25, then smoothed along sessions.
 *   Word-based facts add less than precise ones; BM25 with its session neighbours is the strong signal
 *   in conversations (LoCoMo recall@10 69.6 vs 67.7 with the LLM-graph recipe).
 */
import { addNormalised, topIndices } from "./snapshot.ts";

/** Above this share of LLM-built passages, the graph is trusted as an LLM graph. */
export const LLM_GRAPH_SHARE = 0.5;

export const LLM_GRAPH_FUSION = { graph: 6, bm25: 0.5, dense: 0.5, rrfK: 10 } as const;
export const LOCAL_GRAPH_FUSION = { graph: 0.5, bm25: 1, dense: 0.2 } as const;
/** Documents beyond this rank in a list add nothing to RRF (their ranks are noise). */
export const FUSION_DEPTH = 100;

/** Weighted RRF: each list adds weight / (K + rank) for its top FUSION_DEPTH positive documents. */
export function reciprocalRankFusion(
  lists: ArrayLike<number>[],
  weights: readonly number[],
  k: number,
): Float64Array {
  const n = lists[0]?.length ?? 0;
  const out = new Float64Array(n);
  lists.forEach((scores, l) => {
    const weight = weights[l] ?? 0;
    if (weight === 0) return;
    topIndices(scores, Math.min(FUSION_DEPTH, n)).forEach((doc, rank) => {
      if (scores[doc] > 0) out[doc] += weight / (k + rank + 1);
    });
  });
  return out;
}

/** Σ weight × min-max(scores). */
export function scoreFusion(lists: Float64Array[], weights: readonly number[]): Float64Array {
  const out = new Float64Array(lists[0]?.length ?? 0);
  for (let l = 0; l < lists.length; l++) addNormalised(out, lists[l], weights[l] ?? 0);
  return out;
}
