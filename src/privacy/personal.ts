import { homedir, userInfo } from "node:os";
import {
  type CandidateScan,
  isDigitCode,
  isHexCode,
  literalsAt,
  matchFrom,
  type NextStart,
  sticky,
} from "./scan.ts";
import type { Finding } from "./types.ts";

/** `\w` of a regex without the `u` flag. */
const isWordCode = (c: number) =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

/**
 * Personal data: e-mail addresses, home directories and the user's name, IP addresses, bank and card
 * numbers, phone numbers, US social security numbers. Number formats are validated (IBAN mod-97, Luhn,
 * IPv6 grammar, SSN ranges), which is what keeps version strings, hashes and ids out.
 */

// Local part and domain labels are bounded and cannot contain the separator after them, so a failed match
// backtracks at most a label's length; the left boundary lets a run of local-part characters start a
// match once only. Linear.
const EMAIL_RE =
  /(?<![\w.+%-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,10}(?:[A-Za-z]{2,24}|xn--[a-z0-9-]{2,59})(?![\w-])/g;

const EMAIL_AT = sticky(EMAIL_RE);
/** `[A-Za-z0-9._%+-]`: a local part's characters (all of them in the lookbehind's class, so a match starts a run). */
const isLocalPartCode = (c: number) =>
  (c >= 65 && c <= 90) ||
  (c >= 97 && c <= 122) ||
  (c >= 48 && c <= 57) ||
  c === 46 ||
  c === 95 ||
  c === 37 ||
  c === 43 ||
  c === 45;

/** PERF (see scan.ts): an address starts where the run of 1–64 local-part characters before an `@` starts. */
const emailStart: NextStart = (text, from) => {
  for (let at = text.indexOf("@", from + 1); at >= 0; at = text.indexOf("@", at + 1)) {
    let s = at;
    while (s > 0 && at - s <= 64 && isLocalPartCode(text.charCodeAt(s - 1))) s--;
    if (s >= from && s < at && at - s <= 64) return s;
  }
  return -1;
};

function findEmails(text: string, out: Finding[]): void {
  if (!text.includes("@")) return;
  for (
    let m = matchFrom(text, EMAIL_AT, emailStart, 0);
    m;
    m = matchFrom(text, EMAIL_AT, emailStart, m.index + m[0].length)
  ) {
    let start = m.index;
    // In escaped text (`"…\n@AGENTS.md"`, `"\nbob@corp.io"`) the letter of an escape is not the address's.
    if (text[start - 1] === "\\" && /[nrt]/.test(text[start])) start++;
    if (text[start] === "@") continue;
    // `git@github.com:org/repo.git` is an SSH remote, not a person.
    if (m[0].startsWith("git@") && text[m.index + m[0].length] === ":") continue;
    // `scheme://user:password@host` is a credential (see structured.ts), not an address.
    if (
      text[m.index - 1] === ":" &&
      /:\/\/[^\s/@]*$/.test(text.slice(Math.max(0, m.index - 200), m.index - 1))
    )
      continue;
    out.push({ start, end: m.index + m[0].length, kind: "email" });
  }
}

/**
 * `/Users/<name>`, `/home/<name>`, `C:\Users\<name>` with any run of `\`, `/` or `¥` (JSON-escaped,
 * Japanese code pages) between the parts. A name may hold one inner space (`C:\Users\John Doe\`) when the
 * path goes on after it. `/home` must start a path (`example.com/home/about` is a web page).
 */
const HOME_RE =
  /(?:\/Users|(?<=^|[^A-Za-z0-9_.-]|\\[nrt])\/home|(?<=^|[^A-Za-z0-9]|\\[nrt])[A-Za-z]:(?:\\{1,4}|\/)Users|¥Users)(?:\\{1,4}|\/|¥)(?!(?:Shared|Public|Guest|Default|All Users)(?![A-Za-z0-9]))([A-Za-z0-9_][A-Za-z0-9_.@-]{0,63})(?:( [A-Za-z0-9_][A-Za-z0-9_.-]{0,31})(?=\\|\/|¥))?/g;

/**
 * Claude Code names a project's folder after its path with `/` turned into `-`
 * (`~/.claude/projects/-home-jdoe-work-app`): the user's name follows `-Users-` or `-home-`. Where the
 * name ends is not written down; the first word goes.
 */
const DASHED_HOME_RE = /(?<![\w-])-(?:Users|home)-(?!Shared-)[A-Za-z0-9_]+/g;

const HOME_AT = sticky(HOME_RE);
const usersOrHome = literalsAt(["Users", "home"]);
/** PERF (see scan.ts): a home path starts 1–6 characters before its `Users` or `home` (`C:\\\\Users`). */
const homeStart: NextStart = (text, from) => {
  const word = usersOrHome(text, from + 1);
  return word < 0 ? -1 : Math.max(from, word - 6);
};
const DASHED_HOME_AT = sticky(DASHED_HOME_RE);
/** PERF (see scan.ts): a dashed project folder starts at its `-Users-` or `-home-`. */
const dashedHomeStart = literalsAt(["-Users-", "-home-"]);

function findHomePaths(text: string, lower: string, out: Finding[]): void {
  if (!lower.includes("users") && !lower.includes("home")) return;
  for (
    let m = matchFrom(text, HOME_AT, homeStart, 0);
    m;
    m = matchFrom(text, HOME_AT, homeStart, m.index + m[0].length)
  )
    out.push({ start: m.index, end: m.index + m[0].length, kind: "home" });
  for (
    let m = matchFrom(text, DASHED_HOME_AT, dashedHomeStart, 0);
    m;
    m = matchFrom(text, DASHED_HOME_AT, dashedHomeStart, m.index + m[0].length)
  )
    out.push({ start: m.index, end: m.index + m[0].length, kind: "home" });
}

/** Account names that say nothing about a person; redacting them would only damage the text. */
const GENERIC_ACCOUNTS = new Set([
  "root",
  "admin",
  "administrator",
  "user",
  "users",
  "node",
  "ubuntu",
  "debian",
  "runner",
  "vagrant",
  "ec2-user",
  "guest",
  "test",
  "tester",
  "dev",
  "developer",
  "app",
  "www",
  "www-data",
  "nobody",
  "docker",
  "build",
  "ci",
  "jenkins",
  "gitlab-runner",
  "home",
  "email",
  "secret",
  "password",
  "token",
  "username",
  "default",
  "public",
]);

let machine: { home: string[]; user?: RegExp } | undefined;

/** The real home directory in every spelling it takes in text, and the user name as a whole word. */
function machineIdentity(): { home: string[]; user?: RegExp } {
  if (machine) return machine;
  let home = "";
  let user = "";
  try {
    home = homedir();
    user = userInfo().username;
  } catch {
    // No passwd entry (some containers): the generic home-path rule still applies.
  }
  const spellings = new Set<string>();
  if (home && home.length > 1) {
    spellings.add(home);
    spellings.add(home.replaceAll("\\", "/"));
    spellings.add(home.replaceAll("\\", "\\\\"));
    spellings.add(home.replaceAll("/", "\\"));
  }
  // The name counts only when the home directory confirms it (`/Users/alex` for `alex`): a container's
  // placeholder account ("unknown", uid without a passwd entry) is no one's name.
  const homeName = home.split(/[\\/]/).pop()?.toLowerCase() ?? "";
  const safeUser =
    user.length >= 3 && homeName === user.toLowerCase() && !GENERIC_ACCOUNTS.has(homeName) ? user : "";
  machine = {
    home: [...spellings].sort((a, b) => b.length - a.length),
    user: safeUser
      ? new RegExp(`(?<![A-Za-z0-9])${safeUser.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![A-Za-z0-9])`, "gi")
      : undefined,
  };
  return machine;
}

function findMachineIdentity(text: string, out: Finding[]): void {
  const { home, user } = machineIdentity();
  for (const spelling of home) {
    for (let i = text.indexOf(spelling); i >= 0; i = text.indexOf(spelling, i + spelling.length)) {
      const next = text[i + spelling.length];
      // `/root` must not take `/rootfs` or `/root2`; `/home/al` must not take `/home/alice`.
      if (next && /[A-Za-z0-9_.-]/.test(next)) continue;
      if (i > 0 && /[A-Za-z0-9_.-]/.test(text[i - 1])) continue;
      out.push({ start: i, end: i + spelling.length, kind: "home" });
    }
  }
  if (user) {
    user.lastIndex = 0;
    for (let m = user.exec(text); m; m = user.exec(text))
      out.push({ start: m.index, end: m.index + m[0].length, kind: "username" });
  }
}

// --- IP addresses -------------------------------------------------------------------------------------

const IPV4_RE =
  /(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w]|\.\d)/g;

