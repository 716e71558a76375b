import {
  charClasses,
  entropy,
  isPlaceholder,
  isStandardUuid,
  looksRandom,
  REDACTION_PREFIX,
} from "./text.ts";
import type { Finding } from "./types.ts";

/**
 * What is left after the rules: a trigger word near a string that looks generated may still be a secret
 * no rule knows. Such text is flagged for review; the optional LLM cleaner sees only masked candidates,
 * and without an LLM the strict pass below redacts every such string.
 */

const TRIGGER_RE =
  /secret|token|passw|pwd|auth|private[_ -]?key|bearer|credential|api[_-]?key|kennw|mot de passe|contrase|senha|clave|chave|jeton/gi;
/**
 * The names of `secret-names.ts` in other scripts (`пароль`, `密码`, `パスワード`, `비밀번호`…). PERF: a
 * pattern of its own, run only on text with a non-ASCII character: in one pattern with the ASCII words
 * they cost the engine its fast scan for the first characters (30 ms a MB of plain ASCII), and without
 * the `i` flag (its case folding is slow on non-ASCII text) the lower, upper and capitalised forms are
 * written out.
 */
const FOREIGN_TRIGGER_RE =
  /[sS]chlüssel|SCHLÜSSEL|[пП]арол|ПАРОЛ|[тТ]окен|ТОКЕН|[кК]люч|КЛЮЧ|[сС]екрет|СЕКРЕТ|密码|密碼|口令|令牌|密钥|密鑰|私钥|パスワード|トークン|秘密鍵|キー|비밀번호|암호|토큰|비밀/g;
/** How far (in characters, same line) a candidate may be from a trigger word. */
const TRIGGER_WINDOW = 48;
const CANDIDATE_RE = /(?<![A-Za-z0-9+/=_.~-])[A-Za-z0-9+/=_.~-]{12,512}(?![A-Za-z0-9+/=_.~-])/g;
/** Content hashes that sit next to words like "token" in lockfiles and manifests. */
const HASH_PREFIX_RE = /^(?:sha(?:1|224|256|384|512)[-:]|h1:|md5[-:])/i;

export interface Candidate {
  start: number;
  end: number;
}

function isBenign(value: string): boolean {
  return (
    value.startsWith(REDACTION_PREFIX.slice(1)) ||
    isStandardUuid(value) ||
    HASH_PREFIX_RE.test(value) ||
    isPlaceholder(value) ||
    /^[\d.]+$/.test(value) ||
    /^[\w.-]+\.(?:com|org|net|io|dev|ts|js|py|rs|go|json|md|txt|yaml|yml|toml)$/i.test(value)
  );
}

/** A name about secrets (`listApiKeys`, `OAuthTokenResult`, `input_tokens`) rather than one. */
const TRIGGER_INSIDE_RE = /secret|token|passw|auth|credential|api[_-]?key|bearer/i;
/** Lower-case hex of a SHA-1 or SHA-256 length: a commit or a content hash. */
const DIGEST_RE = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

function generatedLooking(text: string, start: number, end: number): boolean {
  // A path segment or a word inside a redaction marker is not a candidate.
  if (text[start - 1] === "/" || text[end] === "/") return false;
  const value = text.slice(start, end).replace(/^[._~-]+|[._~=-]+$/g, "");
  if (TRIGGER_INSIDE_RE.test(value) || DIGEST_RE.test(value)) return false;
  return !isBenign(value) && looksRandom(value, 12);
}

/** Whether position `p` lies inside a `[REDACTED:<kind>]` marker (its kind names are trigger words). */
function insideMarker(text: string, p: number): boolean {
  // PERF: character codes; `text[k]` builds a string for each character of a non-ASCII text.
  for (let k = p; k >= 0 && p - k < 24; k--) {
    const c = text.charCodeAt(k);
    if (c === 93 && k < p) return false;
    if (c === 91) return text.startsWith(REDACTION_PREFIX, k);
  }
  return false;
}

