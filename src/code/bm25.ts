/**
 * BM25 over chunks, stored as compressed-sparse-row postings (one run of documents per term) in
 * typed arrays: it saves and loads as flat buffers, and an incremental update is one linear merge.
 */
import { topScored } from "./dense.ts";

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
 * Scores of one walk of the postings: BM25 accumulated per document (float32), and the documents in
 * the order they were first matched. A search reuses one per index (see buffersOf).
 */
class ScoreBuffer {
  readonly scores: Float32Array;
  readonly matched: Int32Array;
  count = 0;
  /** Which walk the buffer holds (walkedTop's `previous`), and whether it is the query's alone. */
  generation = 0;
  alone = false;

  constructor(documents: number, capacity = documents) {
    this.scores = new Float32Array(documents);
    this.matched = new Int32Array(capacity);
  }

  /** Zeroes what the previous walk scored: its matched documents, or all at once when they are many. */
  reset(): void {
    if (this.count * 4 > this.scores.length) this.scores.fill(0);
    else for (let k = 0; k < this.count; k++) this.scores[this.matched[k]] = 0;
    this.count = 0;
    this.generation = ++walks;
    this.alone = false;
  }

  /** Adds the BM25 scores of term ids `ids` (a repeated id counts again). */
  add(index: Bm25Index, ids: number[]): void {
    const norms = lengthNorms(index);
    const { scores, matched } = this;
    let count = this.count;
    for (const t of ids) {
      const end = index.offsets[t + 1];
      const idf = inverseFrequency(index, t);
      for (let p = index.offsets[t]; p < end; p++) {
        const doc = index.docs[p];
        const tf = index.freqs[p];
        if (scores[doc] === 0) matched[count++] = doc;
        scores[doc] += (idf * tf * (BM25_K1 + 1)) / (tf + norms[doc]);
      }
    }
    this.count = count;
  }
}

let walks = 0;

/** The ids of the terms an index knows, in the query's order (repeats kept). */
function termIdsIn(index: Bm25Index, terms: string[]): number[] {
  const ids: number[] = [];
  for (const term of terms) {
    const t = index.termIds.get(term);
    if (t !== undefined) ids.push(t);
  }
  return ids;
}

/**
 * BM25 scores of every document for the query terms (unknown terms score nothing), plus the list of
 * documents that matched at least one term, in the order they were first matched. Fresh arrays, for
 * callers that keep them; a search walks into its index's reused buffers (topBm25).
 */
export function scoreBm25(
  index: Bm25Index,
  queryTerms: string[],
): { scores: Float32Array; matched: Int32Array } {
  const n = index.lengths.length;
  const ids = termIdsIn(index, queryTerms);
  let postings = 0;
  for (const t of ids) postings += index.offsets[t + 1] - index.offsets[t];
  // At most every posting matches a new document: sized once, never grown.
  const buffer = new ScoreBuffer(n, Math.min(n, postings));
  if (n > 0) buffer.add(index, ids);
  return { scores: buffer.scores, matched: buffer.matched.subarray(0, buffer.count) };
}

/**
 * Terms in more than this share of the documents are bounded rather than walked: their postings are
 * read only for the documents that could reach the top. Such a term is as long as a quarter of the
 * index or more but weighs little (IDF at most log(1 + 3) = 1.39 against ~11.5 for a term of one
 * document in 100k; the feedback of a sentence over generated code adds `const` and `count`, in every
 * chunk, whose IDF is 0.000005), so a document without the query's other terms seldom gets near the top.
 */
export const BOUNDED_TERM_SHARE = 0.25;
/**
 * …and only terms of at least this many postings: walking 4k postings costs ~20 µs, less than
 * rescoring the candidates term by term (on the 19 development repositories, most under 2k chunks,
 * bounding their common words made the median query 7–14 % slower in two runs).
 */
export const BOUNDED_FROM_POSTINGS = 4096;
/**
 * Past this many candidates per wanted document the bounds have not narrowed enough (the bounded
 * terms weigh too much for these scores): every posting is walked instead, as without bounds.
 */
const MAX_CANDIDATES_PER_RESULT = 16;