const IPV4_AT = sticky(IPV4_RE);
const DIGIT_DOT_DIGIT_RE = /\d\.\d/g;

/** PERF (see scan.ts): an address starts a run of 1–3 digits that a `.` and a digit follow. */
const ipv4Start: NextStart = (text, from) => {
  DIGIT_DOT_DIGIT_RE.lastIndex = from;
  for (let g = DIGIT_DOT_DIGIT_RE.exec(text); g; g = DIGIT_DOT_DIGIT_RE.exec(text)) {
    let s = g.index;
    while (s > 0 && g.index - s < 3 && isDigitCode(text.charCodeAt(s - 1))) s--;
    if (s >= from && g.index - s < 3) return s;
    DIGIT_DOT_DIGIT_RE.lastIndex = g.index + 1;
  }
  return -1;
};

/** Private, loopback, link-local, shared, documentation, multicast and reserved ranges: no one's address. */
function isPublicIpv4(ip: string): boolean {
  const [a, b, c] = ip.split(".").map(Number);
  if (a === 0 || a === 10 || a === 127 || a >= 224) return false;
  if (a === 169 && b === 254) return false;
  if (a === 172 && b >= 16 && b <= 31) return false;
  if (a === 192 && b === 168) return false;
  if (a === 100 && b >= 64 && b <= 127) return false;
  if (
    (a === 192 && b === 0 && c === 2) ||
    (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113)
  )
    return false;
  if (a === 198 && (b === 18 || b === 19)) return false;
  return true;
}

