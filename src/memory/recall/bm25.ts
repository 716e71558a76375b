import { lexicalTokens } from "../tokens.ts";
import { guardOf, type PageGuard } from "./snapshot-pages.ts";

/** Okapi BM25 defaults (Robertson; Lucene and rank_bm25 use the same). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
const IDF_FLOOR = 1e-6;

/** The terms of a postings table, sorted (JavaScript string order), found by position or by text. */
export interface TermList {
  readonly count: number;
  at(index: number): string;
  /** The term's position, or -1. */
  indexOf(term: string): number;
}

/** Terms held as strings (built in memory). */
export function arrayTerms(sorted: string[]): TermList {
  // Built at the first lookup: the indexer extending recall.bin only walks the terms in order, and a
  // table of every term costs it time and memory twice per run (the old terms and the merged ones).
  let position: Map<string, number> | undefined;
  const table = () => {
    if (!position) {
      position = new Map();
      for (let i = 0; i < sorted.length; i++) position.set(sorted[i], i);
    }
    return position;
  };
  return { count: sorted.length, at: (i) => sorted[i], indexOf: (term) => table().get(term) ?? -1 };
}

/**
 * Terms as UTF-8 bytes with offsets (read from a mapped file): found by binary search, so opening
 * the table builds nothing whatever the vocabulary's size (and checks only the pages a search reads).
 * The search compares the term's UTF-8 bytes with each probed term's and decodes only where the first
 * difference is not ASCII (there UTF-8's order, by code point, and JavaScript's, by UTF-16 unit, can
 * differ): decoding every probe was ~3 ms of a warm recall at 100,000 synthetic records, whose
 * feedback looks up the IDF of every token of its top passages.
 */
export function encodedTerms(bytes: Uint8Array, offsets: Uint32Array): TermList {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const count = offsets.length - 1;
  const offsetPages = guardOf(offsets);
  const bytePages = guardOf(bytes);
  const at = (i: number) => {
    offsetPages?.range(i, i + 2);
    bytePages?.range(offsets[i], offsets[i + 1]);
    return decoder.decode(bytes.subarray(offsets[i], offsets[i + 1]));
  };
  let probe = new Uint8Array(64);
  /** Term i against the probe's first `length` bytes (`term` its text): < 0, 0 or > 0 as term i sorts. */
  const compare = (i: number, term: string, length: number): number => {
    offsetPages?.range(i, i + 2);
    const from = offsets[i];
    const to = offsets[i + 1];
    bytePages?.range(from, to);
    const shorter = Math.min(to - from, length);
    for (let k = 0; k < shorter; k++) {
      const a = bytes[from + k];
      const b = probe[k];
      if (a === b) continue;
      if (a < 0x80 && b < 0x80) return a - b;
      const found = at(i);
      return found < term ? -1 : found > term ? 1 : 0;
    }
    return to - from - length;
  };
  return {
    count,
    at,
    indexOf(term) {
      if (probe.length < term.length * 3) probe = new Uint8Array(term.length * 3);
      const { written: length } = encoder.encodeInto(term, probe);
      let lo = 0;
      let hi = count - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const order = compare(mid, term, length);
        if (order === 0) return mid;
        if (order < 0) lo = mid + 1;
        else hi = mid - 1;
      }
      return -1;
    },
  };
}

/** Term t's documents are `docs[start[t] .. start[t+1])` (ascending), with their term frequencies. */
export interface Postings {
  terms: TermList;
  start: Uint32Array;
  docs: Int32Array;
  tfs: Float32Array;
  /** Tokens per document. */
  docLength: Float32Array;
  totalLength: number;
}

export const NO_POSTINGS: Postings = {
  terms: arrayTerms([]),
  start: new Uint32Array(1),
  docs: new Int32Array(0),
  tfs: new Float32Array(0),
  docLength: new Float32Array(0),
  totalLength: 0,
};

/**
 * `previous` with documents appended (numbered after its own): only the new documents are
 * tokenised; the old postings are copied term by term, in the merged sorted order.
 */
