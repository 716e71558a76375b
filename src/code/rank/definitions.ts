/**
 * Definition detection: whether a query names a symbol, and whether a chunk defines it (a keyword
 * before the name, a C-family function, a Haskell signature, an assignment of a function or class)
 * or defines a type of that name. The patterns run only over the lines that hold the name.
 */
import { QUERY_STOPWORDS } from "../tokens.ts";

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
/**
 * What KEYWORD_BEFORE_NAME or USING_BEFORE_NAME needs somewhere in the line: a type keyword (or
 * `using`) and a blank after it. One pass without backtracking rules most occurrences out (a long
 * message's capitalised words occur often, and the anchored patterns retry at every position).
 */
const TYPE_KEYWORD_SOMEWHERE =
  /(?:class|interface|struct|union|enum|trait|type|typealias|newtype|data|object|protocol|record|defmodule|defprotocol|using)\s/;
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
    if (!TYPE_KEYWORD_SOMEWHERE.test(before)) continue;
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
