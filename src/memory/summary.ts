/**
 * Session summaries for `summary.md` (what the SessionStart prelude shows). With an LLM the indexer
 * asks for one; without, `extractiveSummary` builds one from the text itself: what was discussed (the
 * opening request and the session's most central sentences, named by speaker when the dialogue names
 * its speakers), what was decided (found by the shape of the exchange, decisions.ts), which files and
 * identifiers came up (never a redaction marker or a secret-looking token).
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import type { Chunk, EntityMention, SummaryEntry } from "../store/types.ts";
import {
  type DecisionTurn,
  findDecisions,
  isNarration,
  isTentative,
  pickDecisions,
  QUESTION_MARK,
  sentencesOf,
} from "./decisions.ts";
import { extractGraph, FILE_EXTENSIONS } from "./extract.ts";
import { replacedDecisionKeys, replacedSidecarPath } from "./prelude.ts";
import { learnSpeakerNames } from "./recall/speakers.ts";
import { STOPWORDS, stem } from "./tokens.ts";

export { isDecision } from "./decisions.ts";

const MAX_DECISIONS = 8;
const MAX_SENTENCE_CHARS = 220;
const MAX_TERMS = 12;
/** An entry stays at half the prelude's default budget (3,200 characters) so several sessions fit. */
export const MAX_ENTRY_CHARS = 1_600;

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

/** Sentences of the session that carry its subject, next to the topic and the decisions. */
const MAX_NOTES = 6;
const MIN_NOTES = 2;
const REACTION_FACTOR = 0.2;
const YOU_FACTOR = 0.5;
const MAX_NOTE_WORDS = 40;

/**
 * The session's most central sentences: those whose content words recur most in the session (each word
 * counted once a sentence, log-damped), per square root of length, each new pick sharing little with
 * the ones before (so the notes cover the session rather than repeat its main line).
 */
function centralSentences(sentences: string[], max: number, exclude: Set<string>): string[] {
  const bags = sentences.map((s) => [...new Set(noteWords(s))]);
  const frequency = new Map<string, number>();
  for (const bag of bags) for (const w of bag) frequency.set(w, (frequency.get(w) ?? 0) + 1);
  const candidates: { sentence: string; i: number; bag: string[]; weight: number }[] = [];
  sentences.forEach((sentence, i) => {
    const n = sentence.split(/\s+/).length;
    const bag = bags[i];
    if (
      bag.length < 3 ||
      n < 6 ||
      n > MAX_NOTE_WORDS ||
      QUESTION_MARK.test(sentence) ||
      exclude.has(sentence)
    )
      return;
    // What does not change between picks: the length norm and the damping of reactions and replies.
    let weight = 1 / Math.sqrt(n);
    if (REACTION.test(sentence)) weight *= REACTION_FACTOR;
    if (/\byou(?:r|'re|'ve)?\b/i.test(sentence)) weight *= YOU_FACTOR;
    candidates.push({ sentence, i, bag, weight });
  });
  const picked = new Set<(typeof candidates)[number]>();
  const covered = new Set<string>();
  while (picked.size < max) {
    let best: (typeof candidates)[number] | undefined;
    let bestScore = 0;
    for (const c of candidates) {
      if (picked.has(c)) continue;
      let score = 0;
      for (const w of c.bag) score += (covered.has(w) ? 0.2 : 1) * Math.log1p(frequency.get(w) ?? 1);
      score *= c.weight;
      if (score > bestScore) [best, bestScore] = [c, score];
    }
    if (!best) break;
    picked.add(best);
    for (const w of best.bag) covered.add(w);
  }
  return [...picked].sort((a, b) => a.i - b.i).map((c) => c.sentence);
}

/** A sentence that opens a conversation without telling anything ("Hey John, something awesome happened"). */
const GREETING =
  /^(?:hey|hi|hello|good (?:morning|afternoon|evening)|long time|what's up|how(?:'s| is| are| have))\b/i;
