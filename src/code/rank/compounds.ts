/**
 * Compound identifiers: two words side by side in a sentence ("route group", "retry policy",
 * "connection draining") are often one name in the code (`routeGroup`, `RetryPolicy`,
 * `drain_connection`). The index's own vocabulary says which pairs are names there: a chunk that
 * holds the name holds the two words together, as the phrase does, which BM25 over single words
 * cannot see. docs/code-search.md has the cross-validated figures.
 */
import { inverseFrequency } from "../bm25.ts";
import type { CodeIndex } from "../store.ts";
import { QUERY_STOPWORDS, stems } from "../tokens.ts";
import { tuned } from "./tuning.ts";

/**
 * A candidate chunk holding compound names of the query's word pairs gains this times the best
 * score, times those names' IDF over the IDF of the query's own terms (0: off).
 */
const COMPOUND_BOOST = 0;

/** A word and its light stems (`routers` → `router`). */
const formsOf = (word: string) => [word, ...stems(word)];

/**
 * The index's term ids that join two adjacent meaningful words of `query`, in either order, with or
 * without `_`, from each word's forms: "route grouping" finds `routegroup`, `grouping_route`, ….
 */
export function compoundTerms(index: CodeIndex, query: string): number[] {
  const words = (query.match(/[A-Za-z][A-Za-z0-9]*/g) ?? [])
    .map((word) => word.toLowerCase())
    .filter((word) => word.length > 1 && !QUERY_STOPWORDS.has(word));
  const found = new Set<number>();
  for (let i = 0; i + 1 < words.length; i++) {
    if (words[i] === words[i + 1]) continue;
    for (const first of formsOf(words[i]))
      for (const second of formsOf(words[i + 1]))
        for (const name of [first + second, `${first}_${second}`, second + first, `${second}_${first}`]) {
          const id = index.bm25.termIds.get(name);
          if (id !== undefined) found.add(id);
        }
  }
  return [...found];
}

/** Whether chunk `chunk`'s postings hold term `term` (a term's chunks are ascending). */
function holdsTerm(index: CodeIndex, term: number, chunk: number): boolean {
  const { offsets, docs } = index.bm25;
  let low = offsets[term];
  let high = offsets[term + 1];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (docs[middle] < chunk) low = middle + 1;
    else high = middle;
  }
  return low < offsets[term + 1] && docs[low] === chunk;
}

/**
 * For a sentence: each candidate chunk holding compound names of its word pairs gains
 * COMPOUND_BOOST × the best score × those names' IDF over the IDF of `queryTerms`.
 */
export function boostCompounds(
  index: CodeIndex,
  scores: Map<number, number>,
  query: string,
  queryTerms: string[],
): void {
  const weight = tuned("compoundBoost", COMPOUND_BOOST);
  if (weight <= 0) return;
  const compounds = compoundTerms(index, query);
  if (!compounds.length) return;
  let total = 0;
  for (const token of queryTerms) {
    const id = index.bm25.termIds.get(token);
    if (id !== undefined) total += inverseFrequency(index.bm25, id);
  }
  if (total === 0) return;
  const idf = compounds.map((id) => inverseFrequency(index.bm25, id));
  let best = 0;
  for (const score of scores.values()) if (score > best) best = score;
  const unit = (weight * best) / total;
  const gains: [number, number][] = [];
  for (const chunk of scores.keys()) {
    let gain = 0;
    for (let k = 0; k < compounds.length; k++) if (holdsTerm(index, compounds[k], chunk)) gain += idf[k];
    if (gain) gains.push([chunk, gain]);
  }
  for (const [chunk, gain] of gains) scores.set(chunk, (scores.get(chunk) ?? 0) + unit * gain);
}
