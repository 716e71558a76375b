/**
 * Boosts: what we know about code, added on top of the fused scores — the chunk that defines the
 * queried symbol (its type, for a capitalised word of a sentence), files whose name or folder shares
 * the query's words, and files with several good chunks. Each constant says why it has its value;
 * docs/code-search.md has the development-set figures behind them.
 */
import type { CodeIndex } from "../store.ts";
import {
  capitalisedWords,
  definesSymbol,
  definesType,
  embeddedSymbols,
  stemNamesSymbol,
  symbolName,
} from "./definitions.ts";
import { maxOf, type QueryKind } from "./fusion.ts";
import { type PathWordTable, pathKeywordMatcher, pathWordTable, queryKeywords } from "./path-words.ts";
import { tuned } from "./tuning.ts";

/**
 * A chunk that defines the queried symbol gets this many times the best fused score on top. 2, not
 * the earlier 3: every leave-one-repository-out fold of code-cv chooses 2, and on code-localise it
 * lifts MRR (a definition far ahead pushed the files that use it, often the answer, down).
 */
const DEFINITION_BOOST = 2;
/** A definition in a file named after the symbol (`router.go` for `Router`) is the canonical one. */
const DEFINITION_STEM_FACTOR = 1.5;
/**
 * A camelCase symbol inside a sentence may be incidental, so its definition counts half; so does
 * the type definition named by a capitalised word of a sentence (`Column definition and types`).
 */
const EMBEDDED_SYMBOL_FACTOR = 0.5;
/** Natural-language queries: this times the best score, times the share of query words a path matches. */
const PATH_MATCH_BOOST = 1;
/**
 * A file whose stem is made only of query words (`Expression.kt`, `transfer.c`) is named for the
 * query's topic; one that merely contains one (`SQLExpressionBuilder.kt`, `curl_trc.h`) is about
 * something more specific. The first counts as one more matched query word.
 */
const STEM_COVERED_BONUS = 1;
/** The best chunk of each file gains this share of the best score, scaled by the file's total. */
const FILE_COHERENCE_SHARE = 0.2;
/**
 * The same share for a question (`how are persistent flags inherited`): a question asks about a
 * subsystem more often than a phrase does, and its answer is the file holding most of the
 * candidates. 0.4 for every query lifted architecture questions and cost the exactly named small
 * files of semantic ones (code-cv LOO 0.877); for questions alone every fold chooses 0.4.
 */
const FILE_COHERENCE_QUESTION = 0.4;

/**
 * Adds every boost a query earns to `scores` (chunk → fused score): file coherence (its share by the
 * query's kind, fusion.ts queryKind), then for an identifier query the definitions of that symbol, for
 * a sentence its path matches and the definitions of the symbols and capitalised words inside it.
 */
export function rerank(
  index: CodeIndex,
  scores: Map<number, number>,
  text: string,
  kind: QueryKind,
  isAllowed: (chunk: number) => boolean,
): void {
  boostFileCoherence(index, scores, kind);
  if (kind === "identifier")
    boostDefinitions(index, scores, [symbolName(text), text], 1, isAllowed, undefined, definesSymbol, true);
  else {
    boostPathMatches(index, scores, text);
    const embedded = embeddedSymbols(text);
    const capitalised = capitalisedWords(text).filter((w) => !embedded.includes(w));
    const best = maxOf(scores);
    if (embedded.length) boostDefinitions(index, scores, embedded, EMBEDDED_SYMBOL_FACTOR, isAllowed, best);
    if (capitalised.length)
      boostDefinitions(index, scores, capitalised, EMBEDDED_SYMBOL_FACTOR, isAllowed, best, definesType);
  }
}

/**
 * A file's name up to its first dot (`stem`: `SqlMapper` for `SqlMapper.Async.cs`) and up to its
 * last (`base`: `SqlMapper.Async`). They differ for a part of something larger — a C# partial
 * class file, `user.test.ts` — which the stem finds but only the whole name (`SqlMapper.cs`) owns.
 */
interface FileNames {
  stems: string[];
  bases: string[];
}

/** File names of an index, computed once per loaded index (every symbol query scans them). */
const namesCache = new WeakMap<CodeIndex, FileNames>();
function fileNames(index: CodeIndex): FileNames {
  let names = namesCache.get(index);
  if (!names) {
    names = { stems: [], bases: [] };
    for (const file of index.files) {
      const name = file.path.slice(file.path.lastIndexOf("/") + 1);
      const first = name.indexOf(".", 1);
      const last = name.lastIndexOf(".");
      names.stems.push(first > 0 ? name.slice(0, first) : name);
      names.bases.push(last > 0 ? name.slice(0, last) : name);
    }
    namesCache.set(index, names);
  }
  return names;
}

