/**
 * Identifier-aware tokens for BM25 over code. `parseHTTPResponse` yields `parsehttpresponse`, `parse`,
 * `http`, `response`; `flat_hash_map` yields `flat_hash_map`, `flat`, `hash`, `map`. The whole
 * lower-cased form stays, so an exact identifier outranks documents that only share its parts, and
 * a light stem is added beside each word so `handlers` finds `handler`.
 */

const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_]*/g;
/** `HTTPServer` → HTTP, Server; `getX2` → get, X, 2; `parseJSON` → parse, JSON. */
const CAMEL_PART = /[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+/g;

/** Suffixes stripped to make a stem added beside the word; longest first so `ies` fires before `s`. */
const STEM_SUFFIXES: readonly (readonly [string, string])[] = [
  ["ations", "ate"],
  ["ation", "ate"],
  ["ings", ""],
  ["ing", ""],
  ["ies", "y"],
  ["ers", "er"],
  ["ed", ""],
  ["es", ""],
  ["s", ""],
];
/** Stems shorter than this over-match (`us` from `uses`), so short words keep only their own form. */
const MIN_STEM_LENGTH = 3;

/** Common English words that carry no meaning in a query (`how is the session stored`). */
export const QUERY_STOPWORDS = new Set(
  (
    "a an and are as at be by can do does for from has have how i if in into is it its of on or " +
    "should that the their then there these this to was what when where which who why will with " +
    "you your we our implement implemented implementation handle handled handling code function " +
    "functions method methods class classes logic used use uses using work works find"
  ).split(" "),
);

/**
 * Stems added beside a word. `-ed` and `-ing` also give the form with a final `e` back
 * (`parsed`, `parsing` → `pars`, `parse`), since the bare cut alone misses `parse`.
 */
export function stems(word: string): string[] {
  if (word.length <= 4) return [];
  for (const [suffix, replacement] of STEM_SUFFIXES) {
    if (!word.endsWith(suffix)) continue;
    const base = word.slice(0, word.length - suffix.length) + replacement;
    if (base.length < MIN_STEM_LENGTH || base === word) return [];
    return (suffix === "ed" || suffix === "ing") && !base.endsWith("e") ? [base, `${base}e`] : [base];
  }
  return [];
}

/** The parts of one identifier: snake_case pieces, each split again at camelCase boundaries. */
export function identifierParts(identifier: string): string[] {
  const parts: string[] = [];
  for (const piece of identifier.split("_")) {
    if (!piece) continue;
    const camel = piece.match(CAMEL_PART);
    if (camel) for (const part of camel) parts.push(part.toLowerCase());
  }
  return parts;
}

/** Expanded tokens of each identifier, memoised: identifiers repeat heavily across a repository. */
const expansions = new Map<string, readonly string[]>();
/** Bounds the memo on huge repositories; past it tokens are still expanded, only not remembered. */
const MAX_MEMO = 200_000;

function expand(identifier: string): readonly string[] {
  const known = expansions.get(identifier);
  if (known) return known;
  const whole = identifier.toLowerCase();
  const tokens = [whole];
  const parts = identifierParts(identifier);
  if (parts.length > 1) for (const part of parts) if (part.length > 1 && part !== whole) tokens.push(part);
  const count = tokens.length;
  for (let i = 0; i < count; i++)
    for (const stemmed of stems(tokens[i])) if (!tokens.includes(stemmed)) tokens.push(stemmed);
  const result = tokens.filter((t) => t.length > 1 && !/^_+$/.test(t));
  if (expansions.size < MAX_MEMO) expansions.set(identifier, result);
  return result;
}

/** All tokens of a text, in order, duplicates kept (term frequencies come from them). */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(IDENTIFIER)) for (const token of expand(match[0])) out.push(token);
  return out;
}

/**
 * BM25 terms as ids into one growing vocabulary, for the indexer: each distinct identifier is
 * expanded and its terms looked up once (embedder.ts scans the chunks), so no token strings are made.
 */
export class TermInterner {
  readonly terms: string[] = [];
  private readonly ids = new Map<string, number>();

  idOf(term: string): number {
    let id = this.ids.get(term);
    if (id === undefined) {
      id = this.terms.length;
      this.terms.push(term);
      this.ids.set(term, id);
    }
    return id;
  }

  /** The term ids of one identifier's tokens, in tokenize()'s order. */
  idsOf(identifier: string): Int32Array {
    return Int32Array.from(expand(identifier), (term) => this.idOf(term));
  }
}

/** The distinct tokens of a query, without English stopwords (kept when the query is nothing else). */
export function queryTokens(query: string): string[] {
  const all = [...new Set(tokenize(query))];
  const meaningful = all.filter((t) => !QUERY_STOPWORDS.has(t));
  return meaningful.length ? meaningful : all;
}

/** Tokens describing where a chunk lives: its file stem (twice: a strong hint) and up to 3 parent folders. */
export function pathTokens(relativePath: string): string[] {
  const segments = relativePath.split("/");
  const name = segments.pop() ?? "";
  const dot = name.indexOf(".", 1);
  const fileStem = dot > 0 ? name.slice(0, dot) : name;
  const folders = segments.slice(-3).join(" ");
  return tokenize(`${fileStem} ${fileStem} ${folders}`);
}