/** The query's terms, and optionally feedback terms whose scores are added at `weight` (expansion.ts). */
export interface LexicalQuery {
  terms: string[];
  feedback?: { terms: string[]; weight: number };
}

/**
 * The best documents, best first, with their scores; `walked`, when every posting was walked: which
 * walk of the index's buffer holds the query's own scores (a feedback call passes it back as
 * `previous`, so they are not walked twice). It is good until the index's next walk.
 */
export interface LexicalTop {
  ranked: number[];
  scores: number[];
  walked?: number;
}

/**
 * Per index, the buffers every walk reuses: the query's scores and the feedback's. A fresh
 * Float32Array per query (400 KB at 100k chunks) cost ~0.3 ms in allocation and collection; the
 * 6k-posting walk itself ~0.02 ms.
 */
const buffersCache = new WeakMap<Bm25Index, { own: ScoreBuffer; extra: ScoreBuffer }>();
function buffersOf(index: Bm25Index): { own: ScoreBuffer; extra: ScoreBuffer } {
  let buffers = buffersCache.get(index);
  if (!buffers) {
    const n = index.lengths.length;
    buffers = { own: new ScoreBuffer(n), extra: new ScoreBuffer(n) };
    buffersCache.set(index, buffers);
  }
  return buffers;
}

/**
 * Every posting walked: the query's BM25 scores (or those of walk `previous`, still in the buffer),
 * then the feedback terms' added at their weight (the documents only they match after the query's),
 * and the top `count` of those allowed.
 */
function walkedTop(
  index: Bm25Index,
  query: LexicalQuery,
  count: number,
  allowed: Uint8Array | undefined,
  chunkFile: Int32Array | undefined,
  previous?: number,
): LexicalTop {
  const { own, extra } = buffersOf(index);
  if (!(own.alone && own.generation === previous)) {
    own.reset();
    own.add(index, termIdsIn(index, query.terms));
    own.alone = true;
  }
  if (query.feedback) {
    const { weight } = query.feedback;
    extra.reset();
    extra.add(index, termIdsIn(index, query.feedback.terms));
    for (let k = 0; k < extra.count; k++) {
      const doc = extra.matched[k];
      if (own.scores[doc] === 0) own.matched[own.count++] = doc;
      own.scores[doc] += weight * extra.scores[doc];
    }
    own.generation = ++walks;
    own.alone = false;
  }
  const ranked = topScored(own.scores, count, own.matched.subarray(0, own.count), allowed, chunkFile);
  return { ranked, scores: ranked.map((doc) => own.scores[doc]), walked: own.generation };
}

/**
 * Partial scores while bounding (doubles: a bound, not a score) and the documents touched, in a
 * buffer reused per index like ScoreBuffer; a walk first zeroes what the previous one touched.
 */
class PartialScores {
  readonly partial: Float64Array;
  readonly touched: Int32Array;
  count = 0;

  constructor(documents: number) {
    this.partial = new Float64Array(documents);
    this.touched = new Int32Array(documents);
  }

  reset(): void {
    if (this.count * 4 > this.partial.length) this.partial.fill(0);
    else for (let k = 0; k < this.count; k++) this.partial[this.touched[k]] = 0;
    this.count = 0;
  }

  /** Adds `factor` × term `t`'s BM25 scores. */
  add(index: Bm25Index, t: number, factor: number): void {
    const norms = lengthNorms(index);
    const { partial, touched } = this;
    const idf = inverseFrequency(index, t);
    let count = this.count;
    for (let p = index.offsets[t], end = index.offsets[t + 1]; p < end; p++) {
      const doc = index.docs[p];
      const tf = index.freqs[p];
      if (partial[doc] === 0) touched[count++] = doc;
      partial[doc] += (factor * idf * tf * (BM25_K1 + 1)) / (tf + norms[doc]);
    }
    this.count = count;
  }
}

/** Per index: the partial scores while bounding, and the rescored candidates' exact scores. */
const scratchCache = new WeakMap<Bm25Index, { partial: PartialScores; exact: Float32Array }>();
function scratchOf(index: Bm25Index) {
  let scratch = scratchCache.get(index);
  if (!scratch) {
    const n = index.lengths.length;
    scratch = { partial: new PartialScores(n), exact: new Float32Array(n) };
    scratchCache.set(index, scratch);
  }
  return scratch;
}

