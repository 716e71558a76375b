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
