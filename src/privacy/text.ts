/**
 * Small, dependency-free predicates on candidate values: entropy, character classes, and the tests that
 * tell a real secret from a placeholder, a template reference or a piece of code. Every function here is
 * linear in the length of its input and allocates little: they run on the Stop-hook path.
 */

// PERF: one reusable table of ASCII counts, and c·log2(c) precomputed, since these run for every
// candidate value.
const asciiCounts = new Int32Array(128);
// Built on first use, not at import: filling it costs ~1 ms of start-up in a compiled binary.
let C_LOG_C: Float64Array | undefined;
function cLogC(c: number): number {
  if (!C_LOG_C) {
    C_LOG_C = new Float64Array(1025);
    for (let i = 1; i < C_LOG_C.length; i++) C_LOG_C[i] = i * Math.log2(i);
  }
  return c < C_LOG_C.length ? C_LOG_C[c] : c * Math.log2(c);
}

/** Shannon entropy in bits per character: log2(n) − Σ c·log2(c) / n over the character counts. */
export function entropy(value: string): number {
  const n = value.length;
  if (!n) return 0;
  let other: Map<string, number> | undefined;
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c < 128) asciiCounts[c]++;
    else (other ??= new Map()).set(value[i], (other.get(value[i]) ?? 0) + 1);
  }
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c < 128 && asciiCounts[c]) {
      sum += cLogC(asciiCounts[c]);
      asciiCounts[c] = 0;
    }
  }
  if (other) for (const count of other.values()) sum += cLogC(count);
  return Math.log2(n) - sum / n;
}

/** The count of the most frequent character (UTF-16 code unit). */
function mostFrequentCount(value: string): number {
  // PERF: ASCII is counted in the shared table (reset before returning), a Map only for the rest.
  let other: Map<number, number> | undefined;
  let most = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    let k: number;
    if (c < 128) k = ++asciiCounts[c];
    else {
      other ??= new Map();
      k = (other.get(c) ?? 0) + 1;
      other.set(c, k);
    }
    if (k > most) most = k;
  }
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 128) asciiCounts[c] = 0;
  }
  return most;
}

/** How many of the classes lower, upper, digit, other a value uses. */
export function charClasses(value: string): number {
  let lower = 0;
  let upper = 0;
  let digit = 0;
  let other = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 97 && c <= 122) lower = 1;
    else if (c >= 65 && c <= 90) upper = 1;
    else if (c >= 48 && c <= 57) digit = 1;
    else other = 1;
  }
  return lower + upper + digit + other;
}

export const REDACTION_PREFIX = "[REDACTED:";

/** The marker that replaces a finding. */
export function marker(kind: string): string {
  return `${REDACTION_PREFIX}${kind}]`;
}

/**
 * True when a body is one character, or one short unit, repeated (`AAAA…`, `FakeFakeFake…`, `1231231…`):
 * documentation fills key formats this way. A real key never repeats a unit across its whole length.
 */
export function isRepeatedUnit(body: string): boolean {
  const s = body.replace(/[-_.]/g, "");
  if (s.length < 6) return false;
  for (let unit = 1; unit <= 4; unit++) {
    if (s.length < unit * 3) break;
    let ok = true;
    for (let i = unit; i < s.length && ok; i++) if (s[i] !== s[i % unit]) ok = false;
    if (ok) return true;
  }
  return false;
}

// Markers of documentation placeholders. Matched case-insensitively except EXAMPLE (see below).
const PLACEHOLDER_RE =
  /x{4,}|\*{3,}|#{3,}|•{2,}|\.{3}|…|<[^<>\n]{1,60}>|your[_-]?(?:api|key|secret|token|pass|user|own|access|app|client|account)|change[_-]?me|replace[_-]?(?:me|with|this)|placeholder|redacted|dummy|fake(?!r)|sample[_-]?(?:key|token|secret|value)|not[_-]?a[_-]?real|notreal|insert[_-]?your|put[_-]?your|enter[_-]?your|\bexample\b|_here\b|here_/i;

/**
 * A documentation placeholder rather than a value: runs of x / * / #, `<token>`, `your_api_key`,
 * `changeme`, `dummy`, a value already redacted, or AWS's convention of putting EXAMPLE in sample keys.
 */
export function isPlaceholder(value: string): boolean {
  if (value.includes(REDACTION_PREFIX)) return true;
  if (value.includes("EXAMPLE")) return true;
  return PLACEHOLDER_RE.test(value);
}

