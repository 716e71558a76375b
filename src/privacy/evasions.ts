/**
 * Secrets written so that the rules miss them: a zero-width character inside a key, a key split across
 * lines, a key base64-encoded, a key spelled out with spaces between its characters. Each is undone in a
 * view of the text (a string, and for each of its characters the position it came from); the rules run
 * on the view and what they find maps back onto the text. Every view is built in one pass and is at
 * most a bounded multiple of the text, so the cost stays linear.
 */
import { findAssignments } from "./assignments.ts";
import { findProviderTokens } from "./providers.ts";
import { findStructuredSecrets } from "./structured.ts";
import type { Finding } from "./types.ts";

/** A transformed text and, for each of its characters, where it was in the original. */
interface View {
  text: string;
  origin: Int32Array;
}

/** Zero-width and invisible format characters: the soft hyphen, ZWSP, ZWNJ, ZWJ, word joiner, BOM. */
const INVISIBLE_RE = /[\u00ad\u180e\u200b-\u200d\u2060\ufeff]/g;

/**
 * The text without its invisible characters, or undefined when it has none past a leading byte-order
 * mark: `AKIA\u200bZ3MS…` reads as `AKIAZ3MS…`.
 */
export function withoutInvisible(text: string): View | undefined {
  INVISIBLE_RE.lastIndex = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  if (!INVISIBLE_RE.test(text)) return undefined;
  // PERF: one native split, not a match object per character; each invisible character is one unit.
  const pieces = text.split(INVISIBLE_RE);
  const out = pieces.join("");
  const origin = new Int32Array(out.length);
  let n = 0;
  let p = 0;
  for (const piece of pieces) {
    for (let k = 0; k < piece.length; k++) origin[n++] = p++;
    p++;
  }
  return { text: out, origin };
}

/** A finding of the view as a span of the original text. */
export function mapFinding(view: View, f: Finding): Finding {
  return { start: view.origin[f.start], end: view.origin[f.end - 1] + 1, kind: f.kind };
}

/** Builds a view out of pieces of the original, one window at a time. */
class ViewBuilder {
  private parts: string[] = [];
  private positions: number[] = [];

  constructor(private readonly source: string) {}

  get length(): number {
    return this.positions.length;
  }

  /** Copies source[start, end) into the view. */
  copy(start: number, end: number): void {
    this.parts.push(this.source.slice(start, end));
    for (let p = start; p < end; p++) this.positions.push(p);
  }

  /** Ends a window: a blank line no rule reads across. */
  separate(): void {
    this.parts.push("\n\n");
    this.positions.push(-1, -1);
  }

  build(): View {
    return { text: this.parts.join(""), origin: Int32Array.from(this.positions) };
  }
}

/** The rules that recognise a secret by its format: provider tokens and structures (PEM, URLs…). */
function findFormats(text: string, out: Finding[]): void {
  const lower = text.toLowerCase();
  findProviderTokens(text, lower, out);
  findStructuredSecrets(text, out, lower);
}

const isTokenCode = (c: number) =>
  (c >= 48 && c <= 57) ||
  (c >= 65 && c <= 90) ||
  (c >= 97 && c <= 122) ||
  c === 95 ||
  c === 45 ||
  c === 43 ||
  c === 47 ||
  c === 61 ||
  c === 46;

/** A part of a split key on each side of a line break is at least this long. */
const MIN_SPLIT_PART = 6;
const MAX_SPLIT_PART = 200;
/** A key split over more line breaks than this is not followed (each line is in at most this many + 1 windows). */
const MAX_SPLIT_LINES = 2;

/**
 * `AKIAZ3MSJK\n4QWERTY7XQ`: a key broken over lines. Where a line ends in a run of token characters and
 * the next starts with one, the runs are joined in a view and the format rules run on it; what they find
 * across a join is a secret of the text.
 */
