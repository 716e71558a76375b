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
 * The path words of a set of files (an index's), made once: each distinct word, the files that hold
 * it, and the words by their first three letters. A query's keywords then find the words they match
 * (a shared prefix is 3+ letters, so only words starting as a keyword does can share one) and mark
 * those words' files; a candidate's file is one lookup. Reading each candidate's words instead (a
 * few scattered objects a file, cold after the dense scan) cost a 100k-chunk query ~0.15 ms.
 */
export interface PathWordTable {
  paths: string[];
  vocabulary: string[];
  /** The files whose pathWords hold each word, ascending. */
  filesOf: number[][];
  /** Word ids by their first three letters (words of three letters or more). */
  byHead: Map<string, number[]>;
  ids: Map<string, number>;
  /** A file's stemWordForms, on first use. */
  stemForms: (string[][] | undefined)[];
}

export function pathWordTable(paths: string[]): PathWordTable {
  const table: PathWordTable = {
    paths,
    vocabulary: [],
    filesOf: [],
    byHead: new Map(),
    ids: new Map(),
    stemForms: new Array(paths.length),
  };
  for (let file = 0; file < paths.length; file++) {
    for (const word of pathWords(paths[file])) {
      let id = table.ids.get(word);
      if (id === undefined) {
        id = table.vocabulary.length;
        table.ids.set(word, id);
        table.vocabulary.push(word);
        table.filesOf.push([]);
        if (word.length >= 3) {
          const head = word.slice(0, 3);
          const words = table.byHead.get(head);
          if (words) words.push(id);
          else table.byHead.set(head, [id]);
        }
      }
      table.filesOf[id].push(file);
    }
  }
  return table;
}

/**
 * For one query's keywords, a file's keywordOverlap with its pathWords and whether coveredBy holds
 * for its stemWordForms: the same answers.
 */
export function pathKeywordMatcher(
  table: PathWordTable,
  keywords: Set<string>,
): { overlap: (file: number) => number; covered: (file: number) => boolean } {
  const covered = (file: number) =>
    coveredBy(keywords, (table.stemForms[file] ??= stemWordForms(table.paths[file])));
  const list = [...keywords];
  if (list.length > 31)
    return { overlap: (file) => keywordOverlap(keywords, pathWords(table.paths[file])), covered };
  // The keywords (a bit each) every matched word's files hold.
  const fileBits = new Map<number, number>();
  const mark = (id: number, bit: number) => {
    for (const file of table.filesOf[id]) fileBits.set(file, (fileBits.get(file) ?? 0) | bit);
  };
  for (let k = 0; k < list.length; k++) {
    const keyword = list[k];
    const same = table.ids.get(keyword);
    if (same !== undefined) mark(same, 1 << k);
    if (keyword.length < 3) continue;
    for (const id of table.byHead.get(keyword.slice(0, 3)) ?? [])
      if (id !== same && sharesPrefix(keyword, table.vocabulary[id])) mark(id, 1 << k);
  }
  return {
    overlap: (file) => {
      let mask = fileBits.get(file) ?? 0;
      let count = 0;
      for (; mask; mask &= mask - 1) count++;
      return count;
    },
    covered,
  };
}
