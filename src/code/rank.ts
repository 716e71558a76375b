/**
 * Ranking: fuse the lexical and dense candidate lists, then rerank with what we know about code —
 * a chunk that defines the queried symbol, a file whose name or folder matches the query, files
 * that are tests, examples or vendored copies, and many hits from one file. Every constant says why
 * it has its value; docs/code-search.md has the development-set figures behind them.
 */
import { identifierParts, QUERY_STOPWORDS, stems } from "./tokens.ts";

/** Reciprocal-rank-fusion damping: the usual 60 keeps the top few ranks from dominating the sum. */
export const RRF_K = 60;
/** Candidates taken from each list before fusion, per requested result: recall for the reranker. */
export const CANDIDATES_PER_RESULT = 5;
/** Never fewer candidates than this per list, so a top-1 query still gets a real rerank. */
export const MIN_CANDIDATES = 50;
/** Weight of the dense list for a bare identifier query: exact tokens matter more than meaning. */
export const ALPHA_SYMBOL = 0.3;
/**
 * Weight of the dense list for a natural-language query. semble uses 0.5 with a 256-dimension code
 * model; our 64-dimension general model is weaker, and 0.4 measured best on the development set.
 */
export const ALPHA_NATURAL = 0.4;

/** A chunk that defines the queried symbol gets this many times the best fused score on top. */
export const DEFINITION_BOOST = 3;
/** A definition in a file named after the symbol (`router.go` for `Router`) is the canonical one. */
export const DEFINITION_STEM_FACTOR = 1.5;
/**
 * A camelCase symbol inside a sentence may be incidental, so its definition counts half; so does
 * the type definition named by a capitalised word of a sentence (`Column definition and types`).
 */
export const EMBEDDED_SYMBOL_FACTOR = 0.5;
/** Natural-language queries: this times the best score, times the share of query words a path matches. */
export const PATH_MATCH_BOOST = 1;
/**
 * A file whose stem is made only of query words (`Expression.kt`, `transfer.c`) is named for the
 * query's topic; one that merely contains one (`SQLExpressionBuilder.kt`, `curl_trc.h`) is about
 * something more specific. The first counts as one more matched query word.
 */
export const STEM_COVERED_BONUS = 1;
/** The best chunk of each file gains this share of the best score, scaled by the file's total. */
export const FILE_COHERENCE_SHARE = 0.2;

/** Tests, examples, docs code, compatibility shims and vendored copies: rarely the answer. */
export const STRONG_PATH_PENALTY = 0.3;
/**
 * Re-export barrels and package metadata (`__init__.py`, `package-info.java`). Rust's `mod.rs` and
 * JavaScript's `index.js` are not here: they often hold the main definitions (axum's `Router`).
 */
export const MODERATE_PATH_PENALTY = 0.5;
/** Type declaration stubs (`.d.ts`) still carry useful signatures. */
export const MILD_PATH_PENALTY = 0.7;
/**
 * A C header beside the `.c` file of the same name (`transfer.h` next to `transfer.c`) declares
 * what that file defines: the behaviour a question asks about is in the `.c`. Only C pairs: a C++
 * header (`str_cat.h` beside `str_cat.cc`) holds templates, inline code and the API's comments.
 */
export const C_DECLARATION_PENALTY = 0.5;

/** Hits from one file before later ones are decayed: the next results should show other files. */
export const FILE_SATURATION_THRESHOLD = 1;
/** Each further hit from the same file keeps this share of its score per extra hit. */
export const FILE_SATURATION_DECAY = 0.5;

const TEST_FILE =
  /(^|\/)(test_[^/]*\.py|[^/]*_test\.(py|go|rb|c|cc|cpp|h|hpp|lua|dart|exs?)|[^/]*_spec\.(rb|lua)|[^/]*\.(test|spec|bench)\.[cm]?[jt]sx?|[^/]*Tests?\.(java|kt|swift|cs|php|scala)|[^/]*(Spec|Suite)\.(kt|swift|scala)|[^/]*Benchmarks?\.(java|kt|cs|scala|swift)|[^/]*_(benchmark|bench)\.(c|cc|cpp|go|rs|py|zig)|test_[^/]*\.(c|cc|cpp|lua|dart)|test_helpers?[^/]*|conftest\.py)$/;
