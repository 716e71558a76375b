import {
  charClasses,
  decodesToPlaceholder,
  isCodeExpression,
  isDominatedByOneChar,
  isHostLike,
  isMostlySequential,
  isPlaceholder,
  isPlaceholderWord,
  isPlainIdentifier,
  isStandardUuid,
  isTemplate,
  isUuidShape,
  isWordLike,
  isWordSequence,
  looksRandom,
} from "./text.ts";
import {
  ATTACHED_COPULAS,
  continuedFamily,
  type Family,
  NAME_CONTINUATIONS,
  nameFamily,
  SPACED_COPULAS,
} from "./secret-names.ts";
import { findTriggers } from "./triggers.ts";
import type { Finding } from "./types.ts";

/**
 * Secrets given a name: `API_KEY=…`, `"password": "…"`, `--token …`, `<sentryToken>…</sentryToken>`,
 * `Authorization: Bearer …`, `if ("…" == password)`, `password is …`. A hand-written scanner rather than
 * one large regex: it finds trigger words, reads the whole identifier around each one once, then the
 * operator and the value after it. Each identifier is read once and every look-ahead is bounded, so the
 * scan is linear in the input.
 */

const MAX_NAME = 80;
const MAX_VALUE = 1000;
/** Values up to this long are re-read for names inside them when they are not secrets. */
const SHORT_VALUE = 64;

const FILE_EXTENSION_RE =
  /\.(?:[cm]?[jt]sx?|py|rb|go|rs|java|kt|swift|php|cs|cpp|c|h|json|ya?ml|toml|ini|cfg|conf|txt|md|html?|css|xml|lock|log|sh|pem|crt|cer|p12|pfx|jks|keystore)$/i;

/** Letters of the Latin (with accents), Greek and Cyrillic scripts beyond ASCII: `contraseña`, `пароль`. */
const isAccentedLetter = (c: number) =>
  c >= 0xc0 && ((c <= 0x24f && c !== 0xd7 && c !== 0xf7) || (c >= 0x370 && c <= 0x52f && c !== 0x37e));

const isNameChar = (c: number) =>
  (c >= 48 && c <= 57) ||
  (c >= 65 && c <= 90) ||
  (c >= 97 && c <= 122) ||
  c === 95 ||
  c === 45 ||
  c === 46 ||
  c === 36 ||
  isAccentedLetter(c);

const AUTH_SCHEMES =
  /^(?:bearer|basic|token|digest|ntlm|negotiate|bot|apikey|api-key|oauth|jwt|key|sso-key|hmac)$/i;
const OPERATORS = [":::=", "::=", ":=", "?=", ".=", "=>", "===", "!==", "==", "!=", "=", ":"];
/** PERF: the operators by their first character, in the order above (longest first). */
const OPERATORS_BY_FIRST = new Map<string, string[]>();
for (const o of OPERATORS) OPERATORS_BY_FIRST.set(o[0], [...(OPERATORS_BY_FIRST.get(o[0]) ?? []), o]);

interface Value {
  start: number;
  end: number;
  quoted: boolean;
  /** How far reading went, when further than `end` (an unclosed quote): the scan resumes there. */
  scanned?: number;
}

/**
 * Reads a quoted value starting at `p` (at its opening quote), or undefined when none starts there. A run
 * of backslashes before the quote (JSON-escaped once or twice) is part of the quote on both sides. A quote
 * left open to the end of the line still delimits a value: the line was cut.
 */
function readQuoted(text: string, p: number): Value | undefined {
  let open = "";
  const first = text.charCodeAt(p);
  if (first >= 0x80) {
    const closer = TYPOGRAPHIC_QUOTES[text[p]];
    return closer ? readTypographic(text, p + 1, closer) : undefined;
  }
  if (text.charCodeAt(p) === 38) {
    if (text.startsWith("&quot;", p)) open = "&quot;";
    else if (text.startsWith("&#34;", p)) open = "&#34;";
    else if (text.startsWith("&#39;", p)) open = "&#39;";
  } else {
    let k = p;
    while (text.charCodeAt(k) === 92 && k - p < 8) k++;
    const c = text.charCodeAt(k);
    if (c === 34 || c === 39 || c === 96) open = text.slice(p, k + 1);
  }
  if (!open) return undefined;
  const start = p + open.length;
  const limit = Math.min(text.length, start + MAX_VALUE);
  const quote = open[open.length - 1];
  let j = start;
  for (; j < limit; j++) {
    const c = text[j];
    if (c === "\n" && quote !== "`") break;
    if (open.length > 1) {
      if (text.startsWith(open, j)) return { start, end: j, quoted: true };
      continue;
    }
    if (c === "\\") {
      if (text[j + 1] === quote) return { start, end: j, quoted: true };
      j++;
      continue;
    }
    if (c === quote) return { start, end: j, quoted: true };
  }
  // Unclosed: the value runs to the end of the line, or to the first space.
  let end = start;
  while (end < j && !/\s/.test(text[end])) end++;
  return end - start >= 16 ? { start, end, quoted: true } : { start, end: start, quoted: true, scanned: j };
}