export function findSplitSecrets(text: string, out: Finding[], keywords: Set<string>): void {
  // A provider's key starts with its keyword: with none in the text there is no key to put together.
  if (!keywords.size) return;
  const view = new ViewBuilder(text);
  const joins: number[] = [];
  for (let nl = text.indexOf("\n"); nl >= 0 && view.length < text.length; nl = text.indexOf("\n", nl + 1)) {
    const lineEnd = nl > 0 && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
    let start = lineEnd;
    while (start > 0 && lineEnd - start < MAX_SPLIT_PART && isTokenCode(text.charCodeAt(start - 1))) start--;
    if (lineEnd - start < MIN_SPLIT_PART || !holdsDigit(text, start, lineEnd)) continue;
    // The runs that follow, one a line, while each fills its line: [start, end) of each.
    const parts: number[] = [];
    let next = nl + 1;
    while (parts.length < 2 * MAX_SPLIT_LINES) {
      let end = next;
      while (end < text.length && end - next < MAX_SPLIT_PART && isTokenCode(text.charCodeAt(end))) end++;
      if (end - next < MIN_SPLIT_PART) break;
      parts.push(next, end);
      const c = text.charCodeAt(end);
      const following = c === 13 && text.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
      if ((c !== 10 && following === end + 1) || following >= text.length) break;
      next = following;
    }
    // One window for each number of lines joined: a word on the line after a key must not spoil it.
    for (let k = 2; k <= parts.length; k += 2) {
      view.copy(start, lineEnd);
      for (let q = 0; q < k; q += 2) {
        joins.push(view.length);
        view.copy(parts[q], parts[q + 1]);
      }
      view.separate();
    }
  }
  if (!joins.length) return;
  const built = view.build();
  const found: Finding[] = [];
  findFormats(built.text, found);
  let j = 0;
  for (const f of found.sort((a, b) => a.start - b.start)) {
    while (j < joins.length && joins[j] <= f.start) j++;
    // Only what crosses a join: the rest the main pass found already.
    if (j < joins.length && joins[j] < f.end && built.origin[f.start] >= 0 && built.origin[f.end - 1] >= 0)
      out.push(mapFinding(built, f));
  }
}

/** A generated key of this length almost always holds a digit; words and armour lines (`-----BEGIN`) do not. */
function holdsDigit(text: string, start: number, end: number): boolean {
  for (let p = start; p < end; p++) if (text.charCodeAt(p) >= 48 && text.charCodeAt(p) <= 57) return true;
  return false;
}

const isBase64Code = (c: number) =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 43 || c === 47;
let base64Chars: Uint8Array | undefined;
/** For each UTF-16 unit: 1 for a base64 character, 2 for `-` and `_` (URL-safe, inside a run), else 0. */
function base64Table(): Uint8Array {
  if (!base64Chars) {
    base64Chars = new Uint8Array(0x10000);
    for (let c = 0; c < 128; c++) base64Chars[c] = isBase64Code(c) ? 1 : c === 45 || c === 95 ? 2 : 0;
  }
  return base64Chars;
}
/** The base64 of a 15-character token; shorter runs cannot hold a provider key. */
const MIN_BASE64_RUN = 20;
const MAX_BASE64_RUN = 4096;

const base64Value = (c: number) =>
  c >= 97 ? c - 71 : c >= 65 ? c - 65 : c >= 48 && c <= 57 ? c + 4 : c === 43 || c === 45 ? 62 : 63;

/**
 * PERF: whether the base64 run [start, end) can encode ASCII text, read in place: each byte under 128
 * clears one bit in the characters that carry it (the first of four, bit 3 of the second, bit 1 of the
 * third), so a random run fails within a few characters, before any decoding.
 */
function mayEncodeAscii(text: string, start: number, end: number): boolean {
  for (let p = start; p < end; p++) {
    const v = base64Value(text.charCodeAt(p));
    const k = (p - start) & 3;
    if ((k === 0 && v >= 32) || (k === 1 && v & 8) || (k === 2 && v & 2)) return false;
  }
  return true;
}

/** Decodes a base64 run (standard or URL-safe, padded or not) to text, or undefined when it is not text. */
function decodeText(run: string): string | undefined {
  let b64 = run.replace(/-/g, "+").replace(/_/g, "/");
  const pad = b64.length % 4;
  if (pad === 1) return undefined;
  if (pad) b64 += "=".repeat(4 - pad);
  const decoded = atob(b64);
  for (let i = 0; i < decoded.length; i++) {
    const c = decoded.charCodeAt(i);
    if (!((c >= 32 && c < 127) || c === 9 || c === 10 || c === 13)) return undefined;
  }
  return decoded;
}

/**
 * `QUtJQVozTVNKSzRRV0VSVFk3WFE=`: a run of base64 (20+ characters) whose decoded text holds a key of a
 * known format is redacted whole, as that kind. The decoded texts are read in one pass, one a line.
 */
