/**
 * File coverage: a sentence names several things, and the file that answers it often holds them in
 * different chunks (a handler's setup in one, its error path in another), so no single chunk
 * matches them all. A file whose chunks together hold query terms its best chunk lacks gains in
 * proportion to those terms' share of the query's weight (IDF). docs/code-search.md has the
 * cross-validated figures.
 */
import { inverseFrequency } from "../bm25.ts";
import type { CodeIndex } from "../store.ts";
import { pathTokens } from "../tokens.ts";
import { tuned } from "./tuning.ts";

/**
 * The best chunk of a file gains this times the best score, times the share of the query's IDF
 * that the file's other chunks add to it (0: off).
 */
const FILE_COVERAGE_BOOST = 0;

/** Per loaded index: each file's path term ids (every chunk of a file holds them in its postings). */
const pathTermsCache = new WeakMap<CodeIndex, (Set<number> | undefined)[]>();
function pathTermsOf(index: CodeIndex, file: number): Set<number> {
  let cache = pathTermsCache.get(index);
  if (!cache) pathTermsCache.set(index, (cache = new Array(index.files.length)));
  let terms = cache[file];
  if (!terms) {
    terms = new Set<number>();
    for (const token of pathTokens(index.files[file].path)) {
      const id = index.bm25.termIds.get(token);
      if (id !== undefined) terms.add(id);
    }
    cache[file] = terms;
  }
  return terms;
}

/** The first posting of `term` at or after chunk `chunk` (postings of a term are ascending). */
function firstPostingFrom(index: CodeIndex, term: number, chunk: number): number {
  const { offsets, docs } = index.bm25;
  let low = offsets[term];
  let high = offsets[term + 1];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (docs[middle] < chunk) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Whether any chunk in [first, end) holds `term`. */
function holdsIn(index: CodeIndex, term: number, first: number, end: number): boolean {
  const p = firstPostingFrom(index, term, first);
  return p < index.bm25.offsets[term + 1] && index.bm25.docs[p] < end;
}

/**
 * For a sentence of terms `queryTerms`: the best-scoring candidate chunk of each file gains
 * FILE_COVERAGE_BOOST × the best score × the IDF share of query terms that the file holds outside
 * its path words and that chunk does not.
 */
export function boostFileCoverage(index: CodeIndex, scores: Map<number, number>, queryTerms: string[]): void {
  const weight = tuned("fileCoverageBoost", FILE_COVERAGE_BOOST);
  if (weight <= 0) return;
  const terms: number[] = [];
  const idf: number[] = [];
  let total = 0;
  for (const token of queryTerms) {
    const id = index.bm25.termIds.get(token);
    if (id === undefined) continue;
    terms.push(id);
    idf.push(inverseFrequency(index.bm25, id));
    total += idf[idf.length - 1];
  }
  if (terms.length < 2 || total === 0) return;
  const fileBest = new Map<number, number>();
  let best = 0;
  for (const [chunk, score] of scores) {
    if (score > best) best = score;
    const file = index.chunkFile[chunk];
    const held = fileBest.get(file);
    if (held === undefined || score > (scores.get(held) ?? 0)) fileBest.set(file, chunk);
  }
  const unit = weight * best;
  for (const [file, chunk] of fileBest) {
    const { firstChunk, chunkCount } = index.files[file];
    if (chunkCount < 2) continue;
    const own = pathTermsOf(index, file);
    let added = 0;
    for (let t = 0; t < terms.length; t++) {
      if (own.has(terms[t]) || holdsIn(index, terms[t], chunk, chunk + 1)) continue;
      if (holdsIn(index, terms[t], firstChunk, firstChunk + chunkCount)) added += idf[t];
    }
    if (added) scores.set(chunk, (scores.get(chunk) ?? 0) + (unit * added) / total);
  }
}

/** EXPERIMENT: sentence candidates × 1 + w × log-scaled chunk count of their file. */
const FILE_SIZE_PRIOR = 0;
const maxChunksCache = new WeakMap<CodeIndex, number>();
export function boostFileSize(index: CodeIndex, scores: Map<number, number>): void {
  const weight = tuned("fileSizePrior", FILE_SIZE_PRIOR);
  if (weight <= 0) return;
  let max = maxChunksCache.get(index);
  if (max === undefined) {
    max = 1;
    for (const file of index.files) if (file.kind === "code" && file.chunkCount > max) max = file.chunkCount;
    maxChunksCache.set(index, max);
  }
  const scale = Math.log2(1 + max);
  for (const [chunk, score] of scores) {
    const count = index.files[index.chunkFile[chunk]].chunkCount;
    scores.set(chunk, score * (1 + weight * Math.min(1, Math.log2(1 + count) / scale)));
  }
}
