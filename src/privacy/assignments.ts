import {
  charClasses,
  decodesToPlaceholder,
  isCodeExpression,
  isDominatedByOneChar,
  isMostlySequential,
  isHostLike,
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

type Family = "password" | "secret" | "token" | "auth" | "weak";

const EXACT: Record<string, Family> = {
  password: "password",
  passwd: "password",
  pwd: "password",
  pw: "password",
  pass: "password",
  passw: "password",
  pswd: "password",
  pword: "password",
  passphrase: "password",
  passcode: "password",
  secret: "secret",
  secrete: "secret",
  token: "token",
  apikey: "secret",
  credential: "secret",
  credentials: "secret",
  cred: "secret",
  creds: "secret",
  privatekey: "secret",
  secretkey: "secret",
  accesskey: "secret",
  bearer: "auth",
  auth: "auth",
  authorization: "auth",
  authentication: "auth",
  authtoken: "token",
  api: "weak",
  key: "weak",
  salt: "weak",
  nonce: "weak",
  cookie: "weak",
  login: "weak",
  otp: "weak",
  seed: "weak",
  mnemonic: "weak",
};
/** Compound words that end in a trigger: `userpwd`, `accesstoken`, `softlayerapikey`, `1passwordtoken`. */
const SUFFIXES: [string, Family][] = [
  ["password", "password"],
  ["passwd", "password"],
  ["passphrase", "password"],
  ["pwd", "password"],
  ["pswd", "password"],
  ["secret", "secret"],
  ["apikey", "secret"],
  ["credential", "secret"],
  ["token", "token"],
];
/**
 * `rootpass`, `dbpass`, `smtppass`: "pass" ends a password's name only after one of these, because many
 * English words end in it too (`bypass`, `compass`, `surpass`, `overpass`, `trespass`).
 */
const PASS_OWNERS = new Set([
  "root",
  "admin",
  "user",
  "db",
  "sql",
  "mysql",
  "pg",
  "postgres",
  "redis",
  "mongo",
  "smtp",
  "mail",
  "imap",
  "pop",
  "ftp",
  "sftp",
  "ssh",
  "vnc",
  "rdp",
  "ldap",
  "proxy",
  "wifi",
  "wlan",
  "master",
  "sudo",
  "login",
  "account",
  "app",
  "api",
  "web",
  "server",
  "keystore",
  "truststore",
  "store",
  "key",
]);

/** `api key`, `private_key`, `access key`: a key that is a secret rather than a dictionary key. */
const KEY_QUALIFIERS = new Set([
  "api",
  "private",
  "access",
  "secret",
  "master",
  "encryption",
  "signing",
  "license",
  "app",
  "client",
  "account",
  "auth",
  "service",
  "storage",
  "subscription",
  "hmac",
  "shared",
  "consumer",
  "admin",
  "ingest",
  "write",
  "deploy",
  "ssh",
  "gpg",
  "pgp",
  "aes",
  "rsa",
  "root",
  "security",
  "session",
  "crypto",
  "cipher",
  "server",
  "iam",
  "cloud",
]);
/** The name describes a secret rather than holding one: `token_url`, `password_file`, `kms_key_id`. */
const DESCRIPTORS = new Set([
  "id",
  "ids",
  "name",
  "names",
  "type",
  "types",
  "kind",
  "file",
  "files",
  "filename",
  "path",
  "paths",
  "dir",
  "url",
  "uri",
  "urls",
  "endpoint",
  "host",
  "length",
  "len",
  "size",
  "count",
  "prompt",
  "label",
  "placeholder",
  "hint",
  "message",
  "msg",
  "field",
  "fields",
  "header",
  "headers",
  "format",
  "pattern",
  "regex",
  "policy",
  "rule",
  "rules",
  "mode",
  "version",
  "expiry",
  "expires",
  "expiration",
  "ttl",
  "timeout",
  "enabled",
  "required",
  "min",
  "max",
  "prefix",
  "suffix",
  "selector",
  "ref",
  "refs",
  "template",
  "error",
  "errors",
  "description",
  "desc",
  "help",
  "title",
  "column",
  "table",
  "param",
  "params",
  "index",
  "event",
  "action",
  "status",
  "state",
  "store",
  "manager",
  "provider",
  "service",
  "scope",
  "scopes",
  "algorithm",
  "alg",
  "chars",
  "charset",
  "location",
  "source",
  "var",
  "variable",
  "env",
  "method",
  "class",
  "schema",
  "hash",
  "hashed",
  "fn",
  "func",
  "callback",
  "handler",
  "validator",
  "input",
  "output",
  "button",
  "form",
  "page",
  "route",
  "check",
  "valid",
  "validation",
  "exists",
  "list",
  "map",
  "limit",
  "delay",
  "interval",
  "duration",
  "at",
  "date",
  "time",
  "timestamp",
  "created",
  "updated",
  "usage",
  "result",
  "results",
  "row",
  "rows",
  "record",
  "records",
  "entry",
  "secrets",
  "tokens",
  "keys",
  "passwords",
  "count",
  "counter",
  "metadata",
  "meta",
  "info",
  "data",
  "ids",
  "lookup",
  "reset",
  "strategy",
  "flow",
  "grant",
  "request",
  "response",
  "req",
  "res",
  "endpoint",
  "server",
  "dialog",
  "modal",
  "screen",
  "view",
  "component",
]);
/** A public key, by definition, is not a secret. */
const PUBLIC = new Set(["public", "pub", "pubkey", "publishable"]);

function segments(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean)
    .map((s) => s.replace(/^(\D+)\d+$/, "$1"));
}

