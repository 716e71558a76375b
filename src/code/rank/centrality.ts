/**
 * Centrality: a file that many other files name is one the repository is built around (`router.go`,
 * `Connection.php`). A file's centrality is how many other files contain its name as a word (its
 * stem, the whole lower-cased identifier), shared among the files of that stem and log-scaled to
 * 0..1; a sentence's candidates gain that share of their score. docs/code-search.md has the
 * cross-validated figures.
 */
import type { CodeIndex } from "../store.ts";
import { tuned } from "./tuning.ts";

/** Fraction of its score the most central file's chunk gains (0: centrality unused). */
const CENTRALITY_WEIGHT = 0;
/** Shorter stems (`io`, `db`) are words everywhere, not references to one file. */
const MIN_STEM_LENGTH = 3;

/** Each file's centrality in 0..1, computed once per loaded index from its BM25 postings. */
const centralityCache = new WeakMap<CodeIndex, Float32Array>();
export function fileCentrality(index: CodeIndex): Float32Array {
  const known = centralityCache.get(index);
  if (known) return known;
  const files = index.files;
  const stemOf = files.map((file) => {
    const name = file.path.slice(file.path.lastIndexOf("/") + 1);
    const dot = name.indexOf(".", 1);
    return (dot > 0 ? name.slice(0, dot) : name).toLowerCase();
  });
  const filesPerStem = new Map<string, number>();
  for (const stem of stemOf) filesPerStem.set(stem, (filesPerStem.get(stem) ?? 0) + 1);
  const referencing = new Map<string, number>();
  const { bm25, chunkFile } = index;
  for (const stem of filesPerStem.keys()) {
    const term = stem.length >= MIN_STEM_LENGTH ? bm25.termIds.get(stem) : undefined;
    if (term === undefined) continue;
    const seen = new Set<number>();
    for (let p = bm25.offsets[term]; p < bm25.offsets[term + 1]; p++) seen.add(chunkFile[bm25.docs[p]]);
    referencing.set(stem, seen.size);
  }
  const raw = new Float32Array(files.length);
  let max = 0;
  for (let f = 0; f < files.length; f++) {
    const refs = referencing.get(stemOf[f]);
    if (!refs) continue;
    // The file's own mentions of its name do not count; namesakes share the references.
    raw[f] = Math.log1p(Math.max(0, refs - filesPerStem.get(stemOf[f])!) / filesPerStem.get(stemOf[f])!);
    max = Math.max(max, raw[f]);
  }
  if (max > 0) for (let f = 0; f < files.length; f++) raw[f] /= max;
  centralityCache.set(index, raw);
  return raw;
}

/** Multiplies each candidate's score by 1 + the centrality weight × its file's centrality. */
export function boostCentral(index: CodeIndex, scores: Map<number, number>): void {
  const weight = tuned("centralityWeight", CENTRALITY_WEIGHT);
  if (weight <= 0) return;
  const centrality = fileCentrality(index);
  for (const [chunk, score] of scores)
    scores.set(chunk, score * (1 + weight * centrality[index.chunkFile[chunk]]));
}