// `${VAR}`, `${VAR:-default}`, `${{ env.X }}`, `{{ .Values.x }}`, `$(cmd)`, `%VAR%`, `$VAR`, `#{x}`, `{VAR}`:
// the value is computed elsewhere. Each form must be complete: `m{{h}o)p${e]…` is not a template.
const TEMPLATE_RE =
  /\$\{\{\s*[\w.-]{1,80}\s*\}\}|\$\{[A-Za-z_][\w.-]{0,80}(?::?[-=?+][^{}\n]{0,80})?\}|\{\{[^{}\n]{1,80}\}\}|\$\([^()\n]{1,80}\)|%[A-Za-z_][A-Za-z0-9_]{1,40}%|^\$[A-Za-z_][A-Za-z0-9_]*$|^\$\d$|#\{[^{}\n]{1,80}\}|^\{[A-Za-z_][A-Za-z0-9_.]{0,40}\}$|^\[[A-Z_]{3,40}\]$/;

/** A template or variable reference (`${DB_PASSWORD}`, `{{ .Values.password }}`, `$API_KEY`). */
export function isTemplate(value: string): boolean {
  return TEMPLATE_RE.test(value);
}

// Words that stand for a value in docs, schemas and code: `password: string`, `token = "token"`.
const PLACEHOLDER_WORDS = new Set([
  "password",
  "passwd",
  "pass",
  "pwd",
  "secret",
  "token",
  "key",
  "apikey",
  "api_key",
  "value",
  "string",
  "str",
  "text",
  "int",
  "number",
  "bool",
  "boolean",
  "any",
  "object",
  "null",
  "none",
  "nil",
  "undefined",
  "true",
  "false",
  "test",
  "testing",
  "example",
  "sample",
  "changeme",
  "required",
  "optional",
  "empty",
  "default",
  "username",
  "user",
  "admin",
  "root",
  "guest",
  "demo",
  "foo",
  "bar",
  "baz",
  "qux",
  "abc",
  "abcd",
  "xyz",
  "hunter2",
  "yyy",
  "zzz",
  "mypassword",
  "mysecret",
  "mytoken",
  "bytes",
  "buffer",
  "uuid",
]);

const LONGEST_PLACEHOLDER_WORD = Math.max(...[...PLACEHOLDER_WORDS].map((w) => w.length));

export function isPlaceholderWord(value: string): boolean {
  if (value.length > LONGEST_PLACEHOLDER_WORD) return false;
  if (PLACEHOLDER_WORDS.has(value)) return true;
  // PERF: lower-case (a new string) only a value that has something to lower: this runs for every value.
  // The words are ASCII, so a value with a character that does not lower-case to ASCII (only the Kelvin
  // sign among non-ASCII ones does) is none of them: Cyrillic and CJK values skip the lower-casing.
  let upper = false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 128 && c !== 0x212a) return false;
    if ((c >= 65 && c <= 90) || c >= 128) upper = true;
  }
  return upper && PLACEHOLDER_WORDS.has(value.toLowerCase());
}

/**
 * Mostly ascending runs such as `abcdefgh…` or `12345678` (test fixtures, alphabets): runs of 8 or more
 * cover two thirds of the value or more.
 */
export function isMostlySequential(value: string): boolean {
  let covered = 0;
  let length = 1;
  for (let i = 1; i <= value.length; i++) {
    if (i < value.length && value.charCodeAt(i) - value.charCodeAt(i - 1) === 1) {
      length++;
      continue;
    }
    if (length >= 8) covered += length;
    length = 1;
  }
  return value.length >= 8 && covered * 3 >= value.length * 2;
}

const CASE_STYLE_RE = /^(?:[a-z]+|[A-Z][a-z]+|[A-Z]+)$/;

/** Splits `APIOrganizationExist` into API, Organization, Exist and `snake_case` at the underscores. */
function wordParts(value: string): string[] {
  return value
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[ _]+/)
    .filter(Boolean);
}

/** Short parts that names are made of (`getApiKeyById`, `toJson`, `isOk`). */
const SHORT_WORDS = new Set([
  "a",
  "i",
  "x",
  "y",
  "z",
  "v",
  "by",
  "id",
  "to",
  "of",
  "in",
  "on",
  "at",
  "is",
  "or",
  "ok",
  "db",
  "io",
  "ui",
  "os",
  "js",
  "ts",
  "fs",
  "up",
  "no",
  "my",
  "me",
  "we",
  "it",
  "if",
  "do",
  "go",
  "as",
  "an",
  "be",
  "pr",
  "qa",
  "ci",
  "cd",
]);

/**
 * Looks like a name a person wrote (`envToken`, `SecretKeySelector`, `APIOrganizationExist`,
 * `DEFAULT_VALUE`, `incorrect`): letters only, split by case or underscores into parts that are words
 * (three letters or more, with a vowel), acronyms, or common short words. Generated strings break into
 * pieces like `Kj`, `Ly`, `RQC`+`Ynge` that are none of these.
 */