function isBounded(index: Bm25Index, t: number, boundedFrom: number): boolean {
  const df = index.offsets[t + 1] - index.offsets[t];
  return df > index.lengths.length * BOUNDED_TERM_SHARE && df >= boundedFrom;
}

/**
 * The frequency of each of `terms` in each of `docs` (ascending), as `tfs[d · terms.length + i]` (0
 * where absent). A term's postings are sorted by document, so one cursor per term moves forward
 * through them, galloping (steps doubling, then a binary search): for ~100 candidates against
 * postings of 20k+ documents, a search from where the last one ended reads nearby entries, where a
 * binary search of the whole list per candidate (~1,000 a query, 10 % of its time at 100k chunks)
 * missed the cache at every step.
 */
function frequenciesIn(index: Bm25Index, terms: number[], docs: number[]): Int32Array {
  const tfs = new Int32Array(docs.length * terms.length);
  const postings = index.docs;
  for (let i = 0; i < terms.length; i++) {
    let at = index.offsets[terms[i]];
    const end = index.offsets[terms[i] + 1];
    for (let d = 0; d < docs.length && at < end; d++) {
      const doc = docs[d];
      if (postings[at] < doc) {
        // postings[low] < doc; find the first entry at or past doc in (low, high].
        let low = at;
        let step = 1;
        let high = at + 1;
        while (high < end && postings[high] < doc) {
          low = high;
          step *= 2;
          high = low + step;
        }
        if (high > end) high = end;
        for (low++; low < high; ) {
          const middle = (low + high) >>> 1;
          if (postings[middle] < doc) low = middle + 1;
          else high = middle;
        }
        at = low;
      }
      if (at < end && postings[at] === doc) tfs[d * terms.length + i] = index.freqs[at];
    }
  }
  return tfs;
}

/**
 * The top `count` documents by the BM25 scores of `query` (with its feedback) among those allowed
 * (`allowed[chunkFile[doc]] === 1`; all when undefined), best first: exactly the documents, order and
 * float32 scores of walking every posting (scoreBm25, the feedback added as expansion.ts adds it, then
 * topScored over the matched documents in the order they were first matched), ties included.
 *
 * A term in more than BOUNDED_TERM_SHARE of the documents (and BOUNDED_FROM_POSTINGS) is not walked (MaxScore): the other terms'
 * postings give each document a partial score, a floor under the `count`-th best final score (the
 * `count`-th best partial), and the bounded terms add at most IDF × (k1 + 1) each. Only documents whose
 * partial score plus that bound reaches the floor can be in the top or tie with it; they are rescored
 * exactly, term by term in the query's order (a bounded term's frequency found by binary search), and
 * ranked in their first-matched order. When the bounds leave too many candidates, or fewer than `count`
 * documents have a partial score, every posting is walked instead. `previous` is the `walked` of the
 * query's own call (when this call adds its feedback).
 */