const TEST_DIR =
  /(^|\/)(tests?|__tests__|spec|specs|testing|testdata|test-data|test_helpers?|test_utils?|testutils?|fixtures|benchmarks?|benches)\//;
const EXAMPLE_DIR = /(^|\/)(_?examples?|samples?|demos?|docs?_src)\//;
const COMPAT_DIR = /(^|\/)(compat|_compat|legacy)\//;
const VENDOR_DIR = /(^|\/)(vendor|vendored|third_party|thirdparty|3rdparty|external|extern|single_include)\//;
const GENERATED_FILE = /(\.pb\.(go|cc|h)|_pb2\.py|\.generated\.\w+|\.g\.dart|\.min\.js)$/;
const REEXPORT_FILE = /(^|\/)(__init__\.py|package-info\.java)$/;
const TYPE_STUB = /\.d\.[cm]?ts$/;

/**
 * Multiplier for a file's chunks by what its path says it is; `hasFile` tells whether another path
 * is in the index (a C header's `.c` file).
 */
export function pathPenalty(path: string, hasFile?: (path: string) => boolean): number {
  let factor = 1;
  if (TEST_FILE.test(path) || TEST_DIR.test(path)) factor *= STRONG_PATH_PENALTY;
  if (EXAMPLE_DIR.test(path)) factor *= STRONG_PATH_PENALTY;
  if (COMPAT_DIR.test(path)) factor *= STRONG_PATH_PENALTY;
  if (VENDOR_DIR.test(path) || GENERATED_FILE.test(path)) factor *= STRONG_PATH_PENALTY;
  if (REEXPORT_FILE.test(path)) factor *= MODERATE_PATH_PENALTY;
  if (TYPE_STUB.test(path)) factor *= MILD_PATH_PENALTY;
  if (path.endsWith(".h") && hasFile?.(`${path.slice(0, -2)}.c`)) factor *= C_DECLARATION_PENALTY;
  return factor;
}

/**
 * A query that is one identifier: namespace-qualified (`Sinatra::Base`, `a.b`), underscored, or
 * with a capital anywhere (`HTTPAdapter`, `getUser`). A plain lower-case word (`session`) is
 * language, not a symbol.
 */
const SYMBOL_QUERY =
  /^(?:[A-Za-z_$][\w$]*(?:(?:::|\\|->|\.)[A-Za-z_$][\w$]*)+|_[\w$]*|[A-Za-z$][\w$]*[A-Z_][\w$]*|[A-Z][\w$]*)$/;
