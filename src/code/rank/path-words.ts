/**
 * Path-word matching: the words of a natural-language query against the words of a file's stem and
 * folder (`transfer.c`, `middleware/mod.rs`), a shared prefix of 3+ letters counting as a match.
 */
import { identifierParts, QUERY_STOPWORDS, stems } from "../tokens.ts";

/** The meaningful words of a natural-language query, with their stems, for matching file paths. */
export function queryKeywords(query: string): Set<string> {
  const words = new Set<string>();
  for (const word of query.match(/[A-Za-z][A-Za-z0-9_]*/g) ?? []) {
    const lower = word.toLowerCase();
    if (lower.length <= 2 || QUERY_STOPWORDS.has(lower)) continue;
    words.add(lower);
    for (const part of identifierParts(word))
      if (part.length > 2 && !QUERY_STOPWORDS.has(part)) words.add(part);
  }
  return words;
}

/** Words of a path's file stem and parent folder. */
export function pathWords(path: string): Set<string> {
  const segments = path.split("/");
  const name = segments.pop() ?? "";
  const fileStem = name.includes(".")
    ? name.slice(0, name.indexOf(".", 1) > 0 ? name.indexOf(".", 1) : undefined)
    : name;
  const words = new Set<string>();
  for (const piece of [fileStem, segments[segments.length - 1] ?? ""]) {
    for (const part of identifierParts(piece.replaceAll("-", "_"))) {
      words.add(part);
      for (const stemmed of stems(part)) words.add(stemmed);
    }
  }
  return words;
}

/** A package's root file, named by its folder: `middleware/mod.rs` is the `middleware` module. */
const MODULE_ROOT = /^(mod\.rs|index\.[cm]?[jt]sx?|__init__\.py|init\.lua)$/;

/**
 * Whether every word of a file's stem matches a query keyword: the file is named for the query's
 * topic. A package's root file (`mod.rs`, `index.ts`, `__init__.py`, `init.lua`) is named by its folder.
 */
export function stemCovered(keywords: Set<string>, path: string): boolean {
  return coveredBy(keywords, stemWordForms(path));
}

/** Each word of a file's stem (its folder's for a package root) with its light stems. */
export function stemWordForms(path: string): string[][] {
  const slash = path.lastIndexOf("/");
  let name = path.slice(slash + 1);
  if (slash > 0 && MODULE_ROOT.test(name)) name = path.slice(path.lastIndexOf("/", slash - 1) + 1, slash);
  const dot = name.indexOf(".", 1);
  return identifierParts((dot > 0 ? name.slice(0, dot) : name).replaceAll("-", "_")).map((part) => [
    part,
    ...stems(part),
  ]);
}

/** Whether every stem word (one of its forms) matches a query keyword. */
export function coveredBy(keywords: Set<string>, forms: string[][]): boolean {
  if (!forms.length) return false;
  return forms.every((wordForms) =>
    wordForms.some((form) => {
      if (keywords.has(form)) return true;
      for (const keyword of keywords) if (sharesPrefix(keyword, form)) return true;
      return false;
    }),
  );
}

/** Whether the shorter of two words (3+ letters) starts the longer. */
function sharesPrefix(a: string, b: string): boolean {
  return a.length <= b.length ? a.length >= 3 && b.startsWith(a) : b.length >= 3 && a.startsWith(b);
}

/** How many query keywords a path's words match, a shared prefix of 3+ letters counting as a match. */
export function keywordOverlap(keywords: Set<string>, words: Set<string>): number {
  let matches = 0;
  for (const keyword of keywords) {
    if (words.has(keyword)) {
      matches++;
      continue;
    }
    for (const word of words) {
      if (sharesPrefix(keyword, word)) {
        matches++;
        break;
      }
    }
  }
  return matches;
}

/**
 * The path words of a set of files (an index's), as ids of one vocabulary, each file's made on first
 * use: a query's path matching then compares each distinct word with its keywords once and reads the
 * rest from typed arrays. Comparing strings per candidate (Set iteration, hashing, the prefix test
 * against every keyword) cost a loaded 10k-chunk index ~0.1 ms a query, a fifth of it.
 */
export interface PathWordTable {
  paths: string[];
  ids: Map<string, number>;
  vocabulary: string[];
  /** A file's pathWords as ids. */
  words: (Int32Array | undefined)[];
  /** A file's stemWordForms: for each stem word its number of forms, then their ids. */
  stemForms: (Int32Array | undefined)[];
  /** The keywords a word matches (a bit each), valid where `stamp` holds the current `generation`. */
  bits: Int32Array;
  stamp: Int32Array;
  generation: number;
}

export function pathWordTable(paths: string[]): PathWordTable {
  return {
    paths,
    ids: new Map(),
    vocabulary: [],
    words: new Array(paths.length),
    stemForms: new Array(paths.length),
    bits: new Int32Array(64),
    stamp: new Int32Array(64),
    generation: 0,
  };
}

function wordId(table: PathWordTable, word: string): number {
  let id = table.ids.get(word);
  if (id === undefined) {
    id = table.vocabulary.length;
    table.ids.set(word, id);
    table.vocabulary.push(word);
    if (id >= table.bits.length) {
      const bits = new Int32Array(table.bits.length * 2);
      bits.set(table.bits);
      const stamp = new Int32Array(table.stamp.length * 2);
      stamp.set(table.stamp);
      table.bits = bits;
      table.stamp = stamp;
    }
  }
  return id;
}

/**
 * For one query's keywords, a file's keywordOverlap with its pathWords and whether coveredBy holds
 * for its stemWordForms: the same answers, the words compared once per query.
 */
export function pathKeywordMatcher(
  table: PathWordTable,
  keywords: Set<string>,
): { overlap: (file: number) => number; covered: (file: number) => boolean } {
  const list = [...keywords];
  if (list.length > 31)
    return {
      overlap: (file) => keywordOverlap(keywords, pathWords(table.paths[file])),
      covered: (file) => coveredBy(keywords, stemWordForms(table.paths[file])),
    };
  const generation = ++table.generation;
  const bitsOf = (id: number): number => {
    if (table.stamp[id] === generation) return table.bits[id];
    const word = table.vocabulary[id];
    let bits = 0;
    for (let k = 0; k < list.length; k++) if (list[k] === word || sharesPrefix(list[k], word)) bits |= 1 << k;
    table.bits[id] = bits;
    table.stamp[id] = generation;
    return bits;
  };
  return {
    overlap: (file) => {
      let ids = table.words[file];
      if (!ids)
        table.words[file] = ids = Int32Array.from(pathWords(table.paths[file]), (w) => wordId(table, w));
      let mask = 0;
      for (let i = 0; i < ids.length; i++) mask |= bitsOf(ids[i]);
      let count = 0;
      for (; mask; mask &= mask - 1) count++;
      return count;
    },
    // coveredBy: every stem word has a form equal to a keyword or sharing a prefix with one, which is
    // a form whose bits are not 0.
    covered: (file) => {
      let groups = table.stemForms[file];
      if (!groups) {
        const flat: number[] = [];
        for (const forms of stemWordForms(table.paths[file]))
          flat.push(forms.length, ...forms.map((f) => wordId(table, f)));
        table.stemForms[file] = groups = Int32Array.from(flat);
      }
      if (!groups.length) return false;
      for (let at = 0; at < groups.length; ) {
        const end = at + 1 + groups[at];
        let found = false;
        for (let i = at + 1; i < end && !found; i++) found = bitsOf(groups[i]) !== 0;
        if (!found) return false;
        at = end;
      }
      return true;
    },
  };
}
