/**
 * The privacy layer: nothing unredacted reaches the disk or a remote LLM.
 *
 * `redact()` runs every rule family over the text, merges the spans they found and replaces each with
 * `[REDACTED:<kind>]`. It is imported on the Stop-hook path, so this module and everything it imports are
 * plain functions over strings: no dependencies, and every pattern is compiled on first use.
 */
import { findAssignments } from "./assignments.ts";
import {
  findEncodedSecrets,
  findSpacedSecrets,
  findSplitSecrets,
  mapFinding,
  withoutInvisible,
} from "./evasions.ts";
import { findPersonalData } from "./personal.ts";
import { findProviderTokens } from "./providers.ts";
import { maskCandidates, needsReview, strictEntropyFindings } from "./review.ts";
import { findStructuredSecrets } from "./structured.ts";
import { isPlainIdentifier, marker } from "./text.ts";
import type { Finding } from "./types.ts";
import { findUserRules, loadProjectRules } from "./user-rules.ts";

export type { MaskedCandidate } from "./review.ts";
export type { Finding };
export { loadProjectRules, maskCandidates };

/**
 * Bumped whenever what code mode redacts changes (a rule added, narrowed or widened), so a code index
 * redacted by older rules is redacted again instead of serving their output.
 */
export const CODE_REDACTION_VERSION = 2;

export interface RedactOptions {
  /** Adds the project's `.triforge/exclude.txt` and config `exclude` rules. */
  projectRoot?: string;
  /** More rules in the same syntax (a literal, or `/regex/flags`). */
  extraRules?: string[];
  /**
   * `"code"` for repository files: identifiers, list elements and version numbers are read as code, not
   * as secrets or addresses. The default reads conversation text.
   */
  mode?: "conversation" | "code";
}

export interface RedactResult {
  text: string;
  /** Something that still looks like a credential is left near a trigger word: see `maskCandidates`. */
  review: boolean;
  findings: { kind: string }[];
}

/** Kinds named after what was matched generically; a provider or personal-data kind says more. */
const GENERIC_KINDS = new Set(["secret", "token", "password", "auth", "entropy"]);

/** Kinds whose value, once found, is a secret wherever else it appears in the same text. */
const SECRET_KINDS_EXCLUDED_FROM_REPEATS = new Set([
  "home",
  "username",
  "ip",
  "phone",
  "custom",
  "private_key",
]);
/** Bounds the extra scans: each distinct secret costs one pass over the text. */
const MAX_REPEAT_SCANS = 32;

/** `ANY_id=s3cr3t… ANY_token=s3cr3t…`: a secret found once is redacted everywhere it occurs. */
function findRepeats(text: string, found: Finding[], code: boolean): void {
  const seen = new Set<string>();
  const count = found.length;
  for (let i = 0; i < count && seen.size < MAX_REPEAT_SCANS; i++) {
    const f = found[i];
    if (f.end - f.start < 8 || SECRET_KINDS_EXCLUDED_FROM_REPEATS.has(f.kind)) continue;
    const value = text.slice(f.start, f.end);
    // In code a plain identifier repeats because the code uses the name: erasing it everywhere wrecks the file.
    if (seen.has(value) || (code && isPlainIdentifier(value))) continue;
    seen.add(value);
    for (let p = text.indexOf(value); p >= 0; p = text.indexOf(value, p + value.length)) {
      if (p !== f.start) found.push({ start: p, end: p + value.length, kind: f.kind });
    }
  }
}

/** Sorts and merges overlapping findings, so each stretch of text is replaced once. */
export function mergeFindings(findings: Finding[]): Finding[] {
  const sorted = findings.filter((f) => f.end > f.start).sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: Finding[] = [];
  for (const f of sorted) {
    const last = merged[merged.length - 1];
    if (last && f.start < last.end) {
      if (f.end > last.end) last.end = f.end;
      if (GENERIC_KINDS.has(last.kind) && !GENERIC_KINDS.has(f.kind)) last.kind = f.kind;
      continue;
    }
    merged.push({ ...f });
  }
  return merged;
}

/** Replaces each (merged, sorted) finding with its marker. */
export function applyFindings(text: string, findings: Finding[]): string {
  let out = "";
  let p = 0;
  for (const f of findings) {
    out += text.slice(p, f.start) + marker(f.kind);
    p = f.end;
  }
  return out + text.slice(p);
}

/**
 * The spans `redact()` replaces: every rule family's findings, merged and in order. For a caller that
 * needs the spans themselves (code search keeps line numbers) and not the review scan.
 */
export function findSecrets(text: string, options: RedactOptions = {}): Finding[] {
  if (!text) return [];
  // `AKIA\u200bZ3MS…`: the rules read the text without its zero-width characters.
  const visible = withoutInvisible(text);
  if (visible) return mergeFindings(findSecrets(visible.text, options).map((f) => mapFinding(visible, f)));
  const rules = [
    ...(options.projectRoot ? loadProjectRules(options.projectRoot) : []),
    ...(options.extraRules ?? []),
  ];
  const code = options.mode === "code";
  const found: Finding[] = [];
  findUserRules(text, rules, found);
  const lower = text.toLowerCase();
  // A repository file is on the user's disk already: its e-mail addresses, paths and addresses are not
  // worth an altered line in a snippet. Code mode redacts credentials only.
  if (!code) findPersonalData(text, found, code, lower);
  // A lower-cased text of another length (`İ` becomes two characters) is no map of the text's positions:
  // trigger words are then searched in the text itself.
  const sameLength = lower.length === text.length;
  const triggers: number[] | undefined = sameLength ? [] : undefined;
  const keywords = findProviderTokens(text, lower, found, triggers);
  findStructuredSecrets(text, found, lower, code);
  findAssignments(text, sameLength ? lower : text, found, code, triggers);
  findEncodedSecrets(text, found);
  // Keys split over lines or spelled out with spaces: a conversation's evasions, not a file's layout.
  if (!code) {
    findSplitSecrets(text, found, keywords);
    findSpacedSecrets(text, found);
  }
  findRepeats(text, found, code);
  return mergeFindings(found);
}

export function redact(text: string, options: RedactOptions = {}): RedactResult {
  if (!text) return { text, review: false, findings: [] };
  const merged = findSecrets(text, options);
  const redacted = merged.length ? applyFindings(text, merged) : text;
  return { text: redacted, review: needsReview(redacted), findings: merged.map((f) => ({ kind: f.kind })) };
}

/**
 * The pass for text flagged `review` when no LLM is available: also redacts every string that looks
 * generated near a trigger word, and every long high-entropy string anywhere.
 */
export function strictEntropyPass(text: string): { text: string; findings: { kind: string }[] } {
  const merged = mergeFindings(strictEntropyFindings(text));
  return {
    text: merged.length ? applyFindings(text, merged) : text,
    findings: merged.map((f) => ({ kind: f.kind })),
  };
}
