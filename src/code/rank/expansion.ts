/**
 * Query expansion by pseudo-relevance feedback: the repository's own words for a sentence's topic.
 * The best lexical chunks of a sentence are read for the rare terms several of them share and the
 * query lacks (`retry` → `backoff`, `attempt`); those terms score the index again, and their BM25
 * scores join the query's at a fraction of its weight (bm25.ts topBm25). docs/code-search.md has the cross-validated
 * figures.
 */
import { inverseFrequency } from "../bm25.ts";
import type { CodeIndex } from "../store.ts";
import { pathTokens, QUERY_STOPWORDS, tokenize } from "../tokens.ts";
import { tuned } from "./tuning.ts";

/** The top lexical chunks read for feedback: few enough that they are mostly about the topic. */
const FEEDBACK_CHUNKS = 10;
/** Terms added to the query, the most telling first. */
const FEEDBACK_TERMS = 5;
/** A term must appear in this many of the feedback chunks: one chunk's own names are not the topic's. */
const MIN_FEEDBACK_SUPPORT = 3;
/** Share of the query's own BM25 weight the added terms carry (0: no expansion). */
const FEEDBACK_WEIGHT = 0.3;

/**
 * Up to this many postings, the first sentence of a loaded index turns all of them around (chunk →
 * terms): 15–19 ms for 0.4–1.0 M postings on the shared box, then microseconds per query. Past it,
 * each feedback chunk's text is tokenised on first use instead: turning 6.8 M postings around (a
 * 118k-chunk checkout) cost the first sentence 240–515 ms, ten unread chunks' texts cost 0.8–5 ms.
 */
const INVERT_POSTINGS_UP_TO = 1_000_000;
/**
 * Past it, the postings are turned around anyway once the chunks tokenised so far, times this, reach
 * their count: tokenising one chunk cost what turning ~4,000 postings around does (74 µs against 115 ms
 * for 6.2 M postings, at 100k generated chunks). A long-lived process that keeps meeting new feedback
 * chunks (the HTTP server under distinct queries, a batch search) then pays the turn once instead of
 * 0.7 ms of tokenising a query; a process that answers a few queries never does.
 */
const POSTINGS_PER_TOKENISED_CHUNK = 4_000;

/** Per loaded index: what feedback has read of its chunks so far. */
interface FeedbackCache {
  /**
   * Per chunk, on first use: the distinct term ids of its text, less its file's path words (the
   * postings give every chunk of a file its path's words, which its text may not hold).
   */
  chunkTerms: (Int32Array | undefined)[];
  /** Per file, on first use: the term ids of its path's words. */
  pathTerms: (Int32Array | undefined)[];
  /** Per term: how many feedback chunks hold it, during one query (zero between queries). */
  support: Uint8Array;
  /** The postings turned around (chunk c's terms are terms[offsets[c] .. offsets[c+1])), when built. */
  byChunk?: { offsets: Int32Array; terms: Int32Array };
  /** Chunks whose terms were read from their text so far. */
  tokenised: number;
}

const feedbackCaches = new WeakMap<CodeIndex, FeedbackCache>();
function feedbackCache(index: CodeIndex): FeedbackCache {
  let cache = feedbackCaches.get(index);
  if (!cache) {
    const terms = index.bm25.terms.length;
    cache = {
      chunkTerms: new Array(index.texts.length),
      pathTerms: new Array(index.files.length),
      support: new Uint8Array(terms),
      tokenised: 0,
    };
    feedbackCaches.set(index, cache);
  }
  return cache;
}

function pathTermsOf(index: CodeIndex, cache: FeedbackCache, file: number): Int32Array {
  let terms = cache.pathTerms[file];
  if (!terms) {
    const ids = pathTokens(index.files[file].path).map((token) => index.bm25.termIds.get(token) ?? -1);
    cache.pathTerms[file] = terms = Int32Array.from(ids);
  }
  return terms;
}

/**
 * The postings turned around (chunk → terms), once per loaded index: by the first query that needs
 * them, or by a long-lived process when it loads the index (search.ts prepareIndex), so that no
 * query pays it.
 */
