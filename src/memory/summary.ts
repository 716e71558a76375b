/**
 * Session summaries for `summary.md` (what the SessionStart prelude shows). With an LLM the indexer
 * asks for one; without, `extractiveSummary` picks the same three things from the text itself:
 * what was discussed, what was decided (decision sentences), which files and identifiers came up.
 */
import { renameSync, writeFileSync } from "node:fs";
import type { Chunk, EntityMention, SummaryEntry } from "../store/types.ts";
import { extractGraph, FILE_EXTENSIONS } from "./extract.ts";

const DECISION =
  /\b(?:decid\w*|agreed?|we(?:'ll| will) (?:use|go|keep|switch)|let's|going with|chose|choose|switch(?:ed)? to|settled on|plan(?:ned)? (?:is|to)|instead of|the fix (?:is|was)|fixed|resolved|must|should(?: not)?|don't|do not|never|always|renamed?|replaced?|removed?|added?|moved?)\b/i;
/**
 * A question is not a decision: a question mark ending a clause (not `?` inside a URL such as
 * `/login?next=/`), a sentence opening like a question (an auxiliary then its subject: "Should we use Redis", "How do we …"), or an
 * indirect one ("not sure whether we should …", "I wonder if …").
 */
const QUESTION_MARK = /\?(?=[\s"')\]]|$)/;
// "do" and "have" also open instructions ("Have the CI use Node 20", "Do the migration first"): only
// with a pronoun after them do they open a question ("Do we keep it?", "Have you tried …").
const QUESTION_OPENING =
  /^(?:(?:what|which|why|how|when|where|who)\s+)?(?:(?:should|shall|could|would|can|does|did|is|are|was|were|will|has)\s+(?:we|i|you|it|this|that|they|there|the|he|she|our|my|your)|(?:do|have)\s+(?:we|i|you|it|they|he|she))\b/i;
const INDIRECT_QUESTION = /\b(?:whether|wonder(?:ing)? if|not sure (?:if|about)|check (?:if|whether))\b/i;
/**
 * An agent narrating its next step ("Now let me read the file and replace it:") is not a decision: a
 * "let me" opening, or a sentence ending in a colon that introduces a tool call or a list.
 */
const NARRATION = /^(?:(?:now|first|next|then|ok(?:ay)?|so),?\s+)?let me\b|:$/i;
/** Interjections that open a reply ("Great,", "Thanks!", "Ok so"): what follows them is read alone. */
const ACKNOWLEDGEMENT =
  /^(?:(?:great|thanks?(?: you)?|thx|perfect|awesome|nice|cool|ok(?:ay)?|yes|yeah|yep|sure|good|hi|hello|hey|right|sounds good|got it|alright|excellent|wonderful|oh|ah|wow|so|well)\b[\s,!.:;-]*)+/i;
/**
 * Words that carry no content of their own: pronouns, function words and the decision verbs. A sentence
 * naming nothing beyond them ("that fixed it", "let's do that", "that should work") is an
 * acknowledgement, not a decision worth a line of every SessionStart prelude.
 */
const FILLER_WORDS = new Set(
  (
    "a an the this that these those it its it's i i'm i've me my we we'll we've we're us our you you're your " +
    "he she they them their there here so then now just also too very really all both it's that's what's " +
    "is are was were be been being am do does did done doing have has had will would shall should could can " +
    "may might must not no yes to of in on at for with by from as and or but if up out again still " +
    "decided decide agreed agree let's lets going go went with chose choose switched switch settled plan " +
    "planned instead fix fixed fixes resolved resolve works work worked working rename renamed replace " +
    "replaced remove removed add added move moved don't never always one thing things way stuff ok okay " +
    "great thanks thank perfect awesome nice cool good fine sure right well"
  ).split(" "),
);
/** A decision names at least this many words of its own (SQLite, store; drop, Python 2). */
const MIN_CONTENT_WORDS = 2;

/**
 * Whether a sentence states a decision or commitment ("We'll use SQLite for the store", "Decided to
 * drop Python 2"): it has a decision word, is not a question, and names something beyond filler
 * ("Great, that fixed it." and "Should we use Redis?" are not decisions).
 */
export function isDecision(sentence: string): boolean {
  if (!DECISION.test(sentence) || QUESTION_MARK.test(sentence)) return false;
  const rest = sentence.replace(ACKNOWLEDGEMENT, "");
  if (QUESTION_OPENING.test(rest) || INDIRECT_QUESTION.test(rest) || NARRATION.test(rest.trim()))
    return false;
  const words = rest.toLowerCase().match(/[\p{L}\p{N}](?:[\p{L}\p{N}'._/-]*[\p{L}\p{N}])?/gu) ?? [];
  return words.filter((word) => !FILLER_WORDS.has(word)).length >= MIN_CONTENT_WORDS;
}

/** A sentence ends at . ! ? followed by space (so `4.1.5` and `a.yml` stay whole) or at a line break. */
const SENTENCE_BREAK = /(?<=[.!?])\s+|\n+/;
const MAX_DECISIONS = 4;
const MAX_SENTENCE_CHARS = 220;
const MAX_TERMS = 12;
/** An entry stays well inside the prelude's budget (3,500 characters) so several sessions fit. */
export const MAX_ENTRY_CHARS = 1_200;

function clip(text: string, max: number): string {
  const t = text.replace(/\s+/g, " ").trim();
  if (t.length <= max) return t;
  let head = t.slice(0, max - 1);
  // A redaction marker cut in half ("… my email is [R…") reads as damaged text: drop it whole.
  const bracket = head.lastIndexOf("[");
  if (bracket >= 0 && !head.includes("]", bracket) && t.startsWith("[REDACTED:", bracket))
    head = head.slice(0, bracket);
  return `${head.trimEnd()}…`;
}

const KNOWN_EXTENSION = new RegExp(`\\.(?:${FILE_EXTENSIONS})$`, "i");
/** Any short extension with a letter on a path's last segment (`src/x.proto`, not `v1.2`): a file. */
const ANY_EXTENSION = /\.(?=[A-Za-z0-9]{1,6}$)\d*[A-Za-z]/;
/** A path anchored at a root, home, drive or the current folder (`/etc/hosts`, `./x`, `~/y`, `C:\z`). */
const ANCHORED = /^(?:~|\.{1,2}|[A-Za-z]:)?[\\/]/;
/**
 * Libraries whose names end like a file name (Next.js, Node.js): brands, not files. A small list of the
 * common ones; `app.js` or `Button.js` are still files.
 */
const BRAND_NAMES =
  /^(?:next|node|nuxt|vue|express|three|d3|chart|ember|backbone|angular|react|solid|alpine|p5|moment|socket|deno)\.js$/i;
/** A list marker at a sentence's start (`- `, `* `, `• `, `1. `): the entry adds its own bullet. */
const LIST_MARKER = /^(?:[-*•]|\d+[.)])\s+/;

/**
 * Whether a mention names a file: no spaces, and a known extension (not a brand like Next.js), or a
 * folder path whose last segment has an extension, that is anchored (`./x`, `/x`, `~/x`), has three or
 * more segments or ends with a slash. `UI/UX`, `items/lists`, `and/or`, URLs and versions are not files.
 */
export function isFilePath(label: string): boolean {
  if (/\s/.test(label) || !/[\p{L}]/u.test(label) || label.includes("://")) return false;
  const segments = label.split(/[\\/]/);
  if (segments.length === 1) return KNOWN_EXTENSION.test(label) && !BRAND_NAMES.test(label);
  const last = segments[segments.length - 1];
  return (
    ANY_EXTENSION.test(last) || ANCHORED.test(label) || last === "" || segments.filter(Boolean).length >= 3
  );
}

const IDENTIFIER_LIKE = /[_.]|\p{Ll}\p{Lu}|\(\)$/u;

/**
 * A summary without an LLM; never empty (falls back to the first user words). `entitiesOf` gives a
 * chunk's local-extractor mentions when the caller already has them.
 */
export function extractiveSummary(
  chunks: Chunk[],
  entitiesOf: (chunk: Chunk) => EntityMention[] | undefined = () => undefined,
): string {
  const userTexts = chunks.map((c) => c.text.slice(c.turns[0]?.start ?? 0, c.turns[0]?.end ?? c.text.length));
  const topic = clip(userTexts.find((t) => t.trim()) ?? chunks[0]?.text ?? "", 200);
  const decisions: string[] = [];
  const files = new Set<string>();
  const identifiers = new Set<string>();
  for (const chunk of chunks) {
    for (const part of chunk.text.split(SENTENCE_BREAK)) {
      const sentence = part.trim().replace(LIST_MARKER, "");
      if (decisions.length < MAX_DECISIONS && sentence.length > 20 && isDecision(sentence)) {
        const clipped = clip(sentence, MAX_SENTENCE_CHARS);
        if (!decisions.includes(clipped)) decisions.push(clipped);
      }
    }
    for (const e of entitiesOf(chunk) ?? extractGraph(chunk.text).entities) {
      if (isFilePath(e.label)) files.add(e.label);
      else if (IDENTIFIER_LIKE.test(e.label) && !/\s/.test(e.label)) identifiers.add(e.label);
    }
  }
  const lines = [`Discussed: ${topic || "(no text)"}`];
  if (decisions.length) lines.push("Decided:", ...decisions.map((d) => `- ${d}`));
  if (files.size) lines.push(`Files: ${[...files].slice(0, MAX_TERMS).join(", ")}`);
  if (identifiers.size) lines.push(`Identifiers: ${[...identifiers].slice(0, MAX_TERMS).join(", ")}`);
  return clipEntry(lines.join("\n"));
}

/** Caps an entry at MAX_ENTRY_CHARS, cutting at a line. */
export function clipEntry(text: string): string {
  if (text.length <= MAX_ENTRY_CHARS) return text;
  const cut = text.lastIndexOf("\n", MAX_ENTRY_CHARS - 1);
  return `${text.slice(0, cut > 0 ? cut : MAX_ENTRY_CHARS - 1)}…`;
}

/** `YYYY-MM-DD` of a timestamp, or `undated`. */
export function entryDate(ts: string): string {
  const m = /^\d{4}-\d{2}-\d{2}/.exec(ts);
  if (m) return m[0];
  const parsed = Date.parse(ts);
  return Number.isNaN(parsed) ? "undated" : new Date(parsed).toISOString().slice(0, 10);
}

/** The whole `summary.md`: entries oldest first, each starting `## <date> · session <id>`. */
export function renderSummary(entries: SummaryEntry[]): string {
  const body = entries.map((e) => `## ${e.date} · session ${e.sessionId}\n${e.text.trim()}\n`).join("\n");
  return `# Memory of earlier sessions (written by triforge)\n\n${body}`;
}

/** Writes summary.md atomically, so the prelude never reads half a file. */
export function writeSummaryFile(path: string, entries: SummaryEntry[]): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, renderSummary(entries));
  renameSync(temporary, path);
}