const IPV6_CANDIDATE_RE =
  /(?<![\w:.%])(?=[0-9A-Fa-f]{0,4}:)[0-9A-Fa-f:.]{2,45}(?:%[A-Za-z0-9]{1,15})?(?![\w:%])/g;

const IPV6_CANDIDATE_AT = sticky(IPV6_CANDIDATE_RE);

/** `[\w:.%]`: what may not come before an IPv6 candidate. */
const isIpv6Neighbour = (c: number) => isWordCode(c) || c === 58 || c === 46 || c === 37;

/** PERF (see scan.ts): a candidate starts the run of 0–4 hex digits before a `:`. */
const ipv6Start: NextStart = (text, from) => {
  for (let colon = text.indexOf(":", from); colon >= 0; colon = text.indexOf(":", colon + 1)) {
    let s = colon;
    while (s > 0 && colon - s <= 4 && isHexCode(text.charCodeAt(s - 1))) s--;
    // The lookbehind, tested here: `fe80:fe80:…` offers a candidate at every colon.
    if (s >= from && colon - s <= 4 && !isIpv6Neighbour(text.charCodeAt(s - 1))) return s;
  }
  return -1;
};

/** RFC 4291 text form, with an optional embedded IPv4 tail and zone. */
export function isIpv6(candidate: string): boolean {
  const address = candidate.replace(/%[A-Za-z0-9]+$/, "");
  let head = address;
  let v4Groups = 0;
  const v4 = /(?:^|:)((?:\d{1,3}\.){3}\d{1,3})$/.exec(address);
  if (v4) {
    if (!v4[1].split(".").every((o) => Number(o) <= 255 && !/^0\d/.test(o))) return false;
    head = address.slice(0, address.length - v4[1].length);
    if (head.endsWith(":") && !head.endsWith("::")) head = head.slice(0, -1);
    v4Groups = 2;
  } else if (address.includes(".")) return false;
  const parts = head.split("::");
  if (parts.length > 2) return false;
  const groups = (s: string) => (s ? s.split(":") : []);
  const left = groups(parts[0]);
  const right = parts.length === 2 ? groups(parts[1]) : [];
  const all = [...left, ...right];
  if (!all.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false;
  const total = all.length + v4Groups;
  if (parts.length === 1) return total === 8;
  if (total > 7) return false;
  // Bare `::` and short forms such as Python's `a[1::2]` are not addresses worth a redaction;
  // `::1` (loopback, the common case in logs) and real compressed addresses are.
  if (total === 0) return false;
  if (total === 1 && !v4Groups) return left.length === 0 && right[0] === "1";
  if (left.length === 1 && right.length <= 1 && !v4Groups && left[0].length < 3) return false;
  return /\d/.test(address);
}

/**
 * `@since 2.1.2.0`, `version = "3.2.1.8"`, `section-7.2.3.1`, `§4.3.2.1`, `template-haskell-2.10.0.0`: a
 * dotted number that is a version or a section.
 */
const VERSION_BEFORE_RE = /(?:@since|\bversions?|\bv\.?|\bsections?[- ]|§|[A-Za-z]-)\s*[:=]?\s*["']?$/i;
/** A comment line (`//`, `#`, `*`, `--`, `;`) that talks about versions, releases or a standard's sections. */
const VERSION_COMMENT_RE =
  /^\s*(?:\/\/|\/\*|\*|#|--|;).*\b(?:version|release[ds]?|since|changelog|rfc\s?\d+|section|standard)\b/i;
/** Where an address really is one even in a version comment: a URL's host, after `@`, or a host's value. */
const ADDRESS_BEFORE_RE = /(?:\/\/|@|\b(?:host|ip|addr|address|server)\w*\s*[:=]\s*["']?)$/i;

/** In code, whether the dotted number at [start, end) is a version rather than an address. */
function isVersionInCode(text: string, start: number): boolean {
  const lineStart = text.lastIndexOf("\n", start - 1) + 1;
  const before = text.slice(Math.max(lineStart, start - 40), start);
  if (ADDRESS_BEFORE_RE.test(before)) return false;
  if (VERSION_BEFORE_RE.test(before)) return true;
  let lineEnd = text.indexOf("\n", start);
  if (lineEnd < 0) lineEnd = text.length;
  return VERSION_COMMENT_RE.test(text.slice(lineStart, Math.min(lineEnd, lineStart + 400)));
}

function findIps(text: string, out: Finding[], code: boolean): void {
  if (text.includes(".")) {
    for (
      let m = matchFrom(text, IPV4_AT, ipv4Start, 0);
      m;
      m = matchFrom(text, IPV4_AT, ipv4Start, m.index + m[0].length)
    ) {
      // An address inside an IPv6 literal is handled with it.
      if (text[m.index - 1] === ":") continue;
      if (code && isVersionInCode(text, m.index)) continue;
      if (isPublicIpv4(m[0])) out.push({ start: m.index, end: m.index + m[0].length, kind: "ip" });
    }
  }
  if (text.includes(":")) {
    for (
      let m = matchFrom(text, IPV6_CANDIDATE_AT, ipv6Start, 0);
      m;
      m = matchFrom(text, IPV6_CANDIDATE_AT, ipv6Start, m.index + m[0].length)
    ) {
      if (isIpv6(m[0])) out.push({ start: m.index, end: m.index + m[0].length, kind: "ip" });
    }
  }
}

// --- Bank and card numbers ----------------------------------------------------------------------------

/** IBAN lengths by country (SWIFT registry). */
const IBAN_LENGTH: Record<string, number> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BI: 27,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DJ: 27,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FK: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  LY: 25,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MN: 20,
  MR: 27,
  MT: 31,
  MU: 30,
  NI: 28,
  NL: 18,
  NO: 15,
  OM: 23,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  RU: 33,
  SA: 24,
  SC: 31,
  SD: 18,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  SO: 23,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
  YE: 30,
};

const IBAN_RE = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![a-z0-9])/g;

function ibanChecksumOk(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const code = ch.charCodeAt(0);
    const digits = code >= 65 ? String(code - 55) : ch;
    for (const d of digits) remainder = (remainder * 10 + Number(d)) % 97;
  }
  return remainder === 1;
}

function findIbans(text: string, out: Finding[]): void {
  IBAN_RE.lastIndex = 0;
  for (let m = IBAN_RE.exec(text); m; m = IBAN_RE.exec(text)) {
    const length = IBAN_LENGTH[m[0].slice(0, 2)];
    if (!length) continue;
    // The candidate may run on into following capitals; keep exactly the country's length.
    let compact = "";
    let end = m.index;
    for (const ch of m[0]) {
      if (compact.length === length) break;
      end++;
      if (ch !== " ") compact += ch;
    }
    if (compact.length !== length || !ibanChecksumOk(compact)) continue;
    if (/[A-Z0-9]/.test(text[end] ?? "") && text[end - 1] !== " " && text[end] !== " ") continue;
    out.push({ start: m.index, end, kind: "iban" });
    IBAN_RE.lastIndex = end;
  }
}

// Written plain, or in groups of four (Amex and Diners: 4-6-5 / 4-6-4) with one kind of separator.
const CARD_RE =
  /(?<![\w.+-])(?:\d{13,19}|\d{4}([ -])\d{4}\1\d{4}\1\d{1,7}|\d{4}([ -])\d{6}\2\d{4,5})(?![\w-])/g;

function luhnOk(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Issuer prefixes and lengths (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay, Maestro, UATP). */
function issuerOk(d: string): boolean {
  const n = d.length;
  const p2 = Number(d.slice(0, 2));
  const p4 = Number(d.slice(0, 4));
  if (d[0] === "4") return n === 13 || n === 16 || n === 19;
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return n === 16;
  if (p2 === 34 || p2 === 37) return n === 15;
  if (p2 === 36 || p2 === 38 || p2 === 39 || (p4 >= 3000 && p4 <= 3059)) return n >= 14 && n <= 19;
  if (p4 >= 3528 && p4 <= 3589) return n >= 16 && n <= 19;
  if (d.startsWith("6011") || p2 === 65 || (p4 >= 6440 && p4 <= 6499) || p2 === 62) return n >= 16 && n <= 19;
  if (p2 === 50 || (p2 >= 56 && p2 <= 69)) return n >= 12 && n <= 19;
  if (d[0] === "1") return n === 15;
  return false;
}

function findCards(text: string, out: Finding[]): void {
  CARD_RE.lastIndex = 0;
  for (let m = CARD_RE.exec(text); m; m = CARD_RE.exec(text)) {
    const raw = m[0];
    const digits = raw.replace(/\D/g, "");
    if (digits.length < 13 || digits.length > 19 || /^(\d)\1+$/.test(digits)) continue;
    if (issuerOk(digits) && luhnOk(digits))
      out.push({ start: m.index, end: m.index + raw.length, kind: "credit_card" });
  }
}

// --- Phone numbers and SSNs ---------------------------------------------------------------------------

const PHONE_RES: RegExp[] = [
  // International: +CC then groups separated by one space, dot or dash, or one block of digits.
  /(?<![\w+])\+(?:\d{8,15}|\d{1,3}(?:[ .-]\(?\d{1,12}\)?){1,6})(?![\w-])/g,
  // North American: (415) 555-0132, 415-555-0132, 415.555.0132.
  /(?<![\w)+.-])(?:\(\d{3}\) ?|\d{3}[-.])\d{3}[-.]\d{4}(?![\w-])/g,
  // Trunk-prefixed national numbers: 090-1234-5678, 09-7625400.
  /(?<![\w+.-])0\d{1,4}-(?:\d{3,4}-\d{4}|\d{7})(?![\w-])/g,
];
/** A bare mobile number needs a word that says it is one. */
const PHONE_CONTEXT_RE =
  /(?:phone|mobile|cell|tel|number|whatsapp|call me|sms)\b[^\n\d]{0,20}?(?<![\w+])(1[3-9]\d{9}|[2-9]\d{9})(?![\w-])/gi;

const PHONE_CONTEXT_AT = sticky(PHONE_CONTEXT_RE);
const TEN_DIGITS_RE = /\d{10}/g;

/**
 * PERF (see scan.ts): the number starts a run of 10+ digits, and its word (3–8 letters) starts 3–28
 * characters before it.
 */
const phoneContextStart: NextStart = (text, from) => {
  TEN_DIGITS_RE.lastIndex = from + 3;
  for (let g = TEN_DIGITS_RE.exec(text); g; g = TEN_DIGITS_RE.exec(text)) {
    const before = text.charCodeAt(g.index - 1);
    if (!isWordCode(before) && before !== 43) return Math.max(from, g.index - 28);
  }
  return -1;
};

function findPhones(text: string, out: Finding[]): void {
  for (const re of PHONE_RES) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const digits = m[0].replace(/\D/g, "").length;
      if (digits >= 8 && digits <= 15)
        out.push({ start: m.index, end: m.index + m[0].length, kind: "phone" });
    }
  }
  for (
    let m = matchFrom(text, PHONE_CONTEXT_AT, phoneContextStart, 0);
    m;
    m = matchFrom(text, PHONE_CONTEXT_AT, phoneContextStart, m.index + m[0].length)
  ) {
    const start = m.index + m[0].length - m[1].length;
    out.push({ start, end: start + m[1].length, kind: "phone" });
  }
}