/** camelCase, PascalCase with an inner capital, or snake_case words inside a sentence. */
const EMBEDDED_SYMBOL =
  /\b(?:[A-Z][a-z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*|[a-z][a-z0-9]*[A-Z][A-Za-z0-9]+|[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+)\b/g;

export function isSymbolQuery(query: string): boolean {
  return SYMBOL_QUERY.test(query.trim());
}

/** `Sinatra::Base` → `Base`; `Client` → `Client`. */
export function symbolName(query: string): string {
  const parts = query.trim().split(/::|\\|->|\./);
  return parts[parts.length - 1];
}

/**
 * Capitalised words (`Column`, `Session`, `Monad`), the first one included: in a question about
 * code they often name a type. Only a type definition of that exact name counts for them
 * (definesType), which an English word rarely matches by chance.
 */
const CAPITALISED_WORD = /\b[A-Z][a-z][a-z0-9]*\b/g;

export function capitalisedWords(query: string): string[] {
  const words = new Set<string>();
  for (const [word] of query.matchAll(CAPITALISED_WORD))
    if (!QUERY_STOPWORDS.has(word.toLowerCase())) words.add(word);
  return [...words];
}

export function embeddedSymbols(query: string): string[] {
  return [...new Set(query.match(EMBEDDED_SYMBOL) ?? [])];
}

/** Keywords that introduce a definition, across the languages we index. */
const DEFINITION_KEYWORDS = [
  "class",
  "abstract class",
  "data class",
  "case class",
  "sealed class",
  "enum class",
  "module",
  "defmodule",
  "defprotocol",
  "defimpl",
  "def",
  "defp",
  "defmacro",
  "interface",
  "struct",
  "union",
  "enum",
  "trait",
  "impl",
  "type",
  "typedef",
  "typealias",
  "newtype",
  "data",
  "func",
  "function",
  "local function",
  "fn",
  "fun",
  "object",
  "protocol",
  "extension",
  "record",
  "namespace",
  "package",
  "macro_rules!",
  "#define",
  "const",
  "let",
  "var",
  "val",
  "alias",
  "using",
];
const KEYWORD_ALTERNATION = DEFINITION_KEYWORDS.map((k) => k.replace(/[.*+?^${}()|[\]\\!#]/g, "\\$&")).join(
  "|",
);
/** Words that start a statement which calls rather than defines. */
const NOT_A_TYPE = new Set([
  "return",
  "else",
  "new",
  "await",
  "throw",
  "case",
  "if",
  "while",
  "yield",
  "delete",
  "goto",
  "not",
  "and",
  "or",
]);

/**
 * Keywords that introduce a type, for words that name one (`Session`, `Column`) rather than a
 * function; the last word is enough for `data class`, `sealed class`, `enum class`, `case class`.
 */
const TYPE_KEYWORDS = new Set(
  "class interface struct union enum trait type typealias newtype data object protocol record defmodule defprotocol".split(
    " ",
  ),
);
/** The start of a line up to a defined name: a keyword, then qualifiers (`class ns::Name`, `object Outer.Name`). */
const KEYWORD_BEFORE_NAME = /(?:^|[\s(])([a-z]+)\s+(?:[A-Za-z_$][\w$]*(?:\.|::))*$/;
const USING_BEFORE_NAME = /(?:^|[\s(])using\s+$/;
const IDENTIFIER_CHAR = /[\w$]/;
const AFTER_TYPE_NAME = /[\s<({:[;=,]/;

/**
 * How far back from a name its keyword and qualifiers are looked for. Without a bound, a name on a
 * minified line (a 500 KB `dist/bundle.js`) made definesType quadratic: 3.5 s per query.
 */
const DEFINITION_PREFIX_CHARS = 256;

/** The text of `at`'s line before it, at most DEFINITION_PREFIX_CHARS of it, cut only at a blank. */
function lineBefore(text: string, at: number): string {
  const windowStart = Math.max(0, at - DEFINITION_PREFIX_CHARS);
  const window = text.slice(windowStart, at);
  const newline = window.lastIndexOf("\n");
  if (newline >= 0 || windowStart === 0) return window.slice(newline + 1);
  // Cut inside a long line: start at a blank, so half a word is never read as a keyword.
  const blank = window.search(/\s/);
  return blank < 0 ? "" : window.slice(blank);
}

/**
 * Whether `text` defines a type called `name`: `class Name`, `sealed class Name<T>`, `struct Name {`,
 * or a C++ alias `using Name = …` (not `using Name;`, a C# namespace import). It looks only at the
 * line before each occurrence of the name: a capitalised word is in most chunks of its repository.
 */
export function definesType(text: string, name: string): boolean {
  if (!name) return false;
  for (let at = text.indexOf(name); at >= 0; at = text.indexOf(name, at + name.length)) {
    const end = at + name.length;
    if (end < text.length && !AFTER_TYPE_NAME.test(text[end])) continue;
    if (at > 0 && IDENTIFIER_CHAR.test(text[at - 1])) continue;
    const before = lineBefore(text, at);
    const keyword = KEYWORD_BEFORE_NAME.exec(before);
    if (keyword && TYPE_KEYWORDS.has(keyword[1])) return true;
    if (USING_BEFORE_NAME.test(before) && /^\s*=/.test(text.slice(end, end + 16))) return true;
  }
  return false;
}

/** Type parameters, one level of nesting: `<T>`, `<T : Comparable<T>>`. */
const GENERICS = "<(?:[^<>\\n]|<[^<>\\n]*>)*>";
/**
 * What follows a name that a keyword introduces without defining it: `type Foo as Bar`, `type Foo,`
 * and `{ type Foo }` are TypeScript import/export specifiers; `impl Foo for Bar` implements Foo.
 */
const NOT_A_DEFINITION_AFTER = `(?![ \\t]*(?:${GENERICS})?[ \\t]+(?:as|for)\\b)(?![ \\t]*[,}])`;

const definitionPatterns = new Map<string, RegExp[]>();

/**
 * The lines of `text` that hold `name`, each with the line above it (a C return type or a keyword
 * may sit there); separate runs joined by a blank line. Every definition pattern needs no more, and
 * a name is on a few lines of a chunk, so the patterns run over a fraction of it.
 */
export function linesAround(text: string, name: string): string {
  const runs: string[] = [];
  let runStart = -1;
  let runEnd = -1;
  for (let at = text.indexOf(name); at >= 0; ) {
    const lineStart = text.lastIndexOf("\n", at - 1) + 1;
    const previousStart = lineStart > 0 ? text.lastIndexOf("\n", lineStart - 2) + 1 : 0;
    let lineEnd = text.indexOf("\n", at + name.length);
    if (lineEnd < 0) lineEnd = text.length;
    if (runStart >= 0 && previousStart <= runEnd + 1) runEnd = lineEnd;
    else {
      if (runStart >= 0) runs.push(text.slice(runStart, runEnd));
      runStart = previousStart;
      runEnd = lineEnd;
    }
    at = lineEnd < text.length ? text.indexOf(name, lineEnd) : -1;
  }
  if (runStart >= 0) runs.push(text.slice(runStart, runEnd));
  return runs.join("\n\n");
}

/**
 * Whether `text` defines `name`: after a definition keyword (with modifiers, type parameters, a Go
 * receiver `func (m *Mux) Name`, a namespace or a Kotlin/Swift receiver `fun <T> Column<T>.name`
 * allowed), as a C-family function definition (`Type Name(` on a line not ending in `;`, or the
 * GNU/BSD style with the return type on the line above: `static int\nname (void)`), as a
 * Haskell signature (`name ::`) or an assignment of a function or class (`Name = function`,
 * `M.name = function`).
 */
export function definesSymbol(chunk: string, name: string): boolean {
  if (!name || !chunk.includes(name)) return false;
  const text = linesAround(chunk, name);
  let patterns = definitionPatterns.get(name);
  if (!patterns) {
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const qualified = `(?:[A-Za-z_$][\\w$]*(?:${GENERICS})?\\??(?:\\.|::|#))*${escaped}`;
    patterns = [
      new RegExp(
        `(?:^|[\\s(])(?:${KEYWORD_ALTERNATION})\\s+(?:${GENERICS}\\s*)?(?:[*&]\\s*)?(?:\\([^()\\n]*\\)\\s*)?${qualified}(?=\\s|[<({:\\[;=,!?]|$)${NOT_A_DEFINITION_AFTER}`,
        "m",
      ),
      new RegExp(
        `^[ \\t]*((?:[\\w:<>*&\\[\\],.]+[ \\t]+)+)[*&]*(?:[A-Za-z_][\\w]*::)*${escaped}[ \\t]*\\([^;{]*(?:\\{|$)`,
        "gm",
      ),
      new RegExp(`^[ \\t]*${escaped}[ \\t]*::`, "m"),
      new RegExp(
        `^[ \\t]*(?:local[ \\t]+)?(?:[\\w.]+\\.)?${escaped}[ \\t]*=[ \\t]*(?:function|class|struct|\\(|async)`,
        "m",
      ),
      new RegExp(`^[ \\t]*${escaped}[ \\t]*\\(\\)[ \\t]*\\{`, "m"),
      new RegExp(
        `^[ \\t]*((?:[\\w:<>*&\\[\\],.]+[ \\t]+)*[\\w:<>*&\\[\\],.]+)[ \\t]*\\n[*&]*(?:[A-Za-z_][\\w]*::)*${escaped}[ \\t]*\\([^;{]*(?:\\{|$)`,
        "gm",
      ),
    ];
    if (definitionPatterns.size > 1000) definitionPatterns.clear();
    definitionPatterns.set(name, patterns);
  }
  if (patterns[0].test(text) || patterns[2].test(text) || patterns[3].test(text) || patterns[4].test(text))
    return true;
  for (const cFamily of [patterns[1], patterns[5]]) {
    cFamily.lastIndex = 0;
    for (let match = cFamily.exec(text); match; match = cFamily.exec(text)) {
      const firstWord = match[1].trim().split(/\s+/)[0];
      if (!NOT_A_TYPE.has(firstWord)) return true;
    }
  }
  return false;
}

/** Whether a file stem names the symbol: `router` for `Router`, `http_client` for `HttpClient`, plurals too. */
export function stemNamesSymbol(fileStem: string, symbol: string): boolean {
  // Cheap rejection first: this runs for every file of the repository on each symbol query.
  if (fileStem.length < symbol.length - 8 || fileStem.length > symbol.length + 8) return false;
  const lowerStem = fileStem.toLowerCase();
  const bare = lowerStem.replaceAll("_", "").replaceAll("-", "");
  const target = symbol.toLowerCase().replaceAll("_", "");
  return bare === target || bare.replace(/s$/, "") === target || lowerStem === symbol.toLowerCase();
}

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

/**
 * Whether every word of a file's stem matches a query keyword: the file is named for the query's
 * topic. A package's root file (`mod.rs`, `index.ts`, `__init__.py`, `init.lua`) is named by its folder.
 */
/** A package's root file, named by its folder: `middleware/mod.rs` is the `middleware` module. */
const MODULE_ROOT = /^(mod\.rs|index\.[cm]?[jt]sx?|__init__\.py|init\.lua)$/;

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

/** Reciprocal-rank scores of a ranked list of ids. */
export function rrfScores(ranked: number[]): Map<number, number> {
  const scores = new Map<number, number>();
  for (let i = 0; i < ranked.length; i++) scores.set(ranked[i], 1 / (RRF_K + i + 1));
  return scores;
}

/**
 * The top `k` ids by score after path penalties, decaying the score of each further hit from a
 * file already picked. Candidates are visited best first; once `k` are held, a candidate whose
 * undecayed score cannot beat the weakest held one ends the scan.
 */
export function selectTop(
  scores: Map<number, number>,
  fileOf: (id: number) => string,
  k: number,
  hasFile?: (path: string) => boolean,
): { id: number; score: number }[] {
  const penalty = new Map<string, number>();
  const penalised: { id: number; score: number; file: string }[] = [];
  for (const [id, score] of scores) {
    const file = fileOf(id);
    let factor = penalty.get(file);
    if (factor === undefined) penalty.set(file, (factor = pathPenalty(file, hasFile)));
    penalised.push({ id, score: score * factor, file });
  }
  penalised.sort((a, b) => b.score - a.score || a.id - b.id);
  const perFile = new Map<string, number>();
  const held: { id: number; score: number }[] = [];
  let weakest = Number.POSITIVE_INFINITY;
  for (const candidate of penalised) {
    if (held.length >= k && candidate.score <= weakest) break;
    const already = perFile.get(candidate.file) ?? 0;
    const excess = already - FILE_SATURATION_THRESHOLD + 1;
    const score = excess > 0 ? candidate.score * FILE_SATURATION_DECAY ** excess : candidate.score;
    held.push({ id: candidate.id, score });
    perFile.set(candidate.file, already + 1);
    if (held.length >= k) weakest = Math.min(...held.map((h) => h.score));
  }
  held.sort((a, b) => b.score - a.score || a.id - b.id);
  return held.slice(0, k);
}