export function topBm25(
  index: Bm25Index,
  query: LexicalQuery,
  count: number,
  options: {
    allowed?: Uint8Array;
    chunkFile?: Int32Array;
    /** The `walked` of this query's own call, when it walked every posting. */
    previous?: number;
    /** BOUNDED_FROM_POSTINGS unless a test says otherwise. */
    boundedFrom?: number;
  } = {},
): LexicalTop {
  const { allowed, chunkFile, previous } = options;
  const boundedFrom = options.boundedFrom ?? BOUNDED_FROM_POSTINGS;
  const n = index.lengths.length;
  const walked = () => walkedTop(index, query, count, allowed, chunkFile, previous);
  // No term of a smaller index has that many postings.
  if (n < boundedFrom || count <= 0) return walked();
  const weight = query.feedback?.weight ?? 0;
  const queryIds = termIdsIn(index, query.terms);
  const feedbackIds = query.feedback ? termIdsIn(index, query.feedback.terms) : [];
  if (
    n === 0 ||
    (!queryIds.some((t) => isBounded(index, t, boundedFrom)) &&
      !feedbackIds.some((t) => isBounded(index, t, boundedFrom)))
  )
    return walked();

  // Partial scores from the terms walked; the bound of what the others can add.
  const { partial: partials, exact } = scratchOf(index);
  const norms = lengthNorms(index);
  partials.reset();
  let bound = 0;
  for (const t of queryIds)
    if (isBounded(index, t, boundedFrom)) bound += inverseFrequency(index, t) * (BM25_K1 + 1);
    else partials.add(index, t, 1);
  for (const t of feedbackIds)
    if (isBounded(index, t, boundedFrom)) bound += weight * inverseFrequency(index, t) * (BM25_K1 + 1);
    else partials.add(index, t, weight);
  const { partial } = partials;
  const touched = partials.touched.subarray(0, partials.count);
  // Float32 sums of k positive terms are within k × 2^-24 of the exact sum (relative); doubled.
  const slack = (queryIds.length + feedbackIds.length + 2) * 2 ** -23;
  const floor = countthBest(partial, touched, count, allowed, chunkFile) * (1 - slack);
  // A document no walked term matched scores at most `bound`: it could reach the top.
  if (!(floor > bound * (1 + slack))) return walked();
  const candidates: number[] = [];
  const most = count * MAX_CANDIDATES_PER_RESULT;
  for (let k = 0; k < touched.length; k++) {
    const doc = touched[k];
    if ((partial[doc] + bound) * (1 + slack) < floor) continue;
    if (allowed && allowed[chunkFile![doc]] !== 1) continue;
    // Past the limit the walk answers: stop here rather than list the rest of the touched documents.
    if (candidates.length === most) return walked();
    candidates.push(doc);
  }
  // Exact scores, and the order a full walk first matches each candidate in (which the order key
  // holds, so the candidates may be visited by document).
  candidates.sort((a, b) => a - b);
  const termIds = [...queryIds, ...feedbackIds];
  const tfs = frequenciesIn(index, termIds, candidates);
  const order = new Float64Array(candidates.length);
  for (let c = 0; c < candidates.length; c++) {
    const doc = candidates[c];
    const row = c * termIds.length;
    let own = 0;
    let firstOwn = -1;
    for (let i = 0; i < queryIds.length; i++) {
      const tf = tfs[row + i];
      if (tf === 0) continue;
      if (firstOwn < 0) firstOwn = i;
      own = Math.fround(
        own + (inverseFrequency(index, queryIds[i]) * tf * (BM25_K1 + 1)) / (tf + norms[doc]),
      );
    }
    let added = 0;
    let firstAdded = -1;
    for (let i = 0; i < feedbackIds.length; i++) {
      const tf = tfs[row + queryIds.length + i];
      if (tf === 0) continue;
      if (firstAdded < 0) firstAdded = i;
      added = Math.fround(
        added + (inverseFrequency(index, feedbackIds[i]) * tf * (BM25_K1 + 1)) / (tf + norms[doc]),
      );
    }
    exact[doc] = firstAdded >= 0 ? Math.fround(own + weight * added) : own;
    // Matched by the query first (by its first term holding the document), then by the feedback.
    const group = firstOwn >= 0 ? firstOwn : queryIds.length + firstAdded;
    order[c] = group * n + doc;
  }
  order.sort();
  const ids = Int32Array.from(order, (key) => key % n);
  const ranked = topScored(exact, count, ids);
  return { ranked, scores: ranked.map((doc) => exact[doc]) };
}

/** The `count`-th best partial score among the allowed touched documents; 0 when fewer are. */
function countthBest(
  partial: Float64Array,
  touched: Int32Array,
  count: number,
  allowed: Uint8Array | undefined,
  chunkFile: Int32Array | undefined,
): number {
  const best: number[] = [];
  for (let k = 0; k < touched.length; k++) {
    const doc = touched[k];
    const score = partial[doc];
    if (best.length === count && score <= best[count - 1]) continue;
    if (allowed && allowed[chunkFile![doc]] !== 1) continue;
    let at = best.length;
    while (at > 0 && best[at - 1] < score) at--;
    for (let k = best.length === count ? count - 1 : best.length; k > at; k--) best[k] = best[k - 1];
    best[at] = score;
  }
  return best.length === count ? best[count - 1] : 0;
}