/** Quotes that close with another character: `«…»`, `„…“`, `「…」`. */
const TYPOGRAPHIC_QUOTES: Record<string, string> = {
  "“": "”",
  "„": "“",
  "«": "»",
  "「": "」",
  "『": "』",
  "‘": "’",
};

/** A value in typographic quotes, up to its closing quote on the same line; an empty one when unclosed. */
function readTypographic(text: string, start: number, closer: string): Value {
  const limit = Math.min(text.length, start + MAX_VALUE);
  const close = closer.charCodeAt(0);
  let j = start;
  for (; j < limit && text.charCodeAt(j) !== 10; j++)
    if (text.charCodeAt(j) === close) return { start, end: j, quoted: true };
  // Unclosed: no value, and the scan resumes past what was read (as for an unclosed ASCII quote).
  return { start, end: start, quoted: true, scanned: j };
}

// `&`, `#`, `!`, `%`, `@` are common inside a password, so they do not end a value; `&` ends one only in a
// URL query (see `readUnquoted`), as `&&` or as an HTML-escaped quote or bracket.
const UNQUOTED_STOP = new Set([" ", "\t", "\n", "\r", '"', "'", "`", ",", ";", "<", ">", "\\", "|"]);
const CLOSERS: Record<string, string> = { ")": "(", "]": "[", "}": "{" };
const isCloser = (c: number) => c === 41 || c === 93 || c === 125;
/** PERF: the stop characters by code (a `text[i]` builds a string for each non-ASCII character). */
const UNQUOTED_STOP_CODES = Uint8Array.from({ length: 128 }, (_, c) =>
  UNQUOTED_STOP.has(String.fromCharCode(c)) ? 1 : 0,
);
const isUnquotedStop = (c: number) => (c < 128 ? UNQUOTED_STOP_CODES[c] === 1 : c >= 0x3000);
/**
 * `&&` (shell), the HTML entities that close a value the way a quote or `<` would, and `&name=` (the next
 * parameter of a form body or query: `pass=true&next=/home`).
 */
