/**
 * Query expansion by pseudo-relevance feedback: the repository's own words for a sentence's topic.
 * The best lexical chunks of a sentence are read for the rare terms several of them share and the
 * query lacks (`retry` → `backoff`, `attempt`); those terms score the index again, and their BM25
 * scores join the query's at a fraction of its weight. docs/code-search.md has the cross-validated
 * figures.
 */
import { type Bm25Index, inverseFrequency, scoreBm25 } from "../bm25.ts";
import type { CodeIndex } from "../store.ts";
import { pathTokens, QUERY_STOPWORDS } from "../tokens.ts";
import { tuned } from "./tuning.ts";

/** The top lexical chunks read for feedback: few enough that they are mostly about the topic. */
const FEEDBACK_CHUNKS = 10;
/** Terms added to the query, the most telling first. */
const FEEDBACK_TERMS = 5;
/** A term must appear in this many of the feedback chunks: one chunk's own names are not the topic's. */
const MIN_FEEDBACK_SUPPORT = 3;
/** Share of the query's own BM25 weight the added terms carry (0: no expansion). */
const FEEDBACK_WEIGHT = 0.3;

/** Each chunk's distinct term ids (CSR: chunk c's are terms[offsets[c] .. offsets[c+1])). */
interface ChunkTerms {
  offsets: Int32Array;
  terms: Int32Array;
  /** Per term: how many feedback chunks hold it, during one query (zero between queries). */
  support: Uint8Array;
  /** Per file, on first use: the term ids of its path's words, which its postings hold but its text may not. */
  pathTerms: (Int32Array | undefined)[];
}

/**
 * The postings turned around, once per loaded index: reading the feedback chunks' terms from them
 * costs a few microseconds, where tokenising the chunks' texts again cost most of a millisecond.
 */
const chunkTermsCache = new WeakMap<Bm25Index, ChunkTerms>();
function chunkTerms(bm25: Bm25Index): ChunkTerms {
  const known = chunkTermsCache.get(bm25);
  if (known) return known;
  const chunks = bm25.lengths.length;
  const offsets = new Int32Array(chunks + 1);
  for (let p = 0; p < bm25.docs.length; p++) offsets[bm25.docs[p] + 1]++;
  for (let c = 0; c < chunks; c++) offsets[c + 1] += offsets[c];
  const next = offsets.slice(0, chunks);
  const terms = new Int32Array(bm25.docs.length);
  for (let t = 0; t < bm25.terms.length; t++)
    for (let p = bm25.offsets[t]; p < bm25.offsets[t + 1]; p++) terms[next[bm25.docs[p]]++] = t;
  const built = {
    offsets,
    terms,
    support: new Uint8Array(bm25.terms.length),
    pathTerms: [],
  };
  chunkTermsCache.set(bm25, built);
  return built;
}

function pathTermsOf(index: CodeIndex, forward: ChunkTerms, file: number): Int32Array {
  let terms = forward.pathTerms[file];
  if (!terms) {
    const ids = pathTokens(index.files[file].path).map((token) => index.bm25.termIds.get(token) ?? -1);
    forward.pathTerms[file] = terms = Int32Array.from(ids);
  }
  return terms;
}

/** The terms the top `ranked` chunks share that `queryTerms` lack, most telling first. */
export function feedbackTerms(index: CodeIndex, queryTerms: string[], ranked: number[]): string[] {
  const { bm25 } = index;
  const forward = chunkTerms(bm25);
  const asked = new Set(queryTerms);
  const { support } = forward;
  const touched: number[] = [];
  // The path's words are in every chunk of a file's postings, not in its text: they do not count.
  for (const chunk of ranked.slice(0, tuned("feedbackChunks", FEEDBACK_CHUNKS))) {
    const own = pathTermsOf(index, forward, index.chunkFile[chunk]);
    for (let p = forward.offsets[chunk]; p < forward.offsets[chunk + 1]; p++) {
      const term = forward.terms[p];
      if (own.includes(term)) continue;
      if (support[term]++ === 0) touched.push(term);
    }
  }
  const minSupport = tuned("feedbackSupport", MIN_FEEDBACK_SUPPORT);
  const weighted: { term: string; weight: number }[] = [];
  for (const id of touched) {
    const count = support[id];
    support[id] = 0;
    if (count < minSupport) continue;
    const term = bm25.terms[id];
    if (term.length < 3 || asked.has(term) || QUERY_STOPWORDS.has(term)) continue;
    weighted.push({ term, weight: count * inverseFrequency(bm25, id) });
  }
  weighted.sort((a, b) => b.weight - a.weight || (a.term < b.term ? -1 : 1));
  return weighted.slice(0, tuned("feedbackTerms", FEEDBACK_TERMS)).map((w) => w.term);
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