// PERF: keyed by the previous word, then by the name: no key string is built per lookup. `null` is a
// name known not to be a secret's, so one lookup answers both ways.
const familyCache = new Map<string, Map<string, Family | null>>();
let familyCacheSize = 0;
/** Bounds the cache: names repeat within a text, but a long text may hold many different ones. */
const FAMILY_CACHE_SIZE = 2048;

/** The family of secret a name holds, or undefined when the name is not a secret's name. */
export function nameFamily(name: string, previousWord = ""): Family | undefined {
  let byName = familyCache.get(previousWord);
  const cached = byName?.get(name);
  if (cached !== undefined) return cached ?? undefined;
  const family = classifyName(name, previousWord);
  if (familyCacheSize >= FAMILY_CACHE_SIZE) {
    familyCache.clear();
    familyCacheSize = 0;
    byName = undefined;
  }
  if (!byName) familyCache.set(previousWord, (byName = new Map()));
  byName.set(name, family ?? null);
  familyCacheSize++;
  return family;
}

function classifyName(name: string, previousWord: string): Family | undefined {
  // Bundler keeps a gem server's `user:password` in BUNDLE_<HOST>, the host's dots written `__`.
  if (/^BUNDLE_[A-Z0-9_]*__[A-Z]{2,}$/.test(name)) return "password";
  const segs = segments(name);
  if (!segs.length || segs.some((s) => PUBLIC.has(s))) return undefined;
  if (DESCRIPTORS.has(segs[segs.length - 1]) && segs.length > 1) return undefined;
  let family: Family | undefined;
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i];
    let f = EXACT[s];
    if (!f) for (const [suffix, fam] of SUFFIXES) if (s.length > suffix.length && s.endsWith(suffix)) f = fam;
    if (!f && s.endsWith("pass") && PASS_OWNERS.has(s.slice(0, -4))) f = "password";
    if (f === "weak" && s === "key" && (KEY_QUALIFIERS.has(segs[i - 1] ?? "") || EXACT[segs[i - 1] ?? ""]))
      f = "secret";
    if (f && (!family || family === "weak")) family = f;
  }
  if (family === "weak") {
    const prev = segments(previousWord).pop() ?? "";
    if (KEY_QUALIFIERS.has(prev) || (EXACT[prev] && EXACT[prev] !== "weak")) family = "secret";
  }
  return family;
}