const SSN_RE = /(?<![\w.-])(\d{3})([- .])(\d{2})\2(\d{4})(?![\w.-])/g;

function findSsns(text: string, out: Finding[]): void {
  SSN_RE.lastIndex = 0;
  for (let m = SSN_RE.exec(text); m; m = SSN_RE.exec(text)) {
    const area = Number(m[1]);
    if (area === 0 || area === 666 || area >= 900 || m[3] === "00" || m[4] === "0000") continue;
    out.push({ start: m.index, end: m.index + m[0].length, kind: "ssn" });
  }
}

/** The patterns run at candidate starts only, for the test that compares them with a global search. */
export const personalScans: Record<string, CandidateScan> = {
  email: { pattern: EMAIL_RE, nextStart: emailStart },
  ipv4: { pattern: IPV4_RE, nextStart: ipv4Start },
  ipv6: { pattern: IPV6_CANDIDATE_RE, nextStart: ipv6Start },
  phoneContext: { pattern: PHONE_CONTEXT_RE, nextStart: phoneContextStart },
  home: { pattern: HOME_RE, nextStart: homeStart },
  dashedHome: { pattern: DASHED_HOME_RE, nextStart: dashedHomeStart },
};

/**
 * `code`: the text is a repository file (see `RedactOptions.mode`). `lower`: the text lower-cased, for
 * the keyword tests (PERF: a substring search instead of a case-insensitive regex each).
 */
export function findPersonalData(
  text: string,
  out: Finding[],
  code = false,
  lower = text.toLowerCase(),
): void {
  findMachineIdentity(text, out);
  findHomePaths(text, lower, out);
  findEmails(text, out);
  findIps(text, out, code);
  if (/\d{4}/.test(text)) {
    findIbans(text, out);
    findCards(text, out);
    findPhones(text, out);
    findSsns(text, out);
  }
}
