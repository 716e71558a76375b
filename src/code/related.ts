/**
 * "More like this": chunks similar to a given chunk, by meaning (its embedding) and by the rare
 * identifiers it shares (BM25 over its own most distinctive tokens), fused like a search.
 */
import { isAbsolute, relative } from "node:path";
import { scoreBm25 } from "./bm25.ts";
import { MIN_CANDIDATES, rrfScores } from "./rank/fusion.ts";
import { selectTop } from "./rank/selection.ts";
import { allowedFiles, type ContentFilter, denseScores, type RankedChunk } from "./search.ts";
import type { CodeIndex } from "./store.ts";
import { tokenize } from "./tokens.ts";

/** The source chunk's rarest tokens make its lexical query: enough to name what it is about. */
const RELATED_QUERY_TERMS = 24;
/** Meaning matters more than shared words when asking for related code. */
const RELATED_DENSE_WEIGHT = 0.6;

/**
 * Chunks like the one holding `line` of `file`, among the files of kind `content` under `under`
 * ("src/lib/", or "" for the whole repository). A relative `file` is looked up from the repository's
 * root first (as hits name files), then from `under` (the folder the caller works in).
 */
export function relatedChunks(
  index: CodeIndex,
  file: string,
  line: number,
  options: { topK: number; content: ContentFilter; under?: string },
): { source: number; ranked: RankedChunk[] } | { error: string } {
  const { topK, content, under = "" } = options;
  const path = (isAbsolute(file) ? relative(index.root, file) : file)
    .replaceAll("\\", "/")
    .replace(/^\.\//, "");
  const entry =
    index.files.find((f) => f.path === path) ??
    (under && !isAbsolute(file) ? index.files.find((f) => f.path === under + path) : undefined);
  if (!entry) return { error: `${file} is not an indexed file of ${index.root}` };
  let source = -1;
  for (let c = entry.firstChunk; c < entry.firstChunk + entry.chunkCount; c++) {
    if (index.chunkStart[c] <= line && line <= index.chunkEnd[c]) source = c;
  }
  // A line between chunks (a blank line) belongs to the chunk that follows it.
  if (source === -1) {
    for (let c = entry.firstChunk; c < entry.firstChunk + entry.chunkCount; c++) {
      if (index.chunkStart[c] >= line) {
        source = c;
        break;
      }
    }
  }
  if (source === -1) return { error: `${entry.path} has no indexed code at line ${line}` };

  const allowedFile = allowedFiles(index, content, under);
  const allowed = (chunk: number) => chunk !== source && allowedFile[index.chunkFile[chunk]] === 1;
  const candidates = Math.max(MIN_CANDIDATES, topK * 5);
  const dense = denseScores(index, index.vectors.subarray(source * index.dim, (source + 1) * index.dim));
  const denseRanked = [...dense.keys()]
    .filter(allowed)
    .sort((a, b) => dense[b] - dense[a] || a - b)
    .slice(0, candidates);

  const terms = distinctiveTerms(index, index.texts[source]);
  const lexical = scoreBm25(index.bm25, terms);
  const lexicalRanked = [...lexical.matched]
    .filter(allowed)
    .sort((a, b) => lexical.scores[b] - lexical.scores[a] || a - b)
    .slice(0, candidates);

  const denseFused = rrfScores(denseRanked);
  const lexicalFused = rrfScores(lexicalRanked);
  const scores = new Map<number, number>();
  for (const id of new Set([...denseRanked, ...lexicalRanked])) {
    scores.set(
      id,
      RELATED_DENSE_WEIGHT * (denseFused.get(id) ?? 0) +
        (1 - RELATED_DENSE_WEIGHT) * (lexicalFused.get(id) ?? 0),
    );
  }
  const ranked = selectTop(scores, (chunk) => index.files[index.chunkFile[chunk]].path, topK).map(
    ({ id, score }) => ({ chunk: id, score }),
  );
  return { source, ranked };
}

/** The tokens of a text with the fewest documents in the index (the most informative ones). */
function distinctiveTerms(index: CodeIndex, text: string): string[] {
  const frequency = (term: string) => {
    const t = index.bm25.termIds.get(term);
    return t === undefined ? Number.POSITIVE_INFINITY : index.bm25.offsets[t + 1] - index.bm25.offsets[t];
  };
  return [...new Set(tokenize(text))]
    .filter((term) => frequency(term) > 1)
    .sort((a, b) => frequency(a) - frequency(b))
    .slice(0, RELATED_QUERY_TERMS);
}
