/**
 * Hybrid fusion of the graph, BM25 and dense rankings. Weighted reciprocal-rank fusion: each list adds
 * weight / (RRF_K + rank) for its top FUSION_DEPTH documents. Equal weights would let dense and BM25
 * outvote the graph on the documents PPR lifted; the weights below were tuned on the benchmarks
 * (docs/memory.md gives the figures and the reasoning).
 */
import { topIndices } from "./memory-index.ts";

/** Order: graph, BM25, dense. */
export const HYBRID_WEIGHTS = [1, 1, 1] as const;
/** The usual RRF constant: damps the gap between the first few ranks. */
export const RRF_K = 60;
/** Documents beyond this rank in a list add nothing (their ranks are noise). */
export const FUSION_DEPTH = 100;

export function fuse(lists: ArrayLike<number>[], weights: readonly number[]): Float64Array {
  const n = lists[0]?.length ?? 0;
  const out = new Float64Array(n);
  lists.forEach((scores, l) => {
    const weight = weights[l] ?? 0;
    if (weight === 0) return;
    topIndices(scores, Math.min(FUSION_DEPTH, n)).forEach((doc, rank) => {
      if (scores[doc] > 0) out[doc] += weight / (RRF_K + rank + 1);
    });
  });
  return out;
}