/** Same line, and the gap between a trigger at `t` and [start, end) within the window. */
function near(text: string, t: number, start: number, end: number): boolean {
  if (t > end + TRIGGER_WINDOW || t < start - TRIGGER_WINDOW) return false;
  const from = Math.min(t, start);
  const to = Math.max(t, end);
  for (let i = from; i < to; i++) if (text[i] === "\n") return false;
  return true;
}

/**
 * Strings that look generated and sit near a trigger word, outside anything already redacted. With
 * `firstOnly`, stops at the first one (all `needsReview` wants). Text without trigger words costs one
 * regex pass.
 */
export function reviewCandidates(text: string, firstOnly = false): Candidate[] {
  const candidates: Candidate[] = [];
  const triggers: number[] = [];
  for (const re of /[^\x00-\x7f]/.test(text) ? [TRIGGER_RE, FOREIGN_TRIGGER_RE] : [TRIGGER_RE]) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text))
      if (!insideMarker(text, m.index)) triggers.push(m.index);
  }
  if (!triggers.length) return candidates;
  triggers.sort((a, b) => a - b);
  CANDIDATE_RE.lastIndex = 0;
  let t = 0;
  for (let m = CANDIDATE_RE.exec(text); m; m = CANDIDATE_RE.exec(text)) {
    const start = m.index;
    const end = start + m[0].length;
    while (t < triggers.length && triggers[t] < start - TRIGGER_WINDOW) t++;
    let close = false;
    for (let k = t; k < triggers.length && triggers[k] <= end + TRIGGER_WINDOW && !close; k++)
      close = near(text, triggers[k], start, end);
    if (!close || !generatedLooking(text, start, end)) continue;
    candidates.push({ start, end });
    if (firstOnly) break;
  }
  return candidates;
}

export function needsReview(text: string): boolean {
  return reviewCandidates(text, true).length > 0;
}

export interface MaskedCandidate {
  /** Index into the list; the cleaner answers with the ids it judges to be secrets. */
  id: number;
  start: number;
  end: number;
  /** First and last two characters and the length: never the whole value. */
  masked: string;
  /** Up to 60 characters either side, every candidate in it masked. */
  context: string;
}

function mask(value: string): string {
  const shape = `${value.length} chars, ${charClasses(value)} classes, entropy ${entropy(value).toFixed(1)}`;
  return value.length >= 16 ? `${value.slice(0, 2)}…${value.slice(-2)} (${shape})` : `… (${shape})`;
}

/**
 * The candidates of `text` in a form an LLM may see: each one masked, with its context masked too, so
 * the cleaner can judge "is this a credential?" without ever receiving one whole.
 */
export function maskCandidates(text: string): MaskedCandidate[] {
  const candidates = reviewCandidates(text);
  return candidates.map((c, id) => {
    const from = Math.max(0, c.start - 60);
    const to = Math.min(text.length, c.end + 60);
    let context = "";
    let p = from;
    for (const [j, other] of candidates.entries()) {
      if (other.end <= from || other.start >= to) continue;
      const s = Math.max(other.start, from);
      context += `${text.slice(p, s)}⟦${j === id ? "THIS" : "#"}${j === id ? "" : j} ${mask(text.slice(other.start, other.end))}⟧`;
      p = Math.min(other.end, to);
    }
    context += text.slice(p, to);
    return { id, start: c.start, end: c.end, masked: mask(text.slice(c.start, c.end)), context };
  });
}

/**
 * Without an LLM, flagged text gets this pass: every generated-looking string near a trigger word, and
 * every long one (24+ characters, three character classes) anywhere, is redacted.
 */
export function strictEntropyFindings(text: string): Finding[] {
  const findings: Finding[] = reviewCandidates(text).map((c) => ({ ...c, kind: "entropy" }));
  CANDIDATE_RE.lastIndex = 0;
  for (let m = CANDIDATE_RE.exec(text); m; m = CANDIDATE_RE.exec(text)) {
    const value = m[0];
    if (
      value.length >= 24 &&
      charClasses(value) >= 3 &&
      generatedLooking(text, m.index, m.index + value.length)
    ) {
      findings.push({ start: m.index, end: m.index + value.length, kind: "entropy" });
    }
  }
  return findings;
}