export function findEncodedSecrets(text: string, out: Finding[]): void {
  const runs: number[] = [];
  const decodedTexts: string[] = [];
  const offsets: number[] = [];
  let length = 0;
  const table = base64Table();
  for (let i = 0; i < text.length; i++) {
    // PERF: one table lookup a character (1 starts a run, 2 continues one).
    while (i < text.length && table[text.charCodeAt(i)] !== 1) i++;
    let end = i;
    while (end < text.length && table[text.charCodeAt(end)] !== 0) end++;
    const runEnd = end;
    while (end < text.length && end - runEnd < 2 && text.charCodeAt(end) === 61) end++;
    if (runEnd - i >= MIN_BASE64_RUN && runEnd - i <= MAX_BASE64_RUN && mayEncodeAscii(text, i, runEnd)) {
      const decoded = decodeText(text.slice(i, runEnd));
      if (decoded && decoded.length >= 15) {
        runs.push(i, end);
        offsets.push(length);
        decodedTexts.push(decoded);
        length += decoded.length + 2;
      }
    }
    i = end;
  }
  if (!runs.length) return;
  const found: Finding[] = [];
  findFormats(decodedTexts.join("\n\n"), found);
  let r = 0;
  let pushed = -1;
  for (const f of found.sort((a, b) => a.start - b.start)) {
    while (r + 1 < offsets.length && offsets[r + 1] <= f.start) r++;
    // One finding a run, of the kind found first in it.
    if (r === pushed) continue;
    pushed = r;
    out.push({ start: runs[2 * r], end: runs[2 * r + 1], kind: f.kind });
  }
}

/** Spaced-out characters shorter than this are words (`a b c`), not a key. */
const MIN_SPACED_CHARS = 12;
/** Characters of the line before spaced-out characters kept in the view: a name may stand there. */
const SPACED_CONTEXT = 80;
/** Longer runs of spaced characters are text art or a spaced alphabet, not a key. */
const MAX_SPACED_CHARS = 256;

/**
 * `A K I A Z 3 M S …`: a key spelled out with one space between its characters. Each such run (12+
 * characters) is written without its spaces in a view, after the start of its line (so `password: K x 9 …`
 * keeps its name), and every rule but personal data runs on it.
 */
export function findSpacedSecrets(text: string, out: Finding[]): void {
  const view = new ViewBuilder(text);
  const runs: [number, number][] = [];
  // PERF: from one space to the next (indexOf), and a second space two further on is tested first.
  for (let s = text.indexOf(" "); s >= 0; s = text.indexOf(" ", s + 1)) {
    const i = s - 1;
    if (text.charCodeAt(i + 3) !== 32 || !isSpacedAt(text, i)) continue;
    let end = i;
    let chars = 1;
    while (text.charCodeAt(end + 1) === 32 && isSingle(text, end + 2)) {
      end += 2;
      chars++;
    }
    if (chars >= MIN_SPACED_CHARS && chars <= MAX_SPACED_CHARS && view.length < text.length) {
      let lineStart = i;
      while (lineStart > 0 && i - lineStart < SPACED_CONTEXT && text[lineStart - 1] !== "\n") lineStart--;
      view.copy(lineStart, i);
      const from = view.length;
      for (let p = i; p <= end; p += 2) view.copy(p, p + 1);
      runs.push([from, view.length]);
      view.separate();
    }
    s = end;
  }
  if (!runs.length) return;
  const built = view.build();
  const found: Finding[] = [];
  const lower = built.text.toLowerCase();
  findProviderTokens(built.text, lower, found);
  findStructuredSecrets(built.text, found, lower);
  if (lower.length === built.text.length) findAssignments(built.text, lower, found);
  let r = 0;
  for (const f of found.sort((x, y) => x.start - y.start)) {
    while (r < runs.length && runs[r][1] <= f.start) r++;
    // Only what lies in a spaced-out run: the context before it was read by the main pass.
    if (r === runs.length || f.end <= runs[r][0]) continue;
    const [from, to] = runs[r];
    out.push(mapFinding(built, { start: Math.max(f.start, from), end: Math.min(f.end, to), kind: f.kind }));
  }
}

/** A single non-space character at `i`: the first of a spaced-out run when another follows a space. */
const isSpacedAt = (text: string, i: number) =>
  isSingle(text, i) && text.charCodeAt(i + 1) === 32 && isSingle(text, i + 2);

/** A visible character with no other visible character right after it. */
function isSingle(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (!(c > 32 && c < 127)) return false;
  const next = text.charCodeAt(i + 1);
  return !(next > 32 && next < 127);
}