/** A reply that reacts to the other side rather than telling something ("Glad you're enjoying it"). */
const REACTION =
  /^(?:(?:hey|hi|wow|oh|aw+|haha|yeah|yes|thanks?|by the way|btw)\b[\s,!.]*)*(?:glad|sounds|that(?:'s| is| sounds| looks)|they look|you(?:'re| are| must| should| look)|it(?:'s| is) (?:so |really )?(?:great|cool|awesome|amazing|nice|good)|so (?:cool|great|glad)|take a look|i'm (?:so )?(?:glad|happy|proud)|what a)\b/i;

function noteWords(sentence: string): string[] {
  return (sentence.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'._-]*/gu) ?? [])
    .filter((w) => w.length > 2 && !STOPWORDS.has(w) && !NOTE_FILLER.has(w))
    .map(stem);
}

/** Chat words that recur in every conversation without being its subject. */
const NOTE_FILLER = new Set(
  "thanks thank great good really glad happy awesome amazing love know think feel like sounds just yeah wow cool nice sure lot totally definitely let's i'm it's that's you're i've can't don't fun blast look looks seems hope hoping keen pumped excited interesting appreciate kind sweet way something anything everything always never tough hard".split(
    " ",
  ),
);

/**
 * A summary without an LLM; never empty (falls back to the first user words). `entitiesOf` gives a
 * chunk's local-extractor mentions when the caller already has them; `fileExists` tells which paths are
 * in the project (when the caller knows the project), so Files: prefers them.
 */
export function extractiveSummary(
  chunks: Chunk[],
  entitiesOf: (chunk: Chunk) => EntityMention[] | undefined = () => undefined,
  fileExists?: (path: string) => boolean,
): string {
  const turns: DecisionTurn[] = [];
  for (const chunk of chunks)
    for (const t of chunk.turns) {
      const text = chunk.text.slice(t.start, t.end);
      turns.push({ role: t.role, text, key: t.uuid, sentences: sentencesOf(text) });
    }
  const userSentences = turns
    .filter((t) => t.role === "user")
    .flatMap((t) => t.sentences?.map((s) => s.text) ?? []);
  const topicSentence =
    userSentences.find((s) => noteWords(s).length >= 3 && !REACTION.test(s) && !GREETING.test(s)) ??
    userSentences.find((s) => noteWords(s).length >= 3) ??
    userSentences.find((s) => s.trim()) ??
    chunks[0]?.text ??
    "";
  const topic = clip(topicSentence, 200);
  const found = findDecisions(turns);
  const decisions = pickDecisions(found, MAX_DECISIONS);
  const decided = new Set(found.map((d) => d.sentence));
  // Who said a note, when the dialogue names its speakers ("Thanks, Mel." names the other side).
  const nameOf = new Map<string, string>();
  for (const [name, role] of learnSpeakerNames(turns))
    if (!nameOf.has(role)) nameOf.set(role, name[0].toUpperCase() + name.slice(1));
  const speakerOf = new Map<string, string | undefined>();
  const candidates: string[] = [];
  for (const t of turns)
    for (const { text } of t.sentences ?? []) {
      if (secretLooking(text) || isTentative(text) || (t.role === "assistant" && isNarration(text))) continue;
      candidates.push(text);
      speakerOf.set(text, nameOf.get(t.role));
    }
  const notes = centralSentences(
    candidates,
    Math.max(MIN_NOTES, MAX_NOTES - decisions.length),
    new Set([topicSentence, ...decided]),
  );
  const files = new Set<string>();
  const identifiers = new Set<string>();
  for (const chunk of chunks) {
    for (const e of entitiesOf(chunk) ?? extractGraph(chunk.text).entities) {
      if (secretLooking(e.label)) continue;
      if ((isFilePath(e.label) && !notAFile(e.label)) || fileExists?.(e.label)) files.add(e.label);
      else if (IDENTIFIER_LIKE.test(e.label) && !/\s/.test(e.label)) identifiers.add(e.label);
    }
  }
  const lines = [`Discussed: ${topic || "(no text)"}`];
  for (const note of notes) {
    const speaker = speakerOf.get(note);
    lines.push(`  ${speaker ? `${speaker}: ` : ""}${clip(note, MAX_SENTENCE_CHARS)}`);
  }
  if (decisions.length)
    lines.push(
      "Decided:",
      ...decisions.map((d) =>
        clip(d.reason ? `- ${d.text} (why: ${d.reason})` : `- ${d.text}`, MAX_SENTENCE_CHARS + 2),
      ),
    );
  const fileList = [...files].sort((a, b) => Number(fileExists?.(b) ?? 0) - Number(fileExists?.(a) ?? 0));
  if (fileList.length) lines.push(`Files: ${fileList.slice(0, MAX_TERMS).join(", ")}`);
  if (identifiers.size) lines.push(`Identifiers: ${[...identifiers].slice(0, MAX_TERMS).join(", ")}`);
  return clipEntry(lines.join("\n"));
}

/** A web address without its scheme (`github.com/a/b`), or words joined by slashes (`All/Active/Done`). */
function notAFile(label: string): boolean {
  const segments = label.split("/").filter(Boolean);
  if (
    /^(?:www\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|app|co|ai|edu|gov)$/i.test(
      segments[0] ?? "",
    )
  )
    return true;
  return segments.length > 1 && segments.every((s) => /^\p{Lu}\p{Ll}+$/u.test(s));
}

/**
 * A mention that must never be listed as a file or identifier: a redaction marker, or a long run of
 * letters and digits with the spread of a generated token (a key, a hash) rather than a name.
 */
export function secretLooking(label: string): boolean {
  if (/REDACTED/i.test(label)) return true;
  // PERF: most texts have no run of 16 characters without a separator: nothing to measure.
  if (!/[^\s\\/._-]{16}/.test(label)) return false;
  for (const run of label.split(/[\s\\/._-]+/)) {
    if (run.length < 16) continue;
    const classes = [/[a-z]/, /[A-Z]/, /\d/].filter((re) => re.test(run)).length;
    if (classes >= 2 && /\d/.test(run) && shannon(run) >= 3.5) return true;
    if (/^[0-9a-f]{24,}$/i.test(run)) return true;
  }
  return false;
}

function shannon(text: string): number {
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) h -= (n / text.length) * Math.log2(n / text.length);
  return h;
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

const SUMMARY_HEAD = "# Memory of earlier sessions (written by triforge)\n\n";

/** One entry of summary.md. */
function entryText(e: SummaryEntry): string {
  return `## ${e.date} · session ${e.sessionId}\n${e.text.trim()}\n`;
}

/** The whole `summary.md`: entries oldest first, each starting `## <date> · session <id>`. */
export function renderSummary(entries: SummaryEntry[]): string {
  return SUMMARY_HEAD + entries.map(entryText).join("\n");
}

/**
 * Which store rows a summary.md written by refreshSummaryFile holds (kept in its sidecar): every
 * summary up to row `id`, the latest `ts` among them, as they stood at the store's `changes`-th change.
 */
interface SummaryChain {
  store: string;
  changes: number;
  id: number;
  ts: string;
}

/** What refreshSummaryFile reads of the store. */
export interface SummaryStore {
  summaries(): Promise<SummaryEntry[]>;
  summariesAfter(after: number): (SummaryEntry & { id: number })[];
  decisionSummaries(): SummaryEntry[];
  summaryChanges(): number;
  summaryMarks(): { id: number; ts: string };
  storeId(): string;
}

/**
 * Brings summary.md up to the store after an index run. When the file is the one this function wrote
 * last (its sidecar's size and time), no stored summary changed since (`summaryChanges`) and the new
 * ones sort after every summary it holds, they are appended to a copy of it; else it is written whole.
 * Either way the replaced decisions are worked out from the summaries that hold decisions alone (the
 * others hold none to replace or be replaced by). At 100,000 synthetic records (4 MB) the whole file
 * cost an index run ~0.1 s, growing with the store; the append costs the new entries and a copy.
 */
export async function refreshSummaryFile(path: string, store: SummaryStore): Promise<void> {
  const changes = store.summaryChanges();
  const chain = currentChain(path);
  if (chain && chain.store === store.storeId() && chain.changes === changes) {
    const added = store.summariesAfter(chain.id);
    if (added.every((e) => e.ts >= chain.ts)) {
      const text = Buffer.concat([
        readFileSync(path),
        Buffer.from(added.map((e) => `\n${entryText(e)}`).join("")),
      ]);
      writeAtomically(path, text);
      writeReplacedSidecar(path, text.length, store.decisionSummaries(), {
        ...chain,
        ...through(added, chain),
      });
      return;
    }
  }
  const entries = await store.summaries();
  const text = renderSummary(entries);
  writeAtomically(path, text);
  writeReplacedSidecar(path, Buffer.byteLength(text), entries.filter(holdsDecisions), {
    store: store.storeId(),
    changes,
    ...store.summaryMarks(),
  });
}

/** The last row id and the latest ts of `from` and `entries` together. */
function through(entries: (SummaryEntry & { id: number })[], from: { id: number; ts: string }) {
  let { id, ts } = from;
  for (const e of entries) {
    id = Math.max(id, e.id);
    if (e.ts > ts) ts = e.ts;
  }
  return { id, ts };
}

/** Writes summary.md whole, atomically, so the prelude never reads half a file. */
export function writeSummaryFile(path: string, entries: SummaryEntry[]): void {
  const text = renderSummary(entries);
  writeAtomically(path, text);
  writeReplacedSidecar(path, Buffer.byteLength(text), entries.filter(holdsDecisions));
}

function writeAtomically(path: string, text: string | Buffer): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

function holdsDecisions(entry: SummaryEntry): boolean {
  return entry.text.includes("Decided:");
}

/**
 * The decisions of the summary just written (`bytes` long) that later ones replaced, worked out from
 * its entries that hold decisions, beside it, for the SessionStart prelude (which works them out
 * itself when this file is missing or of another version of summary.md); with the rows it holds when
 * refreshSummaryFile wrote it.
 */
function writeReplacedSidecar(
  path: string,
  bytes: number,
  decided: SummaryEntry[],
  chain?: SummaryChain,
): void {
  const sidecar = replacedSidecarPath(path);
  const temporary = `${sidecar}.${process.pid}.tmp`;
  try {
    const modified = Bun.file(path).lastModified;
    const keys = replacedDecisionKeys(renderSummary(decided));
    writeFileSync(temporary, JSON.stringify({ bytes, modified, keys, ...(chain ? { chain } : {}) }));
    renameSync(temporary, sidecar);
  } catch {
    // An old sidecar no longer matches summary.md's size and time: the prelude then works it out itself.
  }
}

/** The rows summary.md holds, when its sidecar says refreshSummaryFile wrote it as it is now. */
function currentChain(path: string): SummaryChain | undefined {
  try {
    const sidecar = JSON.parse(readFileSync(replacedSidecarPath(path), "utf8"));
    const file = Bun.file(path);
    const chain = sidecar?.chain as SummaryChain | undefined;
    if (sidecar.bytes !== file.size || sidecar.modified !== file.lastModified || !chain || !(chain.id > 0))
      return undefined;
    return typeof chain.store === "string" &&
      typeof chain.changes === "number" &&
      typeof chain.ts === "string"
      ? chain
      : undefined;
  } catch {
    return undefined;
  }
}

/** The `Decided:` bullets of a summary entry, without their markers. */
export function decidedLines(summary: string): string[] {
  return (summary.match(/^Decided:\n((?:- .*\n?)*)/m)?.[1] ?? "")
    .split("\n")
    .filter((line) => line.startsWith("- "))
    .map((line) => line.slice(2));
}

/** A summary's prose without its line labels and bullets (what ROUGE scores). */
export function summaryProse(summary: string): string {
  return summary
    .split("\n")
    .map((line) =>
      line.replace(/^(?:Discussed|Decided|Files|Identifiers|Errors|Also):\s*/, "").replace(/^- /, ""),
    )
    .filter(Boolean)
    .join("\n");
}