/**
 * Files by the keys stemNamesSymbol compares, once per loaded index: the stem lower-cased, and
 * without `_`/`-` (with and without a final `s`). A sentence names a dozen words, each of which
 * used to be compared with every file's stem: 10 ms a query on a 2,000-file checkout.
 */
interface StemKeys {
  /** `httpclient` (and `httpclient` for `http_clients`) → files. */
  bare: Map<string, number[]>;
  /** `http_client` → files. */
  lower: Map<string, number[]>;
}

const stemKeysCache = new WeakMap<CodeIndex, StemKeys>();
function stemKeys(index: CodeIndex): StemKeys {
  let keys = stemKeysCache.get(index);
  if (!keys) {
    keys = { bare: new Map(), lower: new Map() };
    const add = (map: Map<string, number[]>, key: string, file: number) => {
      const files = map.get(key);
      if (!files) map.set(key, [file]);
      else if (files[files.length - 1] !== file) files.push(file);
    };
    const { stems } = fileNames(index);
    for (let f = 0; f < stems.length; f++) {
      const lower = stems[f].toLowerCase();
      const bare = lower.replaceAll("_", "").replaceAll("-", "");
      add(keys.bare, bare, f);
      add(keys.bare, bare.replace(/s$/, ""), f);
      add(keys.lower, lower, f);
    }
    stemKeysCache.set(index, keys);
  }
  return keys;
}

/** The files whose stem names one of `names` (stemNamesSymbol), ascending. */
function filesNamedBy(index: CodeIndex, names: string[]): number[] {
  const { bare, lower } = stemKeys(index);
  const { stems } = fileNames(index);
  const found = new Set<number>();
  for (const name of names) {
    const lowerName = name.toLowerCase();
    for (const files of [bare.get(lowerName.replaceAll("_", "")), lower.get(lowerName)])
      for (const f of files ?? []) if (stemNamesSymbol(stems[f], name)) found.add(f);
  }
  return [...found].sort((a, b) => a - b);
}

/** The files' path words (pathWordTable), one table per loaded index, made by its first sentence or prepareIndex. */
const pathTables = new WeakMap<CodeIndex, PathWordTable>();
export function pathTable(index: CodeIndex): PathWordTable {
  let table = pathTables.get(index);
  if (!table) pathTables.set(index, (table = pathWordTable(index.files.map((f) => f.path))));
  return table;
}

/** The best chunk of each file gains a share of the best score, in proportion to the file's total. */
function boostFileCoherence(index: CodeIndex, scores: Map<number, number>, kind: QueryKind): void {
  const base = tuned("fileCoherenceShare", FILE_COHERENCE_SHARE);
  const share =
    maxOf(scores) * (kind === "question" ? tuned("fileCoherenceQuestion", FILE_COHERENCE_QUESTION) : base);
  if (share === 0) return;
  const fileTotal = new Map<number, number>();
  const fileBest = new Map<number, number>();
  for (const [chunk, score] of scores) {
    const file = index.chunkFile[chunk];
    fileTotal.set(file, (fileTotal.get(file) ?? 0) + score);
    const best = fileBest.get(file);
    if (best === undefined || score > (scores.get(best) ?? 0)) fileBest.set(file, chunk);
  }
  let maxTotal = 0;
  for (const total of fileTotal.values()) maxTotal = Math.max(maxTotal, total);
  for (const [file, chunk] of fileBest) {
    scores.set(chunk, (scores.get(chunk) ?? 0) + (share * (fileTotal.get(file) ?? 0)) / maxTotal);
  }
}

/**
 * Chunks that define one of `names` (by `defines`) gain DEFINITION_BOOST × `best` × `factor`
 * (× DEFINITION_STEM_FACTOR in a file named after the symbol). Files named after the symbol are scanned even when none of
 * their chunks was a candidate: the definition of a rare symbol may use none of the query's words.
 * With `everyHolder` (an identifier query) every chunk holding a capitalised name's term is tested
 * for a type definition of it (definesType: one pass over the name's occurrences, not the six
 * patterns): a type used in hundreds of chunks (a `Visitor` trait) left its definition outside the
 * 5 × k candidates, so whether it was found depended on k (first at k = 12, absent at k = 10).
 */
