/**
 * BM25 over chunks, stored as compressed-sparse-row postings (one run of documents per term) in
 * typed arrays: it saves and loads as flat buffers, and an incremental update is one linear merge.
 */

/** Term-frequency saturation: the usual 1.2, fine for short chunks of code. */
export const BM25_K1 = 1.2;
/** Length normalisation: the usual 0.75; chunks are near one size, so it matters little. */
export const BM25_B = 0.75;

export interface Bm25Index {
  terms: string[];
  termIds: Map<string, number>;
  /** Postings of term t are docs/freqs[offsets[t] .. offsets[t+1]), documents ascending. */
  offsets: Int32Array;
  docs: Int32Array;
  freqs: Uint16Array;
  /** Tokens per document. */
  lengths: Float32Array;
  averageLength: number;
}

/**
 * New documents as flat (term, document, frequency) postings over a vocabulary of their own (term
 * ids from a TermInterner), counted term by term one document at a time without a map per document.
 */
export class Bm25Additions {
  term = new Int32Array(1 << 16);
  doc = new Int32Array(1 << 16);
  freq = new Uint16Array(1 << 16);
  count = 0;
  readonly lengths: number[] = [];
  /** Per term id: its frequency in the document being added (zero between documents). */
  private frequency = new Int32Array(1 << 12);
  /** Distinct terms of the document being added, and its length in terms. */
  private seen = new Int32Array(1 << 10);
  private distinct = 0;
  private length = 0;

  /** Counts one term of the document being added (duplicates count again). */
  addTerm(id: number): void {
    if (id >= this.frequency.length) this.frequency = grow(this.frequency, id + 1);
    if (this.frequency[id]++ === 0) {
      if (this.distinct === this.seen.length) this.seen = grow(this.seen);
      this.seen[this.distinct++] = id;
    }
    this.length++;
  }

  /** Ends the document being added: its postings follow the previous document's. */
  endDocument(): void {
    const doc = this.lengths.length;
    const distinct = this.distinct;
    if (this.count + distinct > this.term.length) {
      const size = this.count + distinct;
      this.term = grow(this.term, size);
      this.doc = grow(this.doc, size);
      this.freq = grow(this.freq, size);
    }
    for (let k = 0; k < distinct; k++) {
      const id = this.seen[k];
      this.term[this.count] = id;
      this.doc[this.count] = doc;
      this.freq[this.count++] = Math.min(this.frequency[id], 65535);
      this.frequency[id] = 0;
    }
    this.lengths.push(this.length);
    this.distinct = 0;
    this.length = 0;
  }
}

export function termIdsOf(terms: string[]): Map<string, number> {
  const ids = new Map<string, number>();
  for (let i = 0; i < terms.length; i++) ids.set(terms[i], i);
  return ids;
}

/**
 * A new index from `previous` with its documents renumbered by `keep` (old id → new id, or -1 to drop)
 * and `added` documents appended after the kept ones (ids keptCount, keptCount + 1, …). Terms left
 * without postings are dropped.
 */