const AMPERSAND_STOP_RE = /^&(?:&|quot;|#34;|#39;|apos;|lt;|gt;|[A-Za-z_][\w.[\]-]{0,40}=)/;

/**
 * Reads an unquoted value: up to whitespace or punctuation, dropping unbalanced closing brackets. In a URL
 * query (`?password=…&user=…`, `inQuery`) a `&` starts the next parameter, so it ends the value there.
 */
function readUnquoted(text: string, p: number, inQuery = false): Value | undefined {
  const limit = Math.min(text.length, p + MAX_VALUE);
  let end = p;
  // Chinese, Japanese and Korean text and full-width punctuation end a value: `…Pw4pQgwXJ43ANです`.
  for (; end < limit && !isUnquotedStop(text.charCodeAt(end)); end++) {
    if (text.charCodeAt(end) !== 38) continue;
    if (inQuery || AMPERSAND_STOP_RE.test(text.slice(end, end + 44))) break;
    // `<password>Tr0ub4dor&amp;3</password>`: an escaped `&` is one character of the value.
    if (text.startsWith("&amp;", end)) end += 4;
  }
  // `PASSWORD=… &`: a trailing `&` sends a shell command to the background.
  while (end > p && text.charCodeAt(end - 1) === 38) end--;
  // `f(secret=abc123)`: the `)` belongs to the code around the value, not to the value.
  while (end > p && isCloser(text.charCodeAt(end - 1))) {
    const close = text[end - 1];
    let opens = 0;
    let closes = 0;
    for (let j = p; j < end; j++) {
      if (text[j] === CLOSERS[close]) opens++;
      else if (text[j] === close) closes++;
    }
    if (closes <= opens) break;
    end--;
  }
  return end > p ? { start: p, end, quoted: false } : undefined;
}

const isWordChar = (c: number) =>
  (c >= 48 && c <= 57) ||
  (c >= 65 && c <= 90) ||
  (c >= 97 && c <= 122) ||
  c === 95 ||
  c === 45 ||
  isAccentedLetter(c);
const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || isAccentedLetter(c);

/**
 * The word (`[A-Za-z][\w-]*`) that ends one or two spaces or tabs before `p`, on the same line and within
 * 40 characters: `access` in `access key`. PERF: read backwards in place, no slice and no regex per name.
 */
function wordBeforeSpaces(text: string, p: number): string | undefined {
  // Neither loop below crosses a newline, so the line's start need not be looked for.
  const bound = Math.max(0, p - 40);
  let q = p;
  while (q > bound && p - q < 3 && (text.charCodeAt(q - 1) === 32 || text.charCodeAt(q - 1) === 9)) q--;
  if (q === p || p - q > 2) return undefined;
  let s = q;
  while (s > bound && isWordChar(text.charCodeAt(s - 1))) s--;
  // The word starts at the first letter of the run (the leftmost start the pattern would take).
  while (s < q && !isLetter(text.charCodeAt(s))) s++;
  return s < q ? text.slice(s, q) : undefined;
}

/** The start of the line holding `p`, looking back at most `max` characters. */
function lineStartWithin(text: string, p: number, max: number): number {
  let s = p;
  while (s > 0 && p - s < max && text.charCodeAt(s - 1) !== 10) s--;
  return s;
}

function skipSpaces(text: string, p: number, newlines = false): number {
  while (
    p < text.length &&
    (text.charCodeAt(p) === 32 ||
      text.charCodeAt(p) === 9 ||
      (newlines && (text.charCodeAt(p) === 10 || text.charCodeAt(p) === 13)))
  )
    p++;
  return p;
}

/** A balanced call anywhere in the value (`base64(email:password)`): code, not a literal. */
const CALL_RE = /[A-Za-z_]\w*\([^()]*\)/;
const PATH_RE = /^(?:\.{0,2}\/|~\/|[A-Za-z]:[\\/])/;
const ENV_NAME_RE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;
const REFERENCE_RE = /^[$%]\{?[A-Za-z_({]|^process\.env|^os\.environ|^ENV\[/;

type Operator = "assign" | "comma" | "prose" | "flag" | "bare" | "spaced" | "xml" | "compare";

/** Prefixes that a provider rule owns: when that rule rejected the token, a generic rule must not take it. */
const PROVIDER_PREFIX_RE =
  /^(?:xox[a-z]-|gh[pousr]_|github_pat_|gl(?:pat|ptt|rt|dt)-|AKIA|AIza|hf_|npm_|sk-ant-)/;

/** A word of letters only, in any script (with its marks and apostrophes). */
const FOREIGN_WORD_RE = /^[\p{L}\p{M}'’-]+$/u;
/** String interpolation is code: `"\\(key)[\\(nestedKey)]"` (Swift), `"#{x}"`, `"${x}"`, `"{x}"`. */
const INTERPOLATION_RE = /\\\(|#\{|\$\{|\{[A-Za-z_][\w.]*\}/;
/** Brackets, quotes and separators are code or a pattern (`"[A-Za-z0-9._~+/-]+=*"`), never in a key. */
const CODE_PUNCTUATION_RE = /[[\]{}()<>|\\"'`,;\s]/;

/**
 * A name with numbers in it (`X509Credential`, `Uint8Array`, `sha256Hash`, `base64url-encoded`): every run
 * of letters between the digits and separators is a word. A generated value breaks into pieces that are
 * not (`Kx91xLJjBict`: Kx, xLJjBict).
 */
function isNumberedName(value: string): boolean {
  if (!/^[A-Za-z_$][\w$.-]*$/.test(value)) return false;
  const runs = value.split(/[\d_.$-]+/).filter(Boolean);
  return runs.length > 0 && runs.every((run) => isWordLike(run));
}

/** A printf directive is code: `"%.*s4-HMAC-SHA256"`. */
const FORMAT_RE = /%[-+ #0]*(?:[1-9]\d*|\*)?(?:\.(?:\d+|\*))?[sdifxXucp]/;
/** Percent-encoding is text a person wrote for a URL (`secure%20password`), not a generated value. */
const PERCENT_ESCAPE_RE = /%[0-9A-Fa-f]{2}/;

/**
 * In code, a value that was generated: letters and digits, no space, no percent-escape, interpolation
 * or format directive, and random-looking (`looksRandom`). A committed credential is made by a machine;
 * a value a person wrote in a file is a doc example, a test fixture or code.
 */
function isGenerated(value: string, minLength: number): boolean {
  return (
    /\d/.test(value) &&
    !CODE_PUNCTUATION_RE.test(value) &&
    !isNumberedName(value) &&
    /[A-Za-z]/.test(value) &&
    !/\s/.test(value) &&
    !PERCENT_ESCAPE_RE.test(value) &&
    !INTERPOLATION_RE.test(value) &&
    !FORMAT_RE.test(value) &&
    looksRandom(value, minLength)
  );
}

/** In code, how long a generated value must be: a generated password may be shorter than a key. */
const CODE_MIN_LENGTH: Record<Family, number> = {
  password: 10,
  secret: 12,
  token: 12,
  auth: 12,
  pin: 12,
  weak: 12,
};

/** Whether the text at a value position is a secret, given the name's family and how it was written. */
export function acceptValue(
  value: string,
  family: Family,
  quoted: boolean,
  op: Operator,
  code = false,
): boolean {
  // `string):`, `token:`: trailing punctuation belongs to the code around the value.
  const core = value.replace(/[)\]}:;,.。、]+$/, "");
  if (core.length < 4) return false;
  if (isPlaceholder(value) || isTemplate(value) || isPlaceholderWord(core)) return false;
  // `PIN: 4821`, `暗証番号は 4821`: a PIN is a few digits; in code only generated values count.
  if (family === "pin") return !code && op !== "spaced" && op !== "comma" && /^\d{4,8}$/.test(core);
  // `Пароль: надёжный`: a word of another script, not a generated value.
  if (/[^\x00-\x7f]/.test(core) && FOREIGN_WORD_RE.test(core)) return false;
  if (REFERENCE_RE.test(value) || ENV_NAME_RE.test(core) || PROVIDER_PREFIX_RE.test(value)) return false;
  if (/^\d+$/.test(core)) return core.length >= 16;
  if (isUuidShape(core)) return !isStandardUuid(core) || family !== "weak";
  if (PATH_RE.test(value) || /^[a-z][a-z0-9+.-]*:\/\//i.test(value) || isHostLike(core)) return false;
  if (isMostlySequential(value) || isDominatedByOneChar(value) || decodesToPlaceholder(value)) return false;
  if (!quoted && (isCodeExpression(value) || CALL_RE.test(value) || /^[-{[(]/.test(value))) return false;
  // In code a committed credential is generated; a word (`password: "postgres"` in a doc example), prose
  // after "key is" and code syntax are not worth an altered line.
  if (code)
    return (
      op !== "prose" &&
      family !== "weak" &&
      isGenerated(value, op === "spaced" ? 16 : CODE_MIN_LENGTH[family])
    );
  // `token 4b9a6d…`, `bearer eyJ…`: with nothing but a space after the name, only a long generated string.
  if (op === "spaced") return looksRandom(value, 16) && value.length >= 16;
  const random = looksRandom(value, op === "prose" || op === "comma" ? 8 : 12);
  if (op === "prose" || op === "comma" || family === "weak") return random;
  if (/\s/.test(value)) return quoted && (family === "password" || family === "secret");
  if (quoted)
    return (
      value.length >= 6 && (family === "password" || !(isWordLike(value) || isWordSequence(value)) || random)
    );
  // Unquoted in code, a word sequence is a name (`jjwt-jackson-0.11`); a password may still be one.
  if (family !== "password" && isWordSequence(value)) return false;
  return value.length >= 6 && !isWordLike(value) && (charClasses(value) >= 2 || value.length >= 12);
}

function familyKind(family: Family): string {
  return family === "weak" ? "secret" : family;
}

/** Reads the operator at `p` after a name; returns the operator and the position of the value. */
function readOperator(
  text: string,
  p: number,
  ctx: {
    nameQuoted: boolean;
    isFlag: boolean;
    inTag: boolean;
    name: string;
    family: Family;
    /** Continuation words were read already. */
    continued?: boolean;
  },
): { op: Operator; at: number; list?: boolean; family?: Family } | undefined {
  let q = skipSpaces(text, p);
  // `clé API :`, `jeton d'accès :`, `비밀 키:`: words that belong to the name come before the operator.
  const continued = ctx.continued ? undefined : continuationWords(text, q);
  if (continued) {
    const family = continuedFamily(ctx.family, ctx.name, continued.words);
    const operator = readOperator(text, continued.end, { ...ctx, family, continued: true });
    return operator && { ...operator, family };
  }
  const c = text.charCodeAt(q);
  // Full-width `：` and `＝` (Chinese, Japanese, Korean); `密码是…`, `パスワードは…`, `비밀번호는…`.
  if (c === 0xff1a || c === 0xff1d) return { op: "assign", at: skipSpaces(text, q + 1) };
  if (c >= 0x3000 && q === p) {
    const copula = ATTACHED_COPULAS.find((w) => text.startsWith(w, q));
    if (copula) {
      const after = skipSpaces(text, q + copula.length);
      const colon = text.charCodeAt(after) === 58 || text.charCodeAt(after) === 65306;
      return { op: colon ? "assign" : "prose", at: skipSpaces(text, colon ? after + 1 : after) };
    }
  }
  if (q > p && c < 128 && /[A-Za-z_[*]/.test(text[q] ?? "")) {
    // A type between name and operator: `var token string = "…"`.
    const typed = /^(?:\[\]|\*)?[A-Za-z_][\w.]{0,30}(?:<[\w, ]{0,40}>)?\s*(?=:?=[^=])/.exec(
      text.slice(q, q + 80),
    );
    if (typed) q += typed[0].length;
  }
  for (const o of (text.charCodeAt(q) < 128 && OPERATORS_BY_FIRST.get(text[q])) || []) {
    if (!text.startsWith(o, q)) continue;
    if (o === ":" && (text.charCodeAt(q + 1) === 58 || text.charCodeAt(q + 1) === 47)) return undefined;
    if (o === "=" && text.charCodeAt(q + 1) === 126) return undefined;
    const op: Operator = o === "==" || o === "!=" || o === "===" || o === "!==" ? "compare" : "assign";
    return { op, at: skipSpaces(text, q + o.length) };
  }
  // `setProperty("API_TOKEN", "…")` reads as an assignment; `CURLOPT_PASSWORD, "…"` less surely so.
  if (text.charCodeAt(q) === 44) {
    if (ctx.nameQuoted) return { op: "assign", at: skipSpaces(text, q + 1), list: true };
    if (/^[A-Z][A-Z0-9_]+$/.test(ctx.name)) return { op: "comma", at: skipSpaces(text, q + 1) };
  }
  if (text.charCodeAt(q) === 62 && ctx.inTag) return { op: "xml", at: skipSpaces(text, q + 1, true) };
  if (text.charCodeAt(q) === 40 && /^["'`]/.test(text[q + 1] ?? "")) return { op: "assign", at: q + 1 };
  if (ctx.nameQuoted) {
    // `<add key="Password" value="…" />`
    const attr = /^\s+value\s*=\s*/.exec(text.slice(p, p + 30));
    if (attr) return { op: "assign", at: p + attr[0].length };
  }
  if (q > p) {
    // `password is …`, `Passwort lautet: …`, `contraseña es …`, `пароль — …`.
    const word = startsCopula(text.charCodeAt(q))
      ? /^([^\s:=]{1,6})(\s*:)?\s/.exec(text.slice(q, q + 9))
      : null;
    if (word && SPACED_COPULAS.has(word[1].toLowerCase()))
      return { op: word[2] ? "assign" : "prose", at: skipSpaces(text, q + word[0].length) };
    if (ctx.isFlag) return { op: "flag", at: q };
    // With nothing but a space between name and value, "pass" and "pwd" are more often a verb and a
    // shell command ("Pass `projectRoot` to …") than a password's name.
    if (ctx.family === "weak" || /^(?:pass|pwd)$/i.test(ctx.name)) return undefined;
    if (/^[bBuUrR@]?["'`]/.test(text.slice(q, q + 2))) return { op: "bare", at: q };
    return { op: "spaced", at: q };
  }
  return undefined;
}

/** The first characters of `words`, lower-cased, and their upper-case forms. */
const firstCodes = (words: Set<string>) =>
  new Set([...words].flatMap((w) => [w.charCodeAt(0), w.toUpperCase().charCodeAt(0)]));

/** The first characters of the spaced copulas, in both cases. */
let copulaStarts: Set<number> | undefined;
function startsCopula(c: number): boolean {
  copulaStarts ??= firstCodes(SPACED_COPULAS);
  return copulaStarts.has(c);
}

/** One word of up to 16 characters, up to an operator, a space or punctuation. */
const CONTINUATION_RE = /^[^\s:=：＝,;"()—–]{1,16}(?=[\s:=：＝,;"()—–]|$)/;

/** The first characters of the continuation words, lower-cased, and their upper-case forms. */
let continuationStarts: Set<number> | undefined;
function startsContinuation(c: number): boolean {
  continuationStarts ??= firstCodes(NAME_CONTINUATIONS);
  return continuationStarts.has(c);
}

/**
 * Up to two words at `q` that continue a name (`NAME_CONTINUATIONS`, or a Russian complement), and where
 * the last of them ends; undefined when none.
 */
function continuationWords(text: string, q: number): { words: string[]; end: number } | undefined {
  const first = text.charCodeAt(q);
  const cyrillic = (c: number) => c >= 0x400 && c <= 0x4ff;
  // PERF: most names are followed by an operator, a quote or a space; no word is read then.
  if (!cyrillic(first) && !startsContinuation(first)) return undefined;
  const words: string[] = [];
  let at = q;
  let end = q;
  while (words.length < 2) {
    const word = CONTINUATION_RE.exec(text.slice(at, at + 17))?.[0].toLowerCase();
    if (!word) break;
    // A Russian name's complement is a word of its own (`пароль администратора:`, `токен бота:`).
    const complement = cyrillic(word.charCodeAt(0)) && !SPACED_COPULAS.has(word);
    if (!complement && !NAME_CONTINUATIONS.has(word)) break;
    words.push(word);
    end = at + word.length;
    at = skipSpaces(text, end);
  }
  return words.length ? { words, end } : undefined;
}

/**
 * In code (`RedactOptions.mode`), a value that is a name the code uses rather than a literal: a list
 * element after a secret's name (`["password", "encoding"]`, `WS_KEY, HttpVersion`) or an unquoted
 * identifier (`HttpVersion`, `read_timeout`), when it holds no digit; and an unquoted pointer or call
 * (`struct passwd *decc_getpwuid(…)`: there `passwd` is a type) or member access (`key_passwd = conn->…`).
 */
function isCodeName(raw: string, quoted: boolean, op: Operator, list: boolean): boolean {
  if (isPlainIdentifier(raw)) {
    if (list || op === "comma" || op === "spaced") return true;
    // An all-lowercase word unquoted after `=` may still be a `.env` password; a case change, an
    // underscore, a member dot or an optional mark makes it an identifier.
    if (!quoted) return /_|[a-z][A-Z]|^[A-Z][a-z]|^\.|[?!]$/.test(raw);
    return false;
  }
  // `defaultToConfig2`: camelCase words with one trailing digit name a function or variable.
  if (!quoted && /^[a-z]+(?:[A-Z][a-z]+)+\d?$/.test(raw)) return true;
  // `*decc_getpwuid(uid_t`; `ssl_config-` is `ssl_config->…` cut at `>`.
  return !quoted && (/^[*&]|[()]/.test(raw) || /^[A-Za-z_]\w*-$/.test(raw));
}

/**
 * `lower` is `text` lower-cased (the same length): trigger words are searched there, unless `triggers`
 * holds them already (positions and lengths, as `findTriggers` gives them). `code`: the text is
 * a repository file (see `isCodeName`).
 */
export function findAssignments(
  text: string,
  lower: string,
  out: Finding[],
  code = false,
  triggers: number[] = findTriggers(lower),
): void {
  let resume = 0;
  for (let k = 0; k < triggers.length; k += 2) {
    const hit = triggers[k];
    if (hit < resume) continue;
    let s = hit;
    while (s > 0 && hit - s < MAX_NAME && isNameChar(text.charCodeAt(s - 1))) s--;
    let e = hit + triggers[k + 1];
    while (e < text.length && e - hit < MAX_NAME && isNameChar(text.charCodeAt(e))) e++;
    resume = Math.max(e, scanName(text, s, e, out, code));
  }
}

/** Judges the name at [start, end) and the value after it; returns where the scan may resume. */
function scanName(text: string, start: number, end: number, out: Finding[], code: boolean): number {
  const isFlag = text.charCodeAt(start) === 45 && /[-A-Za-z]/.test(text[start + 1] ?? "");
  while (end > start && (text.charCodeAt(end - 1) === 45 || text.charCodeAt(end - 1) === 46)) end--;
  let nameStart = start;
  while (
    nameStart < end &&
    (text.charCodeAt(nameStart) === 45 ||
      text.charCodeAt(nameStart) === 46 ||
      text.charCodeAt(nameStart) === 36)
  )
    nameStart++;
  if (nameStart === end) return end;
  const name = text.slice(nameStart, end);
  // `pkg/secret.py`, `"secret.ts": …`: a file, not a value's name.
  if (FILE_EXTENSION_RE.test(name)) return end;
  let family = nameFamily(name);
  // `mot de passe`: "passe" names a password only after "de".
  if (!family && /^passes?$/i.test(name) && text.charCodeAt(start - 1) === 32)
    family = nameFamily(name, wordBeforeSpaces(text, start));
  if (!family) return end;
  if (family === "weak" && (text.charCodeAt(start - 1) === 32 || text.charCodeAt(start - 1) === 9)) {
    // `access key: …`, `SECRET KEY: …`: the word before may make a key a secret.
    const previousWord = wordBeforeSpaces(text, start);
    if (previousWord) family = nameFamily(name, previousWord) ?? family;
  }

  let p = end;
  if (text.charCodeAt(p) === 91) {
    const idx = /^\[\d{0,4}\]/.exec(text.slice(p, p + 6));
    if (idx) p += idx[0].length;
  } else if (text.charCodeAt(p) === 41 && /^\)\s*[:=]/.test(text.slice(p, p + 4))) p++;
  const afterName = p;
  while (
    p < text.length &&
    p - afterName < 4 &&
    (text.charCodeAt(p) === 34 ||
      text.charCodeAt(p) === 39 ||
      text.charCodeAt(p) === 96 ||
      text.charCodeAt(p) === 92)
  )
    p++;
  if (text.startsWith("&quot;", p)) p += 6;
  // A name in quotes must be the whole quoted string (`"api_key": …`), not the end of a sentence in quotes.
  const before = text.charCodeAt(start - 1);
  const nameQuoted = p > afterName && (before === 34 || before === 39 || before === 96);
  const ctx = {
    nameQuoted,
    isFlag,
    inTag: text.charCodeAt(start - 1) === 60,
    name,
    family,
  };
  const operator = readOperator(text, p, ctx);
  if (operator?.family) family = operator.family;
  if (operator) {
    // `?user=me&password=…&next=…`: a URL query parameter ends at the next `&`.
    const inQuery = /(?:[?&]|&amp;)$/.test(text.slice(Math.max(0, start - 5), start));
    const read = readValueAt(
      text,
      operator.at,
      family,
      operator.op,
      out,
      inQuery,
      code && {
        list: operator.list === true,
      },
    );
    if (read?.found) return read.resume;
    // A looked-up value may still fall back to a literal default on the same line.
    const fallback = /[A-Za-z_$]/.test(text[operator.at] ?? "")
      ? readFallbackLiteral(text, operator.at, family, out, code)
      : undefined;
    return Math.max(end, read?.resume ?? end, fallback ?? end);
  }
  // `"literal" == password`: the value comes first.
  if (
    text.charCodeAt(start - 1) !== 32 &&
    text.charCodeAt(start - 1) !== 61 &&
    text.charCodeAt(start - 1) !== 9
  )
    return end;
  // Spaces and tabs never cross a line, so only the 320-character bound applies before `==` is seen.
  // PERF: the line's start is looked for only then.
  let q = start;
  while (q > Math.max(0, start - 320) && (text.charCodeAt(q - 1) === 32 || text.charCodeAt(q - 1) === 9)) q--;
  if (text.charCodeAt(q - 1) !== 61 || (text.charCodeAt(q - 2) !== 61 && text.charCodeAt(q - 2) !== 33))
    return end;
  const lineStart = lineStartWithin(text, start, 320);
  q -= 2;
  while (
    q > lineStart &&
    (text.charCodeAt(q - 1) === 61 ||
      text.charCodeAt(q - 1) === 33 ||
      text.charCodeAt(q - 1) === 32 ||
      text.charCodeAt(q - 1) === 9)
  )
    q--;
  const quote = text[q - 1];
  if (quote !== '"' && quote !== "'" && quote !== "`") return end;
  let open = q - 2;
  while (open >= lineStart && q - 1 - open <= 300 && text[open] !== quote) open--;
  if (open < lineStart || q - 1 - open > 300) return end;
  const literal = text.slice(open + 1, q - 1);
  if (acceptValue(literal, family, true, "compare", code))
    out.push({ start: open + 1, end: q - 1, kind: familyKind(family) });
  return end;
}

/**
 * `PASSWORD = os.environ.get("PASSWORD") or "hunter2"`, `SECRET := getenv("X", "s3cr3t")`: a secret
 * variable whose value is looked up, falling back to a literal written in the code. The literal is the
 * secret.
 */
function readFallbackLiteral(
  text: string,
  at: number,
  family: Family,
  out: Finding[],
  code: boolean,
): number | undefined {
  let lineEnd = at;
  while (lineEnd < text.length && lineEnd - at < 300 && text.charCodeAt(lineEnd) !== 10) lineEnd++;
  const line = text.slice(at, lineEnd);
  if (!/^[\w.$]*(?:getenv|environ|env|Getenv|GetEnvironmentVariable|config|settings|get)\b/i.test(line))
    return undefined;
  const fallback = /(?:,\s*|\bor\s+|\|\|\s*|\?\?\s*)(["'])([^"'\n]{4,200})\1\s*\)?\s*[:;,)]?\s*$/.exec(line);
  if (!fallback || !acceptValue(fallback[2], family, true, "assign", code)) return undefined;
  const start = at + fallback.index + fallback[0].indexOf(fallback[1]) + 1;
  out.push({ start, end: start + fallback[2].length, kind: familyKind(family) });
  return start + fallback[2].length;
}

/** Where the scan may resume after a value (the end of what was read), and whether it was a secret. */
interface ReadResult {
  resume: number;
  found: boolean;
}

/** Reads and judges the value at `at`; undefined when there is no value to read. */
function readValueAt(
  text: string,
  at: number,
  family: Family,
  op: Operator,
  out: Finding[],
  inQuery = false,
  code: false | { list: boolean } = false,
): ReadResult | undefined {
  let p = at;
  if ("bBuUrRfF@".includes(text[p] ?? "\n") && "\"'`".includes(text[p + 1] ?? "\n")) p++;
  let value = readQuoted(text, p) ?? (op === "bare" ? undefined : readUnquoted(text, p, inQuery));
  if (!value) return undefined;
  // PERF: a long value is read once; trigger words inside it are not read again as names. A short one
  // may be a name itself (`key="Password" value="…"`), and re-reading it costs a bounded amount.
  const readTo = Math.max(value.end, value.scanned ?? 0);
  const scanned = { resume: readTo - at > SHORT_VALUE ? readTo : at, found: false };
  if (value.end === value.start) return scanned;
  let raw = text.slice(value.start, value.end);
  // `Authorization: Bearer <token>`: the scheme is not the secret, the credential after it is.
  if (family === "auth" || op === "xml") {
    const scheme = /^([A-Za-z][\w-]*)\s+/.exec(raw);
    if (scheme && AUTH_SCHEMES.test(scheme[1])) {
      value = { ...value, start: value.start + scheme[0].length };
      raw = raw.slice(scheme[0].length);
    } else if (!value.quoted && AUTH_SCHEMES.test(raw)) {
      const next =
        readQuoted(text, skipSpaces(text, value.end)) ??
        readUnquoted(text, skipSpaces(text, value.end), inQuery);
      if (!next) return scanned;
      value = next;
      raw = text.slice(next.start, next.end);
    }
  }
  if (op === "xml") raw = raw.replace(/\s+$/, "");
  // A backtick value with a space in it is shell command substitution: `etcdctl get /secret`.
  if (text.charCodeAt(value.start - 1) === 96 && /\s/.test(raw)) return scanned;
  if (code && isCodeName(raw, value.quoted, op, code.list)) return scanned;
  if (!acceptValue(raw, family, value.quoted, op, code !== false)) return scanned;
  out.push({ start: value.start, end: value.start + raw.length, kind: familyKind(family) });
  return { resume: Math.max(scanned.resume, value.end), found: true };
}
