import { acceptValue } from "./assignments.ts";
import { type CandidateScan, isSpaceCode, matchFrom, type NextStart, sticky } from "./scan.ts";
import {
  charClasses,
  entropy,
  isPlaceholder,
  isPlaceholderWord,
  isStandardUuid,
  isTemplate,
  isWordLike,
} from "./text.ts";
import type { Finding } from "./types.ts";

/**
 * Secrets recognised by structure rather than by name or prefix: PEM private keys across lines (also
 * JSON-escaped and string-concatenated), credentials in URLs and connection strings, `curl -u user:pass`,
 * SQL `IDENTIFIED BY`, key material hidden in base64, JWK private members, and UUID-shaped values that are
 * not UUIDs (the format several providers use for API keys).
 */

// --- PEM private keys ---------------------------------------------------------------------------------

/** Tried (sticky) only where `-----BEGIN` is: `test()` builds no match array for each of 28k BEGIN lines. */
const BEGIN_RE = /-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----/y;
const END_RE = /-----END[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----/g;
/** A block this long without its END line is a key that was cut short; keep going to the end of its body. */
const MAX_PEM = 20000;
/** Fewer base64 characters than this between BEGIN and END is a placeholder (`…\nanything\n…`). */
const MIN_PEM_BODY = 32;

// PERF: character tests on char codes, not a regex per character: a text of 28k BEGIN lines reads
// a body after each one.
const isBase64Code = (c: number) =>
  (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47 || c === 61;
/** Between body lines: white space, quotes, `+` `,` `;` of string concatenation, `\` of an escaped newline. */
const isBodySeparator = (c: number) =>
  isSpaceCode(c) || c === 34 || c === 39 || c === 96 || c === 43 || c === 44 || c === 59 || c === 92;

function base64Count(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) if (isBase64Code(s.charCodeAt(i))) n++;
  return n;
}

/** `-----BEGIN` or `-----END` at `p`: the next armour line, which no body line runs into. */
const isArmourAt = (text: string, p: number) =>
  text.startsWith("-----BEGIN", p) || text.startsWith("-----END", p);

/**
 * End of the base64 body lines that follow `p` (through escapes, quotes and string concatenation). A run
 * stops at the next armour line even when no newline comes before it, so a key cut short never takes
 * the next key's BEGIN line (each BEGIN is matched once: the next key would go unread). A run shorter than
 * a body line is prose, unless it is the body's last line: it ends in `=` padding, or the next armour line
 * or the text's end follows.
 */
function bodyEnd(text: string, p: number): number {
  let end = p;
  let q = p;
  const limit = Math.min(text.length, p + MAX_PEM);
  for (;;) {
    while (q < limit && isBodySeparator(text.charCodeAt(q))) {
      if (text[q] === "\\" && text[q + 1] === "n") q++;
      q++;
    }
    const runStart = q;
    while (
      q < limit &&
      (isBase64Code(text.charCodeAt(q)) || text[q] === ":" || (text[q] === "-" && !isArmourAt(text, q)))
    )
      q++;
    if (q === runStart) return end;
    if (q - runStart < 16) {
      const runEnd = q;
      if (text[runEnd - 1] === "=") return runEnd;
      while (q < limit && isBodySeparator(text.charCodeAt(q))) {
        if (text[q] === "\\" && text[q + 1] === "n") q++;
        q++;
      }
      return q === text.length || isArmourAt(text, q) ? runEnd : end;
    }
    end = q;
  }
}

function findPemKeys(text: string, out: Finding[], code: boolean): void {
  if (!text.includes("PRIVATE KEY")) return;
  // PERF: END lines are listed once; each BEGIN takes the next one (no search per BEGIN).
  const ends: [number, number][] = [];
  END_RE.lastIndex = 0;
  for (let m = END_RE.exec(text); m; m = END_RE.exec(text)) ends.push([m.index, m.index + m[0].length]);
  const usedEnds = new Set<number>();
  let next = 0;
  // PERF: a key that starts where the previous one ended extends its marker: keys back to back are one
  // stretch of key material, and 28k BEGIN lines in a row make one finding to merge, not 28k.
  let last: Finding | undefined;
  const add = (start: number, end: number) => {
    if (last && last.end === start) last.end = end;
    else out.push((last = { start, end, kind: "private_key" }));
  };
  for (let begin = text.indexOf("-----BEGIN"); begin >= 0; ) {
    BEGIN_RE.lastIndex = begin;
    if (!BEGIN_RE.test(text)) {
      begin = text.indexOf("-----BEGIN", begin + 1);
      continue;
    }
    const afterBegin = BEGIN_RE.lastIndex;
    while (next < ends.length && ends[next][0] < afterBegin) next++;
    const end = ends[next];
    let resume: number;
    if (end && end[0] - afterBegin <= MAX_PEM) {
      usedEnds.add(next);
      if (base64Count(text.slice(afterBegin, end[0]).replace(/\\n/g, "")) >= MIN_PEM_BODY) add(begin, end[1]);
      resume = end[1];
    } else {
      resume = Math.max(afterBegin, bodyEnd(text, afterBegin));
      // In code a BEGIN line alone is a literal the parser looks for (`pem.indexOf("-----BEGIN …")`).
      if (!code || base64Count(text.slice(afterBegin, resume)) >= MIN_PEM_BODY) add(begin, resume);
    }
    begin = text.indexOf("-----BEGIN", resume);
  }
  // An END line on its own is the tail of a key pasted in pieces (in a conversation; in code, a literal).
  if (!code)
    for (const [i, [start, stop]] of ends.entries())
      if (!usedEnds.has(i)) out.push({ start, end: stop, kind: "private_key" });
}

// --- Credentials in URLs, curl and SQL ----------------------------------------------------------------

// scheme://user:password@host — the password may hold `@` (the last one before the host ends it).
const URL_CREDENTIALS_RE =
  /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}:\/\/([^\s:/?#"'<>`]{0,128}):([^\s/?#"'<>`]{1,256})@(?=[A-Za-z0-9[])/dg;

const URL_CREDENTIALS_AT = sticky(URL_CREDENTIALS_RE);
/** `[A-Za-z0-9+.-]`: a scheme's characters (those of the lookbehind, so a match starts a run of them). */
const isSchemeCode = (c: number) =>
  (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 46 || c === 45;

/** PERF (see scan.ts): a URL with credentials starts the run of 2–31 scheme characters before a `://`. */
const urlCredentialsStart: NextStart = (text, from) => {
  for (let p = text.indexOf("://", from + 2); p >= 0; p = text.indexOf("://", p + 1)) {
    let s = p;
    while (s > 0 && p - s <= 31 && isSchemeCode(text.charCodeAt(s - 1))) s--;
    if (s >= from && p - s >= 2 && p - s <= 31) return s;
  }
  return -1;
};

/** A password written by someone showing the format: `user:pass`, `admin:password`, `:${PASS}`. */
function credentialPlaceholder(password: string): boolean {
  return (
    isPlaceholder(password) ||
    isTemplate(password) ||
    isPlaceholderWord(password) ||
    /^[$%][({A-Za-z_]/.test(password)
  );
}

/** A URL's password that may be a real one in code: 6+ characters, not a word, not the user, no escape. */
function generatedPassword(password: string, user: string): boolean {
  return password.length >= 6 && password !== user && !isWordLike(password) && !password.includes("\\");
}

function findUrlCredentials(text: string, out: Finding[], code: boolean): void {
  if (!text.includes("://")) return;
  for (
    let m = matchFrom(text, URL_CREDENTIALS_AT, urlCredentialsStart, 0);
    m;
    m = matchFrom(text, URL_CREDENTIALS_AT, urlCredentialsStart, m.index + m[0].length)
  ) {
    const [start, end] = m.indices![2]!;
    if (credentialPlaceholder(m[2]) || credentialPlaceholder(m[1] + m[2])) continue;
    // In a file, a password a person wrote is a doc example or a test's (`postgres:postgres@`,
    // `anonymous:flabada@`, `a:b@`, escapes): a committed one is generated.
    if (code && !generatedPassword(m[2], m[1].slice(m[1].lastIndexOf("/") + 1))) continue;
    out.push({ start, end, kind: "connection_string" });
  }
}

const CURL_USER_RE = /(?<=\s|^)(?:-u|--user|--proxy-user|-U)[ \t]+(['"]?)([^\s'"]{1,200})\1/g;

function findCurlCredentials(text: string, out: Finding[]): void {
  // PERF: two substring searches first; the regex alone is tried at every `-` (1.6 ms on a MB of PEM lines).
  if (!(text.includes("-u") || text.includes("-U")) || !/-u\b|--user|--proxy-user|-U\b/.test(text)) return;
  CURL_USER_RE.lastIndex = 0;
  for (let m = CURL_USER_RE.exec(text); m; m = CURL_USER_RE.exec(text)) {
    const credential = m[2];
    const colon = credential.indexOf(":");
    if (colon < 0 || credentialPlaceholder(credential)) continue;
    const valueStart = m.index + m[0].length - m[1].length - credential.length;
    const user = credential.slice(0, colon);
    const password = credential.slice(colon + 1);
    // `-u "key:"` (Stripe style) puts the secret in the user part.
    if (!password) {
      if (user.length >= 8 && !credentialPlaceholder(user))
        out.push({ start: valueStart, end: valueStart + colon, kind: "password" });
      continue;
    }
    if (credentialPlaceholder(password)) continue;
    out.push({ start: valueStart + colon + 1, end: valueStart + credential.length, kind: "password" });
  }
}

const SQL_PASSWORD_RE =
  /\bIDENTIFIED\s+(?:WITH\s+\w+\s+)?BY\s+(?:PASSWORD\s+)?(?:(['"])([^'"\n]{1,128})\1|([^\s'";)]{1,128}))/gi;

function findSqlPasswords(text: string, lower: string, out: Finding[], code: boolean): void {
  if (!lower.includes("identified")) return;
  SQL_PASSWORD_RE.lastIndex = 0;
  for (let m = SQL_PASSWORD_RE.exec(text); m; m = SQL_PASSWORD_RE.exec(text)) {
    const value = m[2] ?? m[3];
    const start = m.index + m[0].length - value.length - (m[1] ? 1 : 0);
    if (acceptValue(value, "password", true, "assign", code))
      out.push({ start, end: start + value.length, kind: "password" });
  }
}

// PowerShell `ConvertTo-SecureString [-String] <plain text> [-AsPlainText] [-Force]`: the first argument
// that is not a flag is a password in clear.
const SECURE_STRING_RE = /ConvertTo-SecureString((?:\s+-\w+)*)\s+(\\*["'])?([^\s"'\\]{4,200})\2?/gi;

function findSecureStringArguments(text: string, lower: string, out: Finding[]): void {
  if (!lower.includes("convertto-securestring")) return;
  SECURE_STRING_RE.lastIndex = 0;
  for (let m = SECURE_STRING_RE.exec(text); m; m = SECURE_STRING_RE.exec(text)) {
    const value = m[3];
    const start = m.index + m[0].lastIndexOf(value);
    if (value.startsWith("$") || value.startsWith("(") || credentialPlaceholder(value)) continue;
    out.push({ start, end: start + value.length, kind: "password" });
  }
}

// --- Key material inside base64, JWK members, key bodies ----------------------------------------------

/** The base64 of `needle` at each of the three byte alignments, trimmed to the characters it fixes. */
function base64Needles(needle: string): string[] {
  const needles: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.from("\0".repeat(offset) + needle)
      .toString("base64")
      .replace(/=+$/, "");
    const skip = offset === 0 ? 0 : offset + 1;
    const keep = Math.floor(((offset + needle.length) * 4) / 3);
    needles.push(encoded.slice(skip, keep));
  }
  return needles;
}

let materialNeedles: string[] | undefined;
const BLOB_RE = /(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{64,}={0,2}/g;

/** Decoded text that is key material: a PEM or OpenSSH private key, or a JWK with private members. */
function isKeyMaterial(decoded: string): boolean {
  return (
    decoded.includes("PRIVATE KEY") ||
    decoded.includes("openssh-key-v1") ||
    (decoded.includes('"kty"') && /"(?:d|k|p|q)"\s*:/.test(decoded))
  );
}

/**
 * A long base64 blob that decodes to key material. The base64 of the markers, at each of the three byte
 * alignments, is searched first, so text without any pays one substring search per marker.
 */
function findEncodedKeyMaterial(text: string, out: Finding[]): void {
  materialNeedles ??= ["PRIVATE KEY", "openssh-key-v1", '"kty"'].flatMap(base64Needles);
  if (!materialNeedles.some((n) => text.includes(n))) return;
  BLOB_RE.lastIndex = 0;
  for (let m = BLOB_RE.exec(text); m; m = BLOB_RE.exec(text)) {
    const blob = m[0];
    if (!materialNeedles.some((n) => blob.includes(n)) || isPlaceholder(blob)) continue;
    if (isKeyMaterial(Buffer.from(blob, "base64").toString("latin1")))
      out.push({ start: m.index, end: m.index + blob.length, kind: "private_key" });
  }
}

// `"d": "…"`, `"p"`, `"q"`, `"dp"`, `"dq"`, `"qi"`, `"k"`: the private members of a JSON Web Key.
const JWK_MEMBER_RE = /"(?:d|p|q|dp|dq|qi|k)"\s*:\s*"([A-Za-z0-9_-]{20,2000})"/dg;

function findJwkMembers(text: string, out: Finding[]): void {
  if (!text.includes('"')) return;
  JWK_MEMBER_RE.lastIndex = 0;
  for (let m = JWK_MEMBER_RE.exec(text); m; m = JWK_MEMBER_RE.exec(text)) {
    const [start, end] = m.indices![1]!;
    if (entropy(m[1]) >= 3.5) out.push({ start, end, kind: "private_key" });
  }
}

// A line that is nothing but 60–80 base64 characters: the body of a PEM or OpenSSH key pasted in pieces.
const KEY_BODY_LINE_RE = /^[ \t]*([A-Za-z0-9+/]{60,80}={0,2})[ \t]*$/gm;
/** Armoured blocks whose body lines are public or encrypted: certificates, public keys, signatures, messages. */
const PUBLIC_BLOCK_RE =
  /-----BEGIN [A-Z0-9 ]{0,30}(?:PUBLIC KEY|CERTIFICATE|SIGNATURE|CERTIFICATE REQUEST|MESSAGE|SIGNED MESSAGE)(?: BLOCK)?-----/g;

const KEY_BODY_LINE_AT = sticky(KEY_BODY_LINE_RE);
/** A key body line has 60 characters or more. */
const MIN_KEY_BODY_LINE = 60;

/**
 * PERF (see scan.ts): the starts of lines of 60 characters or more, in text whose only line terminator is
 * `\n` (`^` and `$` of the `m` flag also take `\r`, U+2028 and U+2029; such text is read the old way).
 */
const longLineStart: NextStart = (text, from) => {
  let s = from;
  if (s > 0 && text.charCodeAt(s - 1) !== 10) s = text.indexOf("\n", s) + 1;
  while (s > 0 || from === 0) {
    // PERF: the last newline within reach ends every line that starts before it, all of them short.
    const newline = text.lastIndexOf("\n", s + MIN_KEY_BODY_LINE - 1);
    if (newline < s) return text.length - s >= MIN_KEY_BODY_LINE ? s : -1;
    s = newline + 1;
  }
  return -1;
};

function findKeyBodyLines(text: string, out: Finding[]): void {
  const publicBlocks: [number, number][] = [];
  PUBLIC_BLOCK_RE.lastIndex = 0;
  for (let m = PUBLIC_BLOCK_RE.exec(text); m; m = PUBLIC_BLOCK_RE.exec(text)) {
    const end = text.indexOf("-----END", m.index + m[0].length);
    publicBlocks.push([m.index, end < 0 ? text.length : end]);
    PUBLIC_BLOCK_RE.lastIndex = end < 0 ? text.length : end;
  }
  const onlyNewlines = !text.includes("\r") && !text.includes("\u2028") && !text.includes("\u2029");
  KEY_BODY_LINE_RE.lastIndex = 0;
  const next = (from: number) => {
    if (!onlyNewlines) return KEY_BODY_LINE_RE.exec(text);
    return matchFrom(text, KEY_BODY_LINE_AT, longLineStart, from);
  };
  for (let m = next(0); m; m = next(m.index + m[0].length)) {
    const body = m[1];
    if (charClasses(body) < 3 || /^[0-9a-fA-F]+$/.test(body) || entropy(body) < 4.5) continue;
    const start = m.index + m[0].indexOf(body);
    if (publicBlocks.some(([s, e]) => start > s && start < e)) continue;
    out.push({ start, end: start + body.length, kind: "private_key" });
  }
}

// --- Kubernetes Secret manifests ---------------------------------------------------------------------

const K8S_SECRET_RE = /^\s*kind:\s*['"]?Secret['"]?\s*$/im;
const DATA_BLOCK_RE = /^([ \t]*)(?:data|stringData):[ \t]*$/gm;

/** Bounds the lines read under one `data:` key (a manifest has a handful). */
const MAX_DATA_LINES = 500;

function lineEndAt(text: string, p: number): number {
  let e = p;
  while (e < text.length && text[e] !== "\n") e++;
  return e;
}

/** The values under `data:` / `stringData:` of a `kind: Secret` manifest are the secrets themselves. */
function findKubernetesSecretData(text: string, out: Finding[]): void {
  if (!text.includes("ata:") || !K8S_SECRET_RE.test(text)) return;
  // YAML documents, separated by `---` lines: the `kind: Secret` must be in the data block's document.
  const separators = [0];
  for (let i = text.indexOf("\n---"); i >= 0; i = text.indexOf("\n---", i + 4)) separators.push(i);
  separators.push(text.length);
  let doc = 0;
  let docIsSecret: boolean | undefined;
  DATA_BLOCK_RE.lastIndex = 0;
  for (let m = DATA_BLOCK_RE.exec(text); m; m = DATA_BLOCK_RE.exec(text)) {
    while (separators[doc + 1] < m.index) {
      doc++;
      docIsSecret = undefined;
    }
    docIsSecret ??= K8S_SECRET_RE.test(text.slice(separators[doc], separators[doc + 1]));
    if (!docIsSecret) continue;
    const indent = m[1].replace(/\t/g, "    ").length;
    let p = m.index + m[0].length + 1;
    for (let lines = 0; p < text.length && lines < MAX_DATA_LINES; lines++) {
      const eol = lineEndAt(text, p);
      const line = text.slice(p, eol);
      const entry = /^([ \t]+)[\w.-]+:[ \t]*(?:>-?|\|-?)?[ \t]*(['"]?)([A-Za-z0-9+/=._-]*)\2[ \t]*$/.exec(
        line,
      );
      if (!entry || entry[1].replace(/\t/g, "    ").length <= indent) break;
      let value = entry[3];
      let start = p + line.lastIndexOf(value);
      // A folded value (`.dockercfg: >`) continues on the next, deeper line.
      if (!value) {
        const next = text.slice(eol + 1, lineEndAt(text, eol + 1));
        const folded = /^[ \t]+([A-Za-z0-9+/=]{8,})[ \t]*$/.exec(next);
        if (folded) {
          value = folded[1];
          start = eol + 1 + next.indexOf(value);
        }
      }
      if (value.length >= 4 && !credentialPlaceholder(value))
        out.push({ start, end: start + value.length, kind: "secret" });
      p = eol + 1;
    }
  }
}

// --- UUID-shaped keys ---------------------------------------------------------------------------------

const UUID_LIKE_RE =
  /(?<![A-Za-z0-9-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![A-Za-z0-9-])/g;

/**
 * Heroku, HubSpot, Squarespace and other providers issue keys in UUID shape; a real UUID carries a
 * version (1–8) and the RFC variant. A UUID-shaped value without them is a key, unless it is a
 * Windows-registry-style `{GUID}`.
 */
function findNonStandardUuids(text: string, out: Finding[]): void {
  if (!text.includes("-")) return;
  UUID_LIKE_RE.lastIndex = 0;
  for (let m = UUID_LIKE_RE.exec(text); m; m = UUID_LIKE_RE.exec(text)) {
    if (isStandardUuid(m[0])) continue;
    if (text[m.index - 1] === "{" && text[m.index + 36] === "}") continue;
    if (/^(\w)\1{7}-/.test(m[0]) || /^[0-9]{8}-[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{12}$/.test(m[0])) continue;
    out.push({ start: m.index, end: m.index + 36, kind: "secret" });
  }
}

/** The patterns run at candidate starts only (key body lines: in text whose only line terminator is `\n`). */
export const structuredScans: Record<string, CandidateScan> = {
  urlCredentials: { pattern: URL_CREDENTIALS_RE, nextStart: urlCredentialsStart },
  keyBodyLine: { pattern: KEY_BODY_LINE_RE, nextStart: longLineStart },
};

/**
 * `lower`: the text lower-cased, for the keyword tests (a substring search, not a case-insensitive regex).
 * `code`: a repository file, where a UUID-shaped test value is no key and a password must look generated.
 */
export function findStructuredSecrets(
  text: string,
  out: Finding[],
  lower = text.toLowerCase(),
  code = false,
): void {
  findPemKeys(text, out, code);
  findUrlCredentials(text, out, code);
  findCurlCredentials(text, out);
  findSqlPasswords(text, lower, out, code);
  findSecureStringArguments(text, lower, out);
  findEncodedKeyMaterial(text, out);
  findJwkMembers(text, out);
  findKeyBodyLines(text, out);
  if (!code) findNonStandardUuids(text, out);
  findKubernetesSecretData(text, out);
}
