/**
 * Secrets in repository files never reach the code index: a file's text is redacted before it is
 * chunked, so chunk texts on disk, BM25 terms, vectors and snippets all see `[REDACTED:<kind>]`.
 *
 * `redact()` replaces a multi-line secret (a PEM private key) with one marker, which would shift every
 * later line; snippets must keep their exact line numbers, so the newlines a redaction removed are put
 * back after its marker.
 */
import { applyFindings, findSecrets } from "../privacy/index.ts";

const MARKERS = /((?:\[REDACTED:[a-z0-9_]+\])+)/;

const countNewlines = (text: string) => {
  let count = 0;
  for (let p = text.indexOf("\n"); p >= 0; p = text.indexOf("\n", p + 1)) count++;
  return count;
};

/**
 * `text` with every secret replaced by its marker, line for line: the result has the same lines.
 * `rules` are the project's own (privacy's loadProjectRules), loaded once per indexing pass.
 */
export function redactKeepingLines(text: string, rules: string[] = []): { text: string; redactions: number } {
  // The spans, not redact(): its review flag is for the capture hook's LLM cleaner, and repository files
  // are never sent to one.
  const spans = findSecrets(text, { extraRules: rules, mode: "code" });
  const redactions = spans.length;
  if (!redactions) return { text, redactions };
  const redacted = applyFindings(text, spans);
  // A marker holds no newline, so the lines are kept unless a redacted span held one. PERF: the spans
  // are read, not the whole text twice.
  if (!spans.some((span) => holdsNewline(text, span.start, span.end))) return { text: redacted, redactions };
  return { text: restoreNewlines(text, redacted), redactions };
}

/** Whether text[start, end) holds a newline; spans do not overlap, so all of them are read once at most. */
const holdsNewline = (text: string, start: number, end: number) => {
  for (let i = start; i < end; i++) if (text.charCodeAt(i) === 10) return true;
  return false;
};

/**
 * Walks the redacted text's pieces (kept text, runs of markers) against the original: kept text is a
 * verbatim copy, so what lies between two kept pieces in the original is what a marker run replaced,
 * and its newlines follow the markers. Output is built from the redacted text only, so a misjudged
 * alignment can misplace a line break but never bring back a secret.
 */
function restoreNewlines(original: string, redacted: string): string {
  const pieces = redacted.split(MARKERS); // kept, markers, kept, markers, …, kept
  let out = pieces[0];
  let at = pieces[0].length;
  for (let i = 1; i < pieces.length; i += 2) {
    const markers = pieces[i];
    const kept = pieces[i + 1];
    const last = i + 2 >= pieces.length;
    // The final kept piece is the original's suffix; any other is the next match after a non-empty gap.
    const next = last ? original.length - kept.length : original.indexOf(kept, at + 1);
    if (next < at) return padLines(original, redacted);
    out += markers + "\n".repeat(countNewlines(original.slice(at, next))) + kept;
    at = next + kept.length;
  }
  return out;
}

/** Fallback that never happens on text redact() produced: keeps the line count, not the positions. */
function padLines(original: string, redacted: string): string {
  return redacted + "\n".repeat(Math.max(0, countNewlines(original) - countNewlines(redacted)));
}