function boostDefinitions(
  index: CodeIndex,
  scores: Map<number, number>,
  names: string[],
  factor: number,
  isAllowed: (chunk: number) => boolean,
  best = maxOf(scores),
  defines: (text: string, name: string) => boolean = definesSymbol,
  everyHolder = false,
): void {
  const unit = best * tuned("definitionBoost", DEFINITION_BOOST) * factor;
  if (unit === 0) return;
  const { bases } = fileNames(index);
  // A type named `Column` is defined only where `Column` is a whole identifier, so its chunk's
  // postings hold `column`: a binary search there spares reading every chunk of every file
  // named like one of a long message's capitalised words (15,000 texts a query on a 118k-chunk checkout).
  // definesSymbol's patterns likewise allow no identifier character on either side of the name, so
  // a chunk defining a name made of identifier characters holds its lower-cased term: the same
  // search rules out the other candidates without reading their texts (the embedded symbols of a
  // sentence, tested against every candidate's text, were 0.08 ms of a query at 100k chunks).
  // Undefined: no term to look for (a name with other characters), the text decides alone.
  const termOf = names.map((name) =>
    defines === definesType || WHOLE_IDENTIFIER.test(name)
      ? (index.bm25.termIds.get(name.toLowerCase()) ?? -1)
      : undefined,
  );
  const mayDefine = (i: number, chunk: number) => {
    const term = termOf[i];
    return term === undefined || (term >= 0 && holdsTerm(index, term, chunk));
  };
  /** The gain of a chunk defining one of `named`: more in a file named after one of them. */
  const gainIn = (chunk: number, named: string[]): number => {
    const base = bases[index.chunkFile[chunk]];
    return named.some((name) => stemNamesSymbol(base, name)) ? unit * DEFINITION_STEM_FACTOR : unit;
  };
  const tier = (chunk: number): number => {
    const text = index.texts[chunk];
    const found = names.some((name, i) => mayDefine(i, chunk) && defines(text, name));
    return found ? gainIn(chunk, names) : 0;
  };
  for (const [chunk, score] of scores) {
    const gain = tier(chunk);
    if (gain) scores.set(chunk, score + gain);
  }
  for (const f of filesNamedBy(index, names)) {
    const file = index.files[f];
    for (let c = file.firstChunk; c < file.firstChunk + file.chunkCount; c++) {
      if (scores.has(c) || !isAllowed(c)) continue;
      const gain = tier(c);
      if (gain) scores.set(c, gain);
    }
  }
  if (!everyHolder) return;
  const types = names.filter((name) => /^[A-Z]/.test(name) && WHOLE_IDENTIFIER.test(name));
  if (!types.length) return;
  const { offsets, docs } = index.bm25;
  for (const term of new Set(termOf)) {
    if (term === undefined || term < 0) continue;
    for (let p = offsets[term]; p < offsets[term + 1]; p++) {
      const c = docs[p];
      if (scores.has(c) || !isAllowed(c)) continue;
      const text = index.texts[c];
      if (types.some((name) => definesType(text, name))) scores.set(c, gainIn(c, types));
    }
  }
}

/**
 * A name the indexer keeps as one term when it is a whole identifier in a chunk: identifier
 * characters, not starting with a digit (the indexer drops a run's leading digits), two or more of
 * them and not only underscores (shorter terms and `__` are not kept).
 */
export const WHOLE_IDENTIFIER = /^(?=_*[A-Za-z0-9])[A-Za-z_][A-Za-z0-9_]+$/;

/** Whether chunk `chunk`'s postings hold term `term` (its run of chunks is ascending). */
function holdsTerm(index: CodeIndex, term: number, chunk: number): boolean {
  const { offsets, docs } = index.bm25;
  let low = offsets[term];
  let high = offsets[term + 1];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (docs[middle] < chunk) low = middle + 1;
    else high = middle;
  }
  return low < offsets[term + 1] && docs[low] === chunk;
}

/**
 * Natural-language queries: files whose name or folder shares the query's words move up, and a file
 * named entirely by them (`transfer.c` for "data sent during a transfer") by one match more.
 */
function boostPathMatches(index: CodeIndex, scores: Map<number, number>, query: string): void {
  const keywords = queryKeywords(query);
  if (!keywords.size) return;
  const boost = maxOf(scores) * tuned("pathMatchBoost", PATH_MATCH_BOOST);
  const { overlap, covered } = pathKeywordMatcher(pathTable(index), keywords);
  // A file's matches (its stem-covered bonus included), once per file of the query's candidates.
  const fileMatches = new Map<number, number>();
  for (const [chunk, score] of scores) {
    const file = index.chunkFile[chunk];
    let matches = fileMatches.get(file);
    if (matches === undefined) {
      matches = overlap(file);
      if (matches && covered(file)) matches += STEM_COVERED_BONUS;
      fileMatches.set(file, matches);
    }
    if (matches) scores.set(chunk, score + (boost * matches) / keywords.size);
  }
}
