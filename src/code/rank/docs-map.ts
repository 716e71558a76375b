/**
 * The repository's own prose as a map from concepts to files: a sentence's best-matching README or
 * docs chunks are read for the names of source files and folders they mention (`the router lives
 * in mux.go`, "see `lib/transfer.c`"), and candidates in those files gain a share of the best
 * score. docs/code-search.md has the figures behind the weight.
 */
import { scoreBm25 } from "../bm25.ts";
import type { CodeIndex } from "../store.ts";
import { queryTokens } from "../tokens.ts";
import { tuned } from "./tuning.ts";

/** Share of the best score a candidate in a file the docs name gains (0: unused). */
const DOCS_MAP_WEIGHT = 0;
/** The best prose chunks read: the few that are about the query's topic. */
const DOCS_CHUNKS = 5;
/** Shorter names (`io`, `db`, `app`) are words of prose, not references to a file. */
const MIN_NAME_LENGTH = 4;
/** A name shared by more files than this (`index`, `utils`) points nowhere in particular. */
const MAX_FILES_PER_NAME = 3;

const fold = (word: string) => word.toLowerCase().replace(/[_-]/g, "");

/** Code files by their folded stem and by their folder's folded name, built once per loaded index. */
const namesCache = new WeakMap<CodeIndex, Map<string, number[]>>();
function codeFileNames(index: CodeIndex): Map<string, number[]> {
  let names = namesCache.get(index);
  if (names) return names;
  names = new Map();
  const add = (key: string, f: number) => {
    if (key.length < MIN_NAME_LENGTH) return;
    const list = names!.get(key);
    if (!list) names!.set(key, [f]);
    else if (!list.includes(f)) list.push(f);
  };
  index.files.forEach((file, f) => {
    if (file.kind !== "code") return;
    const parts = file.path.split("/");
    const name = parts.pop() ?? "";
    const dot = name.indexOf(".", 1);
    add(fold(dot > 0 ? name.slice(0, dot) : name), f);
  });
  namesCache.set(index, names);
  return names;
}

/** Code files the best prose chunks for `text` name, with the share of those chunks that name each. */
export function filesNamedByDocs(index: CodeIndex, text: string): Map<number, number> {
  const named = new Map<number, number>();
  const terms = queryTokens(text);
  if (!terms.length) return named;
  const lexical = scoreBm25(index.bm25, terms);
  const prose: number[] = [];
  for (const chunk of lexical.matched)
    if (index.files[index.chunkFile[chunk]].kind === "docs") prose.push(chunk);
  if (!prose.length) return named;
  prose.sort((a, b) => lexical.scores[b] - lexical.scores[a] || a - b);
  const names = codeFileNames(index);
  const read = prose.slice(0, DOCS_CHUNKS);
  for (const chunk of read) {
    const seen = new Set<number>();
    for (const word of index.texts[chunk].match(/[A-Za-z_][\w-]*/g) ?? []) {
      const files = names.get(fold(word));
      if (!files || files.length > MAX_FILES_PER_NAME) continue;
      for (const f of files) seen.add(f);
    }
    for (const f of seen) named.set(f, (named.get(f) ?? 0) + 1 / read.length);
  }
  return named;
}

/** For a sentence: candidates in files the matching prose names gain weight × best × share. */
export function boostByDocs(index: CodeIndex, scores: Map<number, number>, text: string): void {
  const weight = tuned("docsMapWeight", DOCS_MAP_WEIGHT);
  if (weight <= 0) return;
  const named = filesNamedByDocs(index, text);
  if (!named.size) return;
  let best = 0;
  for (const score of scores.values()) best = Math.max(best, score);
  for (const [chunk, score] of scores) {
    const share = named.get(index.chunkFile[chunk]);
    if (share) scores.set(chunk, score + weight * best * share);
  }
}