export function turnPostingsAround(index: CodeIndex): { offsets: Int32Array; terms: Int32Array } {
  const cache = feedbackCache(index);
  const { bm25 } = index;
  if (!cache.byChunk) {
    const chunks = bm25.lengths.length;
    const offsets = new Int32Array(chunks + 1);
    for (let p = 0; p < bm25.docs.length; p++) offsets[bm25.docs[p] + 1]++;
    for (let c = 0; c < chunks; c++) offsets[c + 1] += offsets[c];
    const next = offsets.slice(0, chunks);
    const terms = new Int32Array(bm25.docs.length);
    for (let t = 0; t < bm25.terms.length; t++)
      for (let p = bm25.offsets[t]; p < bm25.offsets[t + 1]; p++) terms[next[bm25.docs[p]]++] = t;
    cache.byChunk = { offsets, terms };
  }
  return cache.byChunk;
}

/** Whether the postings of a loaded index are turned around yet. */
export function postingsTurned(index: CodeIndex): boolean {
  return feedbackCaches.get(index)?.byChunk !== undefined;
}

/** A chunk's term ids less its path words, from the postings turned around (built on first use). */
export function termsFromPostings(index: CodeIndex, chunk: number): Int32Array {
  const cache = feedbackCache(index);
  const { offsets, terms } = turnPostingsAround(index);
  const own = pathTermsOf(index, cache, index.chunkFile[chunk]);
  return terms.subarray(offsets[chunk], offsets[chunk + 1]).filter((term) => !own.includes(term));
}

/** A chunk's term ids less its path words, from its text (the same terms: the index tokenised it). */
export function termsFromText(index: CodeIndex, chunk: number): Int32Array {
  const cache = feedbackCache(index);
  const own = pathTermsOf(index, cache, index.chunkFile[chunk]);
  const { termIds } = index.bm25;
  const ids = new Set<number>();
  for (const token of tokenize(index.texts[chunk])) {
    const id = termIds.get(token);
    if (id !== undefined && !own.includes(id)) ids.add(id);
  }
  return Int32Array.from(ids);
}

/**
 * A chunk's distinct terms less its path words, read once: from the postings of a small index, else
 * from its text until tokenising has cost what turning the postings around would.
 */
export function chunkTerms(index: CodeIndex, chunk: number): Int32Array {
  const cache = feedbackCache(index);
  let terms = cache.chunkTerms[chunk];
  if (!terms) {
    const postings = index.bm25.docs.length;
    const invert =
      cache.byChunk ||
      postings <= INVERT_POSTINGS_UP_TO ||
      cache.tokenised * POSTINGS_PER_TOKENISED_CHUNK >= postings;
    if (!invert) cache.tokenised++;
    terms = invert ? termsFromPostings(index, chunk) : termsFromText(index, chunk);
    cache.chunkTerms[chunk] = terms;
  }
  return terms;
}

/** The terms the top `ranked` chunks share that `queryTerms` lack, most telling first. */
export function feedbackTerms(index: CodeIndex, queryTerms: string[], ranked: number[]): string[] {
  const { bm25 } = index;
  const asked = new Set(queryTerms);
  const { support } = feedbackCache(index);
  const touched: number[] = [];
  for (const chunk of ranked.slice(0, tuned("feedbackChunks", FEEDBACK_CHUNKS)))
    for (const term of chunkTerms(index, chunk)) if (support[term]++ === 0) touched.push(term);
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
 * The feedback terms of a sentence and the weight their BM25 scores are added at (bm25.ts topBm25
 * adds them); undefined when the weight is 0 or no term qualifies.
 */
export function lexicalFeedback(
  index: CodeIndex,
  queryTerms: string[],
  ranked: number[],
): { terms: string[]; weight: number } | undefined {
  const weight = tuned("feedbackWeight", FEEDBACK_WEIGHT);
  if (weight <= 0) return undefined;
  const terms = feedbackTerms(index, queryTerms, ranked);
  return terms.length ? { terms, weight } : undefined;
}
