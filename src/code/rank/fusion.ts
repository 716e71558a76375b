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

/**
 * A lexical winner by a clear margin: when the best BM25 score is at least LEXICAL_MARGIN_RATIO × the
 * second's, that chunk gains LEXICAL_MARGIN_BOOST × the best fused score before the rerank. Fusion
 * sees ranks alone (at k = 60 the first rank scores 1.6 % above the second), so a chunk that matches
 * the query's terms far better than any other counted no more than a narrow winner, and the dense
 * list or the reranker's boosts could put another above it. Chosen on the development set (every
 * fold with one repository left out took the ratio, all but one the boost) and holding on
 * repositories it never saw; at a lead under 1.2 BM25's first is no surer than its second, and
 * lifting it loses on both (docs/code-search.md).
 */
export const LEXICAL_MARGIN_RATIO = 1.2;
export const LEXICAL_MARGIN_BOOST = 0.5;

/** Lifts the lexical list's first in `scores` (fused) where its BM25 score leads the second's by the margin. */
export function liftClearLexicalWinner(
  scores: Map<number, number>,
  lexicalRanked: number[],
  lexicalScores: number[],
): void {
  const boost = tuned("lexicalMarginBoost", LEXICAL_MARGIN_BOOST);
  if (boost <= 0 || lexicalRanked.length < 2) return;
  if (lexicalScores[0] < tuned("lexicalMarginRatio", LEXICAL_MARGIN_RATIO) * lexicalScores[1]) return;
  const winner = lexicalRanked[0];
  scores.set(winner, (scores.get(winner) ?? 0) + boost * maxOf(scores));
}

/** The best of a query's fused scores (0 when none is positive): what fusion's lift and the boosts scale by. */
export function maxOf(scores: Map<number, number>): number {
  let max = 0;
  for (const score of scores.values()) if (score > max) max = score;
  return max;
}
