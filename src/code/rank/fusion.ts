/**
 * Fusion: the lexical and dense candidate lists, cut to the same length and merged by reciprocal
 * rank, weighted by what kind of query it is. docs/code-search.md has the figures behind each value.
 */
import { tuned } from "./tuning.ts";

/** Reciprocal-rank-fusion damping: the usual 60 keeps the top few ranks from dominating the sum. */
const RRF_K = 60;
/** Candidates taken from each list before fusion, per requested result: recall for the reranker. */
export const CANDIDATES_PER_RESULT = 5;
/** Never fewer candidates than this per list, so a top-1 query still gets a real rerank. */
export const MIN_CANDIDATES = 50;
/** Weight of the dense list for a bare identifier query: exact tokens matter more than meaning. */
export const ALPHA_SYMBOL = 0.3;
/**
 * Weight of the dense list for a natural-language query. semble uses 0.5 with a 256-dimension code
 * model; our 64-dimension general model is weaker, and 0.4 measured best on the development set.
 */
export const ALPHA_NATURAL = 0.4;

/**
 * What a query is, for the weights that differ by kind: a bare identifier (isSymbolQuery), a
 * question (`how are routes matched`), or another sentence (keywords, a phrase, a message). Fusion
 * tells identifiers from the rest; file coherence (boosts.ts), questions. A split of the rest into
 * up to five keywords and longer phrases, each with its own dense weight, path boost and coherence,
 * was measured and not kept (docs/code-search.md, issue 20's third round).
 */
export type QueryKind = "identifier" | "question" | "sentence";
/** A question starts with its question word; a commit message that says "when" later is not one. */
const QUESTION = /^\s*(how|what|where|why|which|when|who)\b/i;

export function queryKind(text: string, symbolQuery: boolean): QueryKind {
  if (symbolQuery) return "identifier";
  return QUESTION.test(text) ? "question" : "sentence";
}

/** The dense list's weight for a kind of query: identifiers lean lexical, every sentence weighs the same. */
export function fusionWeight(kind: QueryKind): number {
  return kind === "identifier" ? tuned("alphaSymbol", ALPHA_SYMBOL) : tuned("alphaNatural", ALPHA_NATURAL);
}

/** Reciprocal-rank scores of a ranked list of ids. */
export function rrfScores(ranked: number[]): Map<number, number> {
  const scores = new Map<number, number>();
  for (let i = 0; i < ranked.length; i++) scores.set(ranked[i], 1 / (RRF_K + i + 1));
  return scores;
}

/** The fused score of every candidate of either list: `alpha` × dense RRF + (1 − `alpha`) × lexical RRF. */
export function fuse(lexicalRanked: number[], denseRanked: number[], alpha: number): Map<number, number> {
  const lexicalFused = rrfScores(lexicalRanked);
  const denseFused = rrfScores(denseRanked);
  const scores = new Map<number, number>();
  // Lexical candidates first, then the dense ones not among them (the order ties are met in later).
  for (const list of [lexicalRanked, denseRanked])
    for (const id of list)
      if (!scores.has(id))
        scores.set(id, alpha * (denseFused.get(id) ?? 0) + (1 - alpha) * (lexicalFused.get(id) ?? 0));
  return scores;
}
