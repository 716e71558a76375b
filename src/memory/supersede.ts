/**
 * Superseded decisions, without an LLM: a later decision on the same subject replaces an earlier one.
 * The same subject is the same file or code identifier plus one more word in common ("sessions in Redis,
 * `src/auth/session.ts`" → "sessions as signed cookies in `src/auth/session.ts`"), or most of the
 * shorter decision's words ("Use Postgres for the orders database" → "Use SQLite for the orders
 * database"). Two decisions that share only a file ("retry in worker.ts", "log errors in worker.ts")
 * are about different things and both stay. Pure: no I/O, no imports (the prelude hook runs it).
 */

export interface DatedDecision {
  /** The decision line as summary.md holds it (without its bullet). */
  text: string;
  /** YYYY-MM-DD of the session that took it. */
  date: string;
  /** Where it came from (entry and line index), handed back untouched. */
  entry: number;
  line: number;
}

export interface Replacement {
  by: DatedDecision;
}

/** Paths and code identifiers: `src/a.ts`, `user.id`, `parseUser`, `SESSION_SECRET`, back-ticked terms. */
const SUBJECT =
  /`([^`\n]{2,60})`|(?<![\w/.-])((?:[\w@.+-]+\/)+[\w@.+-]*\w|[\w-]+\.[a-z]{1,5}\b|[a-z]+(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)/g;

/** Words that say nothing about what a decision is about. */
const COMMON = new Set(
  (
    "the a an and or but not no nor for with without from into onto over under about after before this that these those " +
    "it its is are was were be been will would should shall must can could may might do does did done have has had " +
    "we i you they he she us our my your their them then than so also just only still yet very more most less instead " +
    "use used using keep kept make made add added remove removed move moved switch switched replace replaced need needs " +
    "let let's lets go going went set all any each every one two new old now here there when where which what why how " +
    "because since while until why: file files code way thing things part rather them via per"
  ).split(" "),
);

function subjects(text: string): Set<string> {
  const found = new Set<string>();
  for (const m of text.matchAll(SUBJECT)) found.add((m[1] ?? m[2]).toLowerCase());
  return found;
}

/** Content words, lightly stemmed so "sessions" meets "session" and "stored" meets "store". */
function words(text: string): Set<string> {
  const out = new Set<string>();
  for (const raw of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (raw.length < 3 || COMMON.has(raw)) continue;
    out.add(raw.replace(/(?:ies|es|s|ed|ing)$/, "") || raw);
  }
  return out;
}

/** The decision as said, without the reason summary.md appends to it and a clip mark. */
export function decisionCore(text: string): string {
  return text
    .replace(/\s*\(why: [^)]*\)?…?$/, "")
    .replace(/…$/, "")
    .trim();
}

/** What a decision is about, worked out once per decision rather than once per pair compared. */
interface Subject {
  subjects: Set<string>;
  words: Set<string>;
  /** The words of its subjects, which do not count as the one more word in common. */
  subjectWords: Set<string>;
}

function subjectOf(decision: DatedDecision): Subject {
  const core = decisionCore(decision.text);
  const found = subjects(core);
  return {
    subjects: found,
    words: words(core),
    subjectWords: new Set([...found].flatMap((s) => [...words(s)])),
  };
}

function sameSubject(a: Subject, b: Subject): boolean {
  const [wa, wb] = [a.words, b.words];
  if ([...a.subjects].some((s) => b.subjects.has(s)))
    return [...wa].some((w) => wb.has(w) && !a.subjectWords.has(w));
  const sharedWords = [...wa].filter((w) => wb.has(w)).length;
  return sharedWords >= 2 && sharedWords >= 0.5 * Math.min(wa.size, wb.size);
}

/**
 * Which decisions a later one replaced: decisions in date order (oldest first, as summary.md lists its
 * entries); a decision is replaced by the newest later decision of another session on the same subject.
 */
export function supersededDecisions(decisions: DatedDecision[]): Map<DatedDecision, Replacement> {
  const replaced = new Map<DatedDecision, Replacement>();
  const about = decisions.map(subjectOf);
  // Two decisions on one subject share a subject or a word, so only those are compared (every pair was:
  // 5 s of a one-session index run at 16× LoCoMo, whose summary.md holds thousands of decisions).
  const keys = about.map((a) => [
    ...[...a.subjects].map((s) => `s:${s}`),
    ...[...a.words].map((w) => `w:${w}`),
  ]);
  const holders = new Map<string, number[]>();
  keys.forEach((own, i) => {
    for (const key of own) {
      let list = holders.get(key);
      if (!list) holders.set(key, (list = []));
      list.push(i);
    }
  });
  for (let i = 0; i < decisions.length; i++) {
    const later = new Set<number>();
    for (const key of keys[i]) for (const j of holders.get(key) ?? []) if (j > i) later.add(j);
    for (const j of [...later].sort((x, y) => y - x)) {
      const [older, newer] = [decisions[i], decisions[j]];
      if (newer.entry === older.entry || newer.date < older.date) continue;
      if (sameSubject(about[i], about[j])) {
        replaced.set(older, { by: newer });
        break;
      }
    }
  }
  return replaced;
}