export function mergeBm25(
  previous: Bm25Index | undefined,
  keep: Int32Array | undefined,
  keptCount: number,
  added: Bm25Additions,
  addedVocabulary: string[],
): Bm25Index {
  const terms: string[] = previous ? [...previous.terms] : [];
  const termIds = previous ? new Map(previous.termIds) : new Map<string, number>();
  // The added documents' term ids in the merged vocabulary.
  const mergedId = new Int32Array(addedVocabulary.length);
  for (let t = 0; t < addedVocabulary.length; t++) {
    let id = termIds.get(addedVocabulary[t]);
    if (id === undefined) {
      id = terms.length;
      terms.push(addedVocabulary[t]);
      termIds.set(addedVocabulary[t], id);
    }
    mergedId[t] = id;
  }
  const addedCount = added.count;
  const addedTerm = new Int32Array(addedCount);
  for (let p = 0; p < addedCount; p++) addedTerm[p] = mergedId[added.term[p]];
  // Count postings per term: kept old ones, then added ones.
  const counts = new Int32Array(terms.length);
  if (previous) {
    for (let t = 0; t < previous.terms.length; t++) {
      let kept = 0;
      for (let p = previous.offsets[t]; p < previous.offsets[t + 1]; p++)
        if (!keep || keep[previous.docs[p]] >= 0) kept++;
      counts[t] = kept;
    }
  }
  for (let p = 0; p < addedCount; p++) counts[addedTerm[p]]++;
  // Drop terms without postings; renumber the rest.
  const newId = new Int32Array(terms.length).fill(-1);
  const liveTerms: string[] = [];
  for (let t = 0; t < terms.length; t++) {
    if (counts[t] > 0) {
      newId[t] = liveTerms.length;
      liveTerms.push(terms[t]);
    }
  }
  const offsets = new Int32Array(liveTerms.length + 1);
  for (let t = 0; t < terms.length; t++) if (newId[t] >= 0) offsets[newId[t] + 1] = counts[t];
  for (let t = 0; t < liveTerms.length; t++) offsets[t + 1] += offsets[t];
  const total = offsets[liveTerms.length];
  const docs = new Int32Array(total);
  const freqs = new Uint16Array(total);
  const cursor = offsets.slice(0, liveTerms.length);
  // Old postings first (their new ids are below every added id), so each run stays ascending.
  if (previous) {
    for (let t = 0; t < previous.terms.length; t++) {
      const target = newId[t];
      if (target < 0) continue;
      for (let p = previous.offsets[t]; p < previous.offsets[t + 1]; p++) {
        const doc = keep ? keep[previous.docs[p]] : previous.docs[p];
        if (doc < 0) continue;
        docs[cursor[target]] = doc;
        freqs[cursor[target]++] = previous.freqs[p];
      }
    }
  }
  for (let p = 0; p < addedCount; p++) {
    const target = newId[addedTerm[p]];
    docs[cursor[target]] = keptCount + added.doc[p];
    freqs[cursor[target]++] = added.freq[p];
  }
  const lengths = new Float32Array(keptCount + added.lengths.length);
  if (previous) {
    for (let d = 0; d < previous.lengths.length; d++) {
      const target = keep ? keep[d] : d;
      if (target >= 0) lengths[target] = previous.lengths[d];
    }
  }
  for (let i = 0; i < added.lengths.length; i++) lengths[keptCount + i] = added.lengths[i];
  return {
    terms: liveTerms,
    termIds: termIdsOf(liveTerms),
    offsets,
    docs,
    freqs,
    lengths,
    averageLength: averageOf(lengths),
  };
}

export function averageOf(lengths: Float32Array): number {
  let total = 0;
  for (let d = 0; d < lengths.length; d++) total += lengths[d];
  return total / lengths.length || 1;
}

function grow<T extends Int32Array | Uint16Array>(array: T, atLeast = 0): T {
  let size = array.length * 2;
  while (size < atLeast) size *= 2;
  const bigger = new (array.constructor as new (n: number) => T)(size);
  bigger.set(array);
  return bigger;
}

/** The BM25 inverse document frequency of term id `term`: rarer terms weigh more. */
export function inverseFrequency(index: Bm25Index, term: number): number {
  const n = index.lengths.length;
  const df = index.offsets[term + 1] - index.offsets[term];
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/**
 * Each document's length normalisation, k1 × (1 − b + b × length / average), once per loaded index:
 * the same doubles the scoring loop computed per posting.
 */
const normsCache = new WeakMap<Bm25Index, Float64Array>();
function lengthNorms(index: Bm25Index): Float64Array {
  let norms = normsCache.get(index);
  if (!norms) {
    norms = new Float64Array(index.lengths.length);
    for (let d = 0; d < norms.length; d++)
      norms[d] = BM25_K1 * (1 - BM25_B + (BM25_B * index.lengths[d]) / index.averageLength);
    normsCache.set(index, norms);
  }
  return norms;
}

/**
 * BM25 scores of every document for the query terms (unknown terms score nothing), plus the list of
 * documents that matched at least one term.
 */
export function scoreBm25(
  index: Bm25Index,
  queryTerms: string[],
): { scores: Float32Array; matched: Int32Array } {
  const n = index.lengths.length;
  const scores = new Float32Array(n);
  if (n === 0) return { scores, matched: new Int32Array(0) };
  const ids: number[] = [];
  let postings = 0;
  for (const term of queryTerms) {
    const t = index.termIds.get(term);
    if (t === undefined) continue;
    ids.push(t);
    postings += index.offsets[t + 1] - index.offsets[t];
  }
  // At most every posting matches a new document: sized once, never grown.
  const matched = new Int32Array(Math.min(n, postings));
  let matchedCount = 0;
  const norms = lengthNorms(index);
  for (const t of ids) {
    const end = index.offsets[t + 1];
    const idf = inverseFrequency(index, t);
    for (let p = index.offsets[t]; p < end; p++) {
      const doc = index.docs[p];
      const tf = index.freqs[p];
      if (scores[doc] === 0) matched[matchedCount++] = doc;
      scores[doc] += (idf * tf * (BM25_K1 + 1)) / (tf + norms[doc]);
    }
  }
  return { scores, matched: matched.subarray(0, matchedCount) };
}
