/**
 * Search over one loaded index: pure functions of the index, the query and its embedding.
 */
import { topBm25 } from "./bm25.ts";
import { cosineScores, denseTop, int8Rows } from "./dense.ts";
import type { ContentKind } from "./languages.ts";
import { pathTable, rerank } from "./rank/boosts.ts";
import { isSymbolQuery } from "./rank/definitions.ts";
import { lexicalFeedback, turnPostingsAround } from "./rank/expansion.ts";
import {
  CANDIDATES_PER_RESULT,
  fuse,
  fusionWeight,
  liftClearLexicalWinner,
  MIN_CANDIDATES,
  queryKind,
} from "./rank/fusion.ts";
import { pathPenalty } from "./rank/penalties.ts";
import { selectTop } from "./rank/selection.ts";
import { tuningVersion } from "./rank/tuning.ts";
import type { CodeIndex } from "./store.ts";
import { queryTokens } from "./tokens.ts";

/** `code` (the default), `docs`, `config`, or `all` of them. */
export type ContentFilter = ContentKind | "all";
/** `hybrid` is the product; `bm25` and `dense` alone exist for benchmarks and diagnosis. */
export type SearchMode = "hybrid" | "bm25" | "dense";

export interface RankedChunk {
  chunk: number;
  score: number;
}

/** Longer queries are cut here: a pasted file says no more than its first few thousand characters. */
export const MAX_QUERY_CHARS = 4000;

/** Per loaded index, the allowed-files arrays already computed, by content and folder. */
const allowedCache = new WeakMap<CodeIndex, Map<string, { allowed: Uint8Array; all: boolean }>>();

/** Computed once per index, filter and folder: at 10k files it cost a query a quarter of a millisecond. */
function allowedOf(
  index: CodeIndex,
  content: ContentFilter,
  under: string,
): { allowed: Uint8Array; all: boolean } {
  let byFilter = allowedCache.get(index);
  if (!byFilter) allowedCache.set(index, (byFilter = new Map()));
  const key = `${content}\0${under}`;
  let known = byFilter.get(key);
  if (!known) {
    const allowed = new Uint8Array(index.files.length);
    let all = true;
    for (let f = 0; f < index.files.length; f++) {
      const file = index.files[f];
      allowed[f] = (content === "all" || file.kind === content) && file.path.startsWith(under) ? 1 : 0;
      if (!allowed[f]) all = false;
    }
    byFilter.set(key, (known = { allowed, all }));
  }
  return known;
}

/** 1 for each file of the wanted kind under the folder `under` ("src/lib/"; "" for every folder); shared, read-only. */
export function allowedFiles(index: CodeIndex, content: ContentFilter, under = ""): Uint8Array {
  return allowedOf(index, content, under).allowed;
}

/** Cosine similarity of every chunk with the (normalised) query vector. */
export function denseScores(index: CodeIndex, queryVector: Float32Array): Float32Array {
  return cosineScores(index.vectors.subarray(0, index.texts.length * index.dim), index.dim, queryVector);
}

function isZero(vector: Float32Array | undefined): boolean {
  if (!vector) return true;
  for (let i = 0; i < vector.length; i++) if (vector[i] !== 0) return false;
  return true;
}

/** The set of an index's file paths, computed once per loaded index. */
const pathsCache = new WeakMap<CodeIndex, Set<string>>();
function filePaths(index: CodeIndex): Set<string> {
  let paths = pathsCache.get(index);
  if (!paths) pathsCache.set(index, (paths = new Set(index.files.map((f) => f.path))));
  return paths;
}

/** Per loaded index, the path penalty of each file met so far (NaN: not yet), under one tuning version. */
const penaltyCache = new WeakMap<CodeIndex, { version: number; byFile: Float64Array }>();

/**
 * The path penalty of file number `file` of `index` (pathPenalty, a C header's `.c` looked for among
 * its files), remembered across queries: ten regular expressions a file, for the ~100 files of a
 * query's candidates, cost 0.05 ms a query, and a map by path as much again at 100k chunks (each
 * path string a cache miss). A new tuning (setTuning) starts the cache again.
 */
function pathPenalties(index: CodeIndex): (file: number) => number {
  let cache = penaltyCache.get(index);
  if (!cache || cache.version !== tuningVersion())
    penaltyCache.set(
      index,
      (cache = { version: tuningVersion(), byFile: new Float64Array(index.files.length).fill(Number.NaN) }),
    );
  const { byFile } = cache;
  const paths = filePaths(index);
  const hasFile = (path: string) => paths.has(path);
  return (file) => {
    let factor = byFile[file];
    if (Number.isNaN(factor)) byFile[file] = factor = pathPenalty(index.files[file].path, hasFile);
    return factor;
  };
}

/**
 * Builds what a loaded index's first queries would otherwise build on their way: the dense scan's
 * int8 rows, the feedback's chunk → terms table, the every-file filter, the path set and the path
 * words. For a process that keeps the index for many queries (the HTTP server and its query
 * workers), when it loads one; a one-shot search leaves them to the query (the postings of a large
 * index are then never turned around: expansion.ts). Same answers either way.
 */
export function prepareIndex(index: CodeIndex): void {
  if (index.texts.length === 0) return;
  int8Rows(index.vectors, index.dim, index.texts.length);
  turnPostingsAround(index);
  allowedOf(index, "all", "");
  filePaths(index);
  pathTable(index);
}