export function appendDocuments(previous: Postings, documents: string[][]): Postings {
  const first = previous.docLength.length;
  const docLength = new Float32Array(first + documents.length);
  docLength.set(previous.docLength);
  let totalLength = previous.totalLength;
  const added = new Map<string, { docs: number[]; tfs: number[] }>();
  let addedCount = 0;
  documents.forEach((tokens, i) => {
    docLength[first + i] = tokens.length;
    totalLength += tokens.length;
    const counts = new Map<string, number>();
    for (const t of tokens) counts.set(t, (counts.get(t) ?? 0) + 1);
    for (const [term, tf] of counts) {
      let list = added.get(term);
      if (!list) added.set(term, (list = { docs: [], tfs: [] }));
      list.docs.push(first + i);
      list.tfs.push(tf);
      addedCount++;
    }
  });
  const fresh = [...added.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const old = previous.terms;
  const terms: string[] = [];
  const start = new Uint32Array(old.count + fresh.length + 1);
  const docs = new Int32Array(previous.docs.length + addedCount);
  const tfs = new Float32Array(docs.length);
  let filled = 0;
  const copyOld = (t: number) => {
    const from = previous.start[t];
    const to = previous.start[t + 1];
    docs.set(previous.docs.subarray(from, to), filled);
    tfs.set(previous.tfs.subarray(from, to), filled);
    filled += to - from;
  };
  const copyNew = (term: string) => {
    const list = added.get(term)!;
    docs.set(list.docs, filled);
    tfs.set(list.tfs, filled);
    filled += list.docs.length;
  };
  let i = 0;
  let j = 0;
  while (i < old.count || j < fresh.length) {
    const a = i < old.count ? old.at(i) : undefined;
    const b = j < fresh.length ? fresh[j] : undefined;
    if (b === undefined || (a !== undefined && a < b)) {
      terms.push(a!);
      copyOld(i++);
    } else if (a === undefined || b < a) {
      terms.push(b);
      copyNew(fresh[j++]);
    } else {
      terms.push(a);
      copyOld(i++);
      copyNew(fresh[j++]);
    }
    start[terms.length] = filled;
  }
  return {
    terms: arrayTerms(terms),
    start: start.subarray(0, terms.length + 1),
    docs,
    tfs,
    docLength,
    totalLength,
  };
}

/**
 * BM25 over identifier-aware tokens (see tokens.ts), on postings held in memory or mapped from a
 * file; a query touches only the postings of its own terms. The postings may come in parts, each of
 * the documents after the last part's (a persisted snapshot's base and what was added since): a term's
 * statistics are summed over them and its documents read part by part, which is the order of one
 * part holding them all, so the scores are those of the postings built whole.
 */
export class Bm25Index {
  readonly size: number;
  private readonly averageLength: number;
  private readonly parts: {
    postings: Postings;
    /** Its first document's number. */
    first: number;
    /** Page checks of postings mapped from recall.bin (see snapshot-pages.ts). */
    pages: {
      start?: PageGuard;
      docs?: PageGuard;
      tfs?: PageGuard;
      docLength?: PageGuard;
    };
  }[];

  constructor(postings: Postings | Postings[]) {
    let first = 0;
    let totalLength = 0;
    this.parts = (Array.isArray(postings) ? postings : [postings]).map((p) => {
      const part = {
        postings: p,
        first,
        pages: {
          start: guardOf(p.start),
          docs: guardOf(p.docs),
          tfs: guardOf(p.tfs),
          docLength: guardOf(p.docLength),
        },
      };
      first += p.docLength.length;
      totalLength += p.totalLength;
      return part;
    });
    this.size = first;
    this.averageLength = this.size ? totalLength / this.size || 1 : 1;
  }

  static fromTexts(texts: string[]): Bm25Index {
    return new Bm25Index(
      appendDocuments(
        NO_POSTINGS,
        texts.map((t) => lexicalTokens(t)),
      ),
    );
  }

  /** The term's number in each part (-1: not there) and its document frequency over all of them. */
  private lookup(term: string): { at: number[]; df: number } {
    let df = 0;
    const at = this.parts.map(({ postings, pages }) => {
      const t = postings.terms.indexOf(term);
      if (t >= 0) {
        pages.start?.range(t, t + 2);
        df += postings.start[t + 1] - postings.start[t];
      }
      return t;
    });
    return { at, df };
  }

  private idfOf(df: number): number {
    return Math.max(IDF_FLOOR, Math.log((this.size - df + 0.5) / (df + 0.5)));
  }

  /**
   * Adds weight × idf × the term's BM25 contribution of each of its documents through `score(doc,
   * value)`, part by part (each document in ascending order), its pages checked.
   */
  private each(
    found: { at: number[] },
    idf: number,
    score: (doc: number, value: number) => void,
    checkLengths: boolean,
  ): void {
    for (let p = 0; p < this.parts.length; p++) {
      const t = found.at[p];
      if (t < 0) continue;
      const { postings, pages, first } = this.parts[p];
      const { start, docs, tfs, docLength } = postings;
      const from = start[t];
      const to = start[t + 1];
      pages.docs?.range(from, to);
      pages.tfs?.range(from, to);
      for (let i = from; i < to; i++) {
        const doc = docs[i];
        const tf = tfs[i];
        if (checkLengths) pages.docLength?.at(doc);
        const norm = BM25_K1 * (1 - BM25_B + (BM25_B * docLength[doc]) / this.averageLength);
        score(first + doc, (idf * tf * (BM25_K1 + 1)) / (tf + norm));
      }
    }
  }

  /** BM25 of every document for the query (0 where no term matches). */
  scores(query: string): Float64Array {
    const terms = new Map<string, number>();
    for (const term of lexicalTokens(query)) terms.set(term, 1);
    return this.weightedScores(terms);
  }

  /**
   * Robertson–Spärck Jones IDF floored at ~0 as SQLite FTS5 does (its bm25() ranks exactly like this;
   * Lucene's 1+ variant lets common words count and lost 0.8 recall@10 on LoCoMo). 0 for an unknown term.
   */
  idf(term: string): number {
    const found = this.lookup(term);
    return found.at.every((t) => t < 0) ? 0 : this.idfOf(found.df);
  }

  /**
   * BM25 of only the documents holding a query term: their indices (in the order first met, term by
   * term) and scores. PERF: the work and the memory follow the query's postings, not the number of
   * documents (recall links a query to the facts of a store of millions this way): the documents met
   * are kept in a hash table of the postings' size, since a scratch array of every document costs a
   * fresh process a page fault for each page of it a posting touches. With `maxPostings` it is bounded.
   */
  matches(query: string, maxPostings = Number.POSITIVE_INFINITY): { docs: Int32Array; scores: Float64Array } {
    const known: { at: number[]; df: number }[] = [];
    for (const term of new Set(lexicalTokens(query))) {
      // Only the start pages: a term left out for its length has its postings' pages left unread.
      const found = this.lookup(term);
      if (found.at.some((t) => t >= 0)) known.push(found);
    }
    // Terms held by more than maxPostings documents are left out (their IDF is low and their postings
    // are what grows with the store); when every term is, the rarest one alone.
    let terms = known.filter((t) => t.df <= maxPostings);
    if (!terms.length && known.length) terms = [known.reduce((a, b) => (b.df < a.df ? b : a))];
    let postings = 0;
    for (const t of terms) postings += t.df;
    const found = new Int32Array(Math.min(postings, this.size));
    const scores = new Float64Array(found.length);
    // Open addressing, at most half full: slot → document + 1 (0: empty) and its place in `found`.
    const bits = Math.max(1, Math.ceil(Math.log2(2 * postings + 1)));
    const mask = 2 ** bits - 1;
    const keys = new Int32Array(mask + 1);
    const place = new Int32Array(mask + 1);
    let count = 0;
    const add = (doc: number, value: number) => {
      let slot = Math.imul(doc, 0x9e3779b1) >>> (32 - bits);
      while (keys[slot] !== 0 && keys[slot] !== doc + 1) slot = (slot + 1) & mask;
      if (keys[slot] === 0) {
        keys[slot] = doc + 1;
        place[slot] = count;
        found[count++] = doc;
      }
      scores[place[slot]] += value;
    };
    for (const t of terms) this.each(t, this.idfOf(t.df), add, true);
    return { docs: found.subarray(0, count), scores: scores.subarray(0, count) };
  }

  /** Σ over terms of weight × the term's BM25 contribution, for every document. */
  weightedScores(terms: Map<string, number>): Float64Array {
    const out = new Float64Array(this.size);
    // Every document's score is written: the lengths (4 bytes a document) are checked whole.
    for (const part of this.parts) part.pages.docLength?.all();
    const add = (doc: number, value: number) => {
      out[doc] += value;
    };
    for (const [term, weight] of terms) {
      const found = this.lookup(term);
      if (found.at.every((t) => t < 0)) continue;
      this.each(found, this.idfOf(found.df) * weight, add, false);
    }
    return out;
  }
}
