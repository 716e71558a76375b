/**
 * Query expansion by pseudo-relevance feedback: the repository's own words for a sentence's topic.
 * The best lexical chunks of a sentence are read for the rare terms several of them share and the
 * query lacks (`routing` → `mux`, `endpoint`); those terms score the index again, and their BM25
 * scores join the query's at a fraction of its weight. docs/code-search.md has the cross-validated
 * figures.
 */
import { type Bm25Index, scoreBm25 } from "../bm25.ts";
import type { CodeIndex } from "../store.ts";
import { QUERY_STOPWORDS, tokenize } from "../tokens.ts";
import { tuned } from "./tuning.ts";

/** The top lexical chunks read for feedback: few enough that they are mostly about the topic. */
const FEEDBACK_CHUNKS = 5;
/** Terms added to the query, the most telling first. */
const FEEDBACK_TERMS = 5;
/** A term must appear in this many of the feedback chunks: one chunk's own names are not the topic's. */
const MIN_FEEDBACK_SUPPORT = 2;
/** Share of the query's own BM25 weight the added terms carry (0: no expansion). */
const FEEDBACK_WEIGHT = 0;

function inverseFrequency(bm25: Bm25Index, term: number): number {
  const n = bm25.lengths.length;
  const df = bm25.offsets[term + 1] - bm25.offsets[term];
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** The terms the top `ranked` chunks share that `queryTerms` lack, most telling first. */
export function feedbackTerms(index: CodeIndex, queryTerms: string[], ranked: number[]): string[] {
  const asked = new Set(queryTerms);
  const support = new Map<string, number>();
  for (const chunk of ranked.slice(0, FEEDBACK_CHUNKS)) {
    for (const term of new Set(tokenize(index.texts[chunk]))) {
      if (term.length < 3 || asked.has(term) || QUERY_STOPWORDS.has(term)) continue;
      support.set(term, (support.get(term) ?? 0) + 1);
    }
  }
  const weighted: { term: string; weight: number }[] = [];
  for (const [term, count] of support) {
    if (count < MIN_FEEDBACK_SUPPORT) continue;
    const id = index.bm25.termIds.get(term);
    if (id !== undefined) weighted.push({ term, weight: count * inverseFrequency(index.bm25, id) });
  }
  weighted.sort((a, b) => b.weight - a.weight || (a.term < b.term ? -1 : 1));
  return weighted.slice(0, FEEDBACK_TERMS).map((w) => w.term);
}

/**
 * Adds the feedback terms' BM25 scores × the feedback weight to `lexical` (in place) and returns the
 * chunks that now match; undefined, with `lexical` untouched, when the weight is 0 or no term qualifies.
 */
export function expandLexical(
  index: CodeIndex,
  queryTerms: string[],
  lexical: { scores: Float32Array; matched: Int32Array },
  ranked: number[],
): Int32Array | undefined {
  const weight = tuned("feedbackWeight", FEEDBACK_WEIGHT);
  if (weight <= 0) return undefined;
  const added = feedbackTerms(index, queryTerms, ranked);
  if (!added.length) return undefined;
  const extra = scoreBm25(index.bm25, added);
  const newlyMatched: number[] = [];
  for (const chunk of extra.matched) {
    if (lexical.scores[chunk] === 0) newlyMatched.push(chunk);
    lexical.scores[chunk] += weight * extra.scores[chunk];
  }
  const matched = new Int32Array(lexical.matched.length + newlyMatched.length);
  matched.set(lexical.matched);
  matched.set(newlyMatched, lexical.matched.length);
  return matched;
}