/**
 * Ranked chunks for a query. `queryVector` is the query's embedding (undefined or all zeros when the
 * query has no known token: lexical ranking alone then).
 */
export function searchIndex(
  index: CodeIndex,
  query: string,
  queryVector: Float32Array | undefined,
  options: {
    topK: number;
    content: ContentFilter;
    mode?: SearchMode;
    under?: string;
    /** Milliseconds per stage, summed into (benchmark/code-query.ts); measured only when given. */
    timings?: Record<string, number>;
    /** What timings are measured with: wall time by default (a benchmark passes its thread's CPU clock). */
    clock?: () => number;
  },
): RankedChunk[] {
  const text = query.trim().slice(0, MAX_QUERY_CHARS);
  const n = index.texts.length;
  if (!text || n === 0 || options.topK <= 0) return [];
  const { allowed, all } = allowedOf(index, options.content, options.under ?? "");
  const isAllowed = (chunk: number) => allowed[index.chunkFile[chunk]] === 1;
  // The candidate loops skip the file test when every file is allowed (`content: all`, no folder).
  const filter = all ? undefined : allowed;
  const candidateCount = Math.max(MIN_CANDIDATES, options.topK * CANDIDATES_PER_RESULT);
  const mode = options.mode ?? "hybrid";
  const lap = stageTimer(options.timings, options.clock);

  const terms = queryTokens(text);
  const lexical = terms.length
    ? topBm25(index.bm25, { terms }, candidateCount, { allowed: filter, chunkFile: index.chunkFile })
    : { ranked: [], scores: [] };
  let lexicalRanked = lexical.ranked;
  lap("bm25");
  if (mode === "bm25")
    return lexicalRanked.slice(0, options.topK).map((chunk, i) => ({ chunk, score: lexical.scores[i] }));
  const symbolQuery = isSymbolQuery(text);
  const feedback =
    lexicalRanked.length && !symbolQuery ? lexicalFeedback(index, terms, lexicalRanked) : undefined;
  lap("feedback terms");
  let lexicalScores = lexical.scores;
  if (feedback) {
    const fed = topBm25(index.bm25, { terms, feedback }, candidateCount, {
      allowed: filter,
      chunkFile: index.chunkFile,
      previous: lexical.walked,
    });
    lexicalRanked = fed.ranked;
    lexicalScores = fed.scores;
  }
  lap("feedback");
  // Punctuation alone (`?.`, `->`) has no meaning to embed: it is looked for literally. So is a query
  // no chunk shares a word with: to our 64-dimension static model such a query is noise. On
  // the development repositories gibberish and other languages ("zzzqqq xyzzy", "lorem ipsum", a
  // Spanish or Japanese question) reach best cosines of 0.33–0.75, as high as real questions' best
  // (0.43 at their 1st percentile, 0.70 at the median), and every one of the 377 real queries shares
  // a word. Dense hits would be confident-looking guesses, so only an exact occurrence is returned.
  if (!lexicalRanked.length && mode === "hybrid") return literalMatches(index, text, isAllowed, options.topK);

  const dense = isZero(queryVector)
    ? undefined
    : denseTop(
        index.vectors.subarray(0, n * index.dim),
        index.dim,
        queryVector!,
        candidateCount,
        int8Rows(index.vectors, index.dim, n),
        filter,
        index.chunkFile,
      );
  const denseRanked = dense?.ranked ?? [];
  lap("dense");
  if (mode === "dense")
    return denseRanked.slice(0, options.topK).map((chunk, i) => ({ chunk, score: dense!.scores[i] }));

  const kind = queryKind(text, symbolQuery);
  const scores = fuse(lexicalRanked, denseRanked, fusionWeight(kind));
  liftClearLexicalWinner(scores, lexicalRanked, lexicalScores);
  lap("fusion");
  rerank(index, scores, text, kind, isAllowed);
  lap("rerank");
  const top = selectTop(
    scores,
    (chunk) => index.chunkFile[chunk],
    options.topK,
    undefined,
    pathPenalties(index),
  );
  lap("selection");
  return top.map(({ id, score }) => ({ chunk: id, score }));
}

/** A lap function adding the time since the previous lap to a stage; it does nothing without `timings`. */
function stageTimer(
  timings: Record<string, number> | undefined,
  clock: () => number = () => performance.now(),
): (stage: string) => void {
  if (!timings) return () => {};
  let last = clock();
  return (stage) => {
    const now = clock();
    timings[stage] = (timings[stage] ?? 0) + now - last;
    last = now;
  };
}

/** A query with no word in it (`->`, `?.`): chunks containing it literally, most occurrences first. */
function literalMatches(
  index: CodeIndex,
  query: string,
  isAllowed: (chunk: number) => boolean,
  topK: number,
): RankedChunk[] {
  const found: RankedChunk[] = [];
  for (let c = 0; c < index.texts.length; c++) {
    if (!isAllowed(c)) continue;
    const count = index.texts[c].split(query).length - 1;
    if (count > 0) found.push({ chunk: c, score: count });
  }
  found.sort((a, b) => b.score - a.score || a.chunk - b.chunk);
  return found.slice(0, topK);
}