export function isWordLike(value: string): boolean {
  if (!/^[A-Za-z_]+$/.test(value)) return false;
  const parts = wordParts(value);
  if (!parts.length) return false;
  let odd = 0;
  for (const p of parts) {
    if (!CASE_STYLE_RE.test(p)) return false;
    if (SHORT_WORDS.has(p.toLowerCase()) || (p.length >= 3 && /[aeiouy]/i.test(p)) || /^[A-Z]{2,5}$/.test(p))
      continue;
    // `OAuth`, `AiModel`: one odd short piece among three or more proper ones is still a name.
    if (p.length > 2) return false;
    odd++;
  }
  return odd === 0 || (odd === 1 && parts.length >= 3);
}

/** A code expression rather than a literal: `var.db_password`, `X25519.key_length`, `foo(bar)`, `a[b]`. */
export function isCodeExpression(value: string): boolean {
  const chain = /^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)*(?=$|\?\.|\[|\()/.exec(value);
  if (chain && (chain[0].length < value.length || chain[0].includes("."))) {
    // A dotted chain counts as code only when no segment looks generated (`sat.k7gvx8whhq…`).
    return chain[0].split(/\??\./).every((s) => !looksRandom(s, 16));
  }
  return (
    /^(?:new|await|function|lambda|this|self|return)\b/.test(value) ||
    /^!(?:\d|[a-z_][\w.]*$)|^[&|=<>]/.test(value)
  );
}

/** A host name or dotted Java-style identifier (`5h.ca.iphmx.com`, `org.slf4j.slf4j-api`). */
export function isHostLike(value: string): boolean {
  return /^(?:[a-z0-9-]+\.)+[a-z]{2,12}(?::\d+)?(?:\/\S*)?$/.test(value);
}

const WORD_PART_RE =
  /^(?:[A-Za-z][a-z]*(?:[A-Z][a-z]*)*\d{0,6}|[A-Z]+\d{0,6}|[a-z]{1,3}\d{1,3}|\d{1,3}[a-z]{1,3}|v\d{1,3}(?:alpha|beta|rc)\d{0,3}|\d{1,8})$/;

/**
 * Made of words and small numbers joined by separators (`jetbrains.mps.v8_elimination`, `DOC_Vector_5_32`,
 * `id-Gost28147-89-None`): names and versions, not keys.
 */
export function isWordSequence(value: string): boolean {
  const parts = value.split(/[._\-\s/:@+]+/).filter(Boolean);
  return parts.length > 1 && parts.every((p) => WORD_PART_RE.test(p));
}

/** One character fills half the value or more (`AIzaaaaaaaaaaaa…`, `glc_1111…`). */
export function isDominatedByOneChar(value: string): boolean {
  return value.length >= 8 && mostFrequentCount(value) * 2 >= value.length;
}

/** A base64 value whose decoded text is a placeholder (`ZHVtbXkgdGV4dA==` is "dummy text"). */
export function decodesToPlaceholder(value: string): boolean {
  if (value.length < 12 || value.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return false;
  // Text encodes to base64 with many lower-case letters from a small set; skip values that cannot be text.
  if (!/[a-z]/.test(value)) return false;
  // PERF: the shape was checked above (length a multiple of 4, padding only at the end), so atob cannot
  // throw, and it gives the bytes as a latin1 string without a Buffer.
  const decoded = atob(value);
  return /^[\x20-\x7e]+$/.test(decoded) && isPlaceholder(decoded);
}

/**
 * Looks generated: long enough, at least two character classes, no dominant single class of words, and an
 * entropy above what prose reaches at that length. The thresholds are those of gitleaks' generic rule
 * (3.5 bits for 16+ characters), relaxed for shorter values that mix three classes.
 */
export function looksRandom(value: string, minLength = 12): boolean {
  if (value.length < minLength) return false;
  if (isWordLike(value) || isWordSequence(value) || isRepeatedUnit(value)) return false;
  const classes = charClasses(value);
  if (classes < 2) return /^[a-z0-9]+$/.test(value) ? false : value.length >= 20 && entropy(value) >= 3.5;
  const bits = entropy(value);
  if (value.length >= 16) return bits >= 3.2;
  return classes >= 3 ? bits >= 2.8 : bits >= 3.0;
}

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function isUuidShape(value: string): boolean {
  return UUID_RE.test(value);
}

/** An RFC 9562 UUID: version nibble 1–8 and variant 10xx. The nil and max UUIDs count as well. */
export function isStandardUuid(value: string): boolean {
  if (!UUID_RE.test(value)) return false;
  const v = value[14];
  const variant = value[19].toLowerCase();
  if (/^[0-]+$/.test(value) || /^[fF-]+$/.test(value)) return true;
  return v >= "1" && v <= "8" && "89ab".includes(variant);
}

/**
 * A name as code writes it: `encoding`, `HttpVersion`, `read_timeout`, with an optional member dot
 * (`.useDefaultKeys`) or optional-type mark (`URLCredential?`). Letters and underscores only: a generated
 * secret almost always holds a digit.
 */
export function isPlainIdentifier(value: string): boolean {
  return /^[.$]?[A-Za-z_]+[?!]?$/.test(value);
}
