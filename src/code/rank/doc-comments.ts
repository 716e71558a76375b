/**
 * Docstrings and comments weighted by where they sit: the comment block at the head of a chunk (the
 * chunker keeps a definition's leading comments with it) and a docstring right under its first
 * line say what that definition is for, unlike a comment deep inside a body. A sentence's candidates
 * gain a share of the best score by how much of the query's weight (IDF) those words hold.
 * docs/code-search.md has the figures behind the weight.
 */
import { inverseFrequency } from "../bm25.ts";
import type { CodeIndex } from "../store.ts";
import { queryTokens, tokenize } from "../tokens.ts";
import { tuned } from "./tuning.ts";

/** Share of the best score a candidate whose head comment holds all the query's weight gains (0: unused). */
const DOC_COMMENT_WEIGHT = 0;
/** Lines of a chunk's head read for its comment block. */
const HEAD_LINES = 16;

/** A line that is a comment, or a docstring's quotes, in the common languages. */
const COMMENT_LINE =
  /^\s*(\/\/|\/\*|\*|#(?!\s*(include|define|if|ifdef|ifndef|endif|else|elif|pragma|import)\b)|--|;;|"""|'''|\(\*|\{-|@doc|@moduledoc)/;
const DOCSTRING_QUOTES = /^\s*[rbuRBU]?("""|''')/;

/** The distinct terms of the comment lines at the head of a chunk and of a docstring under its first line. */
export function headCommentTerms(text: string): Set<string> {
  const lines = text.split("\n", HEAD_LINES);
  const kept: string[] = [];
  let at = 0;
  while (at < lines.length && (COMMENT_LINE.test(lines[at]) || !lines[at].trim())) kept.push(lines[at++]);
  // A docstring under the definition's line (Python, Elixir's @doc after the head).
  if (at < lines.length - 1 && DOCSTRING_QUOTES.test(lines[at + 1])) {
    const quotes = lines[at + 1].includes('"""') ? '"""' : "'''";
    for (let d = at + 1; d < lines.length; d++) {
      kept.push(lines[d]);
      if (d > at + 1 ? lines[d].includes(quotes) : lines[d].split(quotes).length > 2) break;
    }
  }
  return new Set(tokenize(kept.join("\n")));
}

/** Head-comment terms of each chunk, computed on first use per loaded index. */
const termsCache = new WeakMap<CodeIndex, (Set<string> | undefined)[]>();
function chunkHeadTerms(index: CodeIndex, chunk: number): Set<string> {
  let all = termsCache.get(index);
  if (!all) termsCache.set(index, (all = new Array(index.texts.length)));
  let terms = all[chunk];
  if (!terms) all[chunk] = terms = headCommentTerms(index.texts[chunk]);
  return terms;
}

/** For a sentence: each candidate + weight × best × the share of the query's IDF its head comment holds. */
export function boostByDocComments(index: CodeIndex, scores: Map<number, number>, text: string): void {
  const weight = tuned("docCommentWeight", DOC_COMMENT_WEIGHT);
  if (weight <= 0) return;
  const weighted: { term: string; idf: number }[] = [];
  let total = 0;
  for (const term of queryTokens(text)) {
    const id = index.bm25.termIds.get(term);
    if (id === undefined) continue;
    const idf = inverseFrequency(index.bm25, id);
    weighted.push({ term, idf });
    total += idf;
  }
  if (total === 0) return;
  let best = 0;
  for (const score of scores.values()) best = Math.max(best, score);
  for (const [chunk, score] of scores) {
    const head = chunkHeadTerms(index, chunk);
    if (!head.size) continue;
    let held = 0;
    for (const { term, idf } of weighted) if (head.has(term)) held += idf;
    if (held > 0) scores.set(chunk, score + (weight * best * held) / total);
  }
}