const FILE_EXTENSION_RE =
  /\.(?:[cm]?[jt]sx?|py|rb|go|rs|java|kt|swift|php|cs|cpp|c|h|json|ya?ml|toml|ini|cfg|conf|txt|md|html?|css|xml|lock|log|sh|pem|crt|cer|p12|pfx|jks|keystore)$/i;

const isNameChar = (c: number) =>
  (c >= 48 && c <= 57) ||
  (c >= 65 && c <= 90) ||
  (c >= 97 && c <= 122) ||
  c === 95 ||
  c === 45 ||
  c === 46 ||
  c === 36;

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
  if (text[p] === "&") {
    if (text.startsWith("&quot;", p)) open = "&quot;";
    else if (text.startsWith("&#34;", p)) open = "&#34;";
    else if (text.startsWith("&#39;", p)) open = "&#39;";
  } else {
    let k = p;
    while (text[k] === "\\" && k - p < 8) k++;
    if (text[k] === '"' || text[k] === "'" || text[k] === "`") open = text.slice(p, k + 1);
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

// `&`, `#`, `!`, `%`, `@` are common inside a password, so they do not end a value; `&` ends one only in a
// URL query (see `readUnquoted`), as `&&` or as an HTML-escaped quote or bracket.
const UNQUOTED_STOP = new Set([" ", "\t", "\n", "\r", '"', "'", "`", ",", ";", "<", ">", "\\", "|"]);
const CLOSERS: Record<string, string> = { ")": "(", "]": "[", "}": "{" };
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
  for (; end < limit && !UNQUOTED_STOP.has(text[end]); end++) {
    if (text[end] !== "&") continue;
    if (inQuery || AMPERSAND_STOP_RE.test(text.slice(end, end + 44))) break;
    // `<password>Tr0ub4dor&amp;3</password>`: an escaped `&` is one character of the value.
    if (text.startsWith("&amp;", end)) end += 4;
  }
  // `PASSWORD=… &`: a trailing `&` sends a shell command to the background.
  while (end > p && text[end - 1] === "&") end--;
  // `f(secret=abc123)`: the `)` belongs to the code around the value, not to the value.
  while (end > p && CLOSERS[text[end - 1]]) {
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
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45;
const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/**
 * The word (`[A-Za-z][\w-]*`) that ends one or two spaces or tabs before `p`, on the same line and within
 * 40 characters: `access` in `access key`. PERF: read backwards in place, no slice and no regex per name.
 */
function wordBeforeSpaces(text: string, p: number): string | undefined {
  // Neither loop below crosses a newline, so the line's start need not be looked for.
  const bound = Math.max(0, p - 40);
  let q = p;
  while (q > bound && p - q < 3 && (text[q - 1] === " " || text[q - 1] === "\t")) q--;
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
  while (s > 0 && p - s < max && text[s - 1] !== "\n") s--;
  return s;
}

function skipSpaces(text: string, p: number, newlines = false): number {
  while (
    p < text.length &&
    (text[p] === " " || text[p] === "\t" || (newlines && (text[p] === "\n" || text[p] === "\r")))
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

/** Whether the text at a value position is a secret, given the name's family and how it was written. */
export function acceptValue(value: string, family: Family, quoted: boolean, op: Operator): boolean {
  // `string):`, `token:`: trailing punctuation belongs to the code around the value.
  const core = value.replace(/[)\]}:;,.]+$/, "");
  if (core.length < 4) return false;
  if (isPlaceholder(value) || isTemplate(value) || isPlaceholderWord(core)) return false;
  if (REFERENCE_RE.test(value) || ENV_NAME_RE.test(core) || PROVIDER_PREFIX_RE.test(value)) return false;
  if (/^\d+$/.test(core)) return core.length >= 16;
  if (isUuidShape(core)) return !isStandardUuid(core) || family !== "weak";
  if (PATH_RE.test(value) || /^[a-z][a-z0-9+.-]*:\/\//i.test(value) || isHostLike(core)) return false;
  if (isMostlySequential(value) || isDominatedByOneChar(value) || decodesToPlaceholder(value)) return false;
  if (!quoted && (isCodeExpression(value) || CALL_RE.test(value) || /^[-{[(]/.test(value))) return false;
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
  },
): { op: Operator; at: number; list?: boolean } | undefined {
  let q = skipSpaces(text, p);
  if (q > p && /[A-Za-z_[*]/.test(text[q] ?? "")) {
    // A type between name and operator: `var token string = "…"`.
    const typed = /^(?:\[\]|\*)?[A-Za-z_][\w.]{0,30}(?:<[\w, ]{0,40}>)?\s*(?=:?=[^=])/.exec(
      text.slice(q, q + 80),
    );
    if (typed) q += typed[0].length;
  }
  for (const o of OPERATORS_BY_FIRST.get(text[q]) ?? []) {
    if (!text.startsWith(o, q)) continue;
    if (o === ":" && (text[q + 1] === ":" || text[q + 1] === "/")) return undefined;
    if (o === "=" && text[q + 1] === "~") return undefined;
    const op: Operator = o === "==" || o === "!=" || o === "===" || o === "!==" ? "compare" : "assign";
    return { op, at: skipSpaces(text, q + o.length) };
  }
  // `setProperty("API_TOKEN", "…")` reads as an assignment; `CURLOPT_PASSWORD, "…"` less surely so.
  if (text[q] === ",") {
    if (ctx.nameQuoted) return { op: "assign", at: skipSpaces(text, q + 1), list: true };
    if (/^[A-Z][A-Z0-9_]+$/.test(ctx.name)) return { op: "comma", at: skipSpaces(text, q + 1) };
  }
  if (text[q] === ">" && ctx.inTag) return { op: "xml", at: skipSpaces(text, q + 1, true) };
  if (text[q] === "(" && /^["'`]/.test(text[q + 1] ?? "")) return { op: "assign", at: q + 1 };
  if (ctx.nameQuoted) {
    // `<add key="Password" value="…" />`
    const attr = /^\s+value\s*=\s*/.exec(text.slice(p, p + 30));
    if (attr) return { op: "assign", at: p + attr[0].length };
  }
  if (q > p) {
    if (/^(?:is|was)\s/i.test(text.slice(q, q + 4))) return { op: "prose", at: skipSpaces(text, q + 3) };
    if (ctx.isFlag) return { op: "flag", at: q };
    // With nothing but a space between name and value, "pass" and "pwd" are more often a verb and a
    // shell command ("Pass `projectRoot` to …") than a password's name.
    if (ctx.family === "weak" || /^(?:pass|pwd)$/i.test(ctx.name)) return undefined;
    if (/^[bBuUrR@]?["'`]/.test(text.slice(q, q + 2))) return { op: "bare", at: q };
    return { op: "spaced", at: q };
  }
  return undefined;
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
  const isFlag = text[start] === "-" && /[-A-Za-z]/.test(text[start + 1] ?? "");
  while (end > start && (text[end - 1] === "-" || text[end - 1] === ".")) end--;
  let nameStart = start;
  while (nameStart < end && (text[nameStart] === "-" || text[nameStart] === "." || text[nameStart] === "$"))
    nameStart++;
  if (nameStart === end) return end;
  const name = text.slice(nameStart, end);
  // `pkg/secret.py`, `"secret.ts": …`: a file, not a value's name.
  if (FILE_EXTENSION_RE.test(name)) return end;
  let family = nameFamily(name);
  if (!family) return end;
  if (family === "weak" && (text[start - 1] === " " || text[start - 1] === "\t")) {
    // `access key: …`, `SECRET KEY: …`: the word before may make a key a secret.
    const previousWord = wordBeforeSpaces(text, start);
    if (previousWord) family = nameFamily(name, previousWord) ?? family;
  }

  let p = end;
  if (text[p] === "[") {
    const idx = /^\[\d{0,4}\]/.exec(text.slice(p, p + 6));
    if (idx) p += idx[0].length;
  } else if (text[p] === ")" && /^\)\s*[:=]/.test(text.slice(p, p + 4))) p++;
  const afterName = p;
  while (
    p < text.length &&
    p - afterName < 4 &&
    (text[p] === '"' || text[p] === "'" || text[p] === "`" || text[p] === "\\")
  )
    p++;
  if (text.startsWith("&quot;", p)) p += 6;
  // A name in quotes must be the whole quoted string (`"api_key": …`), not the end of a sentence in quotes.
  const nameQuoted = p > afterName && /["'`]/.test(text[start - 1] ?? "");
  const ctx = {
    nameQuoted,
    isFlag,
    inTag: text[start - 1] === "<",
    name,
    family,
  };
  const operator = readOperator(text, p, ctx);
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
      ? readFallbackLiteral(text, operator.at, family, out)
      : undefined;
    return Math.max(end, read?.resume ?? end, fallback ?? end);
  }
  // `"literal" == password`: the value comes first.
  if (text[start - 1] !== " " && text[start - 1] !== "=" && text[start - 1] !== "\t") return end;
  // Spaces and tabs never cross a line, so only the 320-character bound applies before `==` is seen.
  // PERF: the line's start is looked for only then.
  let q = start;
  while (q > Math.max(0, start - 320) && (text[q - 1] === " " || text[q - 1] === "\t")) q--;
  if (text[q - 1] !== "=" || (text[q - 2] !== "=" && text[q - 2] !== "!")) return end;
  const lineStart = lineStartWithin(text, start, 320);
  q -= 2;
  while (
    q > lineStart &&
    (text[q - 1] === "=" || text[q - 1] === "!" || text[q - 1] === " " || text[q - 1] === "\t")
  )
    q--;
  const quote = text[q - 1];
  if (quote !== '"' && quote !== "'" && quote !== "`") return end;
  let open = q - 2;
  while (open >= lineStart && q - 1 - open <= 300 && text[open] !== quote) open--;
  if (open < lineStart || q - 1 - open > 300) return end;
  const literal = text.slice(open + 1, q - 1);
  if (acceptValue(literal, family, true, "compare"))
    out.push({ start: open + 1, end: q - 1, kind: familyKind(family) });
  return end;
}

/**
 * `PASSWORD = os.environ.get("PASSWORD") or "hunter2"`, `SECRET := getenv("X", "s3cr3t")`: a secret
 * variable whose value is looked up, falling back to a literal written in the code. The literal is the
 * secret.
 */
function readFallbackLiteral(text: string, at: number, family: Family, out: Finding[]): number | undefined {
  let lineEnd = at;
  while (lineEnd < text.length && lineEnd - at < 300 && text[lineEnd] !== "\n") lineEnd++;
  const line = text.slice(at, lineEnd);
  if (!/^[\w.$]*(?:getenv|environ|env|Getenv|GetEnvironmentVariable|config|settings|get)\b/i.test(line))
    return undefined;
  const fallback = /(?:,\s*|\bor\s+|\|\|\s*|\?\?\s*)(["'])([^"'\n]{4,200})\1\s*\)?\s*[:;,)]?\s*$/.exec(line);
  if (!fallback || !acceptValue(fallback[2], family, true, "assign")) return undefined;
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
  if (text[value.start - 1] === "`" && /\s/.test(raw)) return scanned;
  if (code && isCodeName(raw, value.quoted, op, code.list)) return scanned;
  if (!acceptValue(raw, family, value.quoted, op)) return scanned;
  out.push({ start: value.start, end: value.start + raw.length, kind: familyKind(family) });
  return { resume: Math.max(scanned.resume, value.end), found: true };
}
