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
export interface Subject {
  subjects: Set<string>;
  words: Set<string>;
  /** The words of its subjects, which do not count as the one more word in common. */
  subjectWords: Set<string>;
}

/** What decision text is about: its subjects, its content words, and the words of its subjects. */
export function subjectOf(decision: Pick<DatedDecision, "text">): Subject {
  const core = decisionCore(decision.text);
  const found = subjects(core);
  return {
    subjects: found,
    words: words(core),
    subjectWords: new Set([...found].flatMap((s) => [...words(s)])),
  };
}

/**
 * A Subject as sorted ids (subjects and words numbered per call), so that comparing two decisions
 * counts shared ids by a merge instead of building sets: the same answers as sets would give.
 */
interface SubjectIds {
  subjects: Int32Array;
  words: Int32Array;
  /** Its words that are not words of its subjects (the one more word in common must be one of these). */
  freeWords: Int32Array;
}

function numbered(about: Subject[]): SubjectIds[] {
  const subjectIds = new Map<string, number>();
  const wordIds = new Map<string, number>();
  const ids = (values: Iterable<string>, table: Map<string, number>) => {
    const out: number[] = [];
    for (const value of values) {
      let id = table.get(value);
      if (id === undefined) table.set(value, (id = table.size));
      out.push(id);
    }
    return Int32Array.from(out).sort();
  };
  return about.map((a) => ({
    subjects: ids(a.subjects, subjectIds),
    words: ids(a.words, wordIds),
    freeWords: ids(
      [...a.words].filter((w) => !a.subjectWords.has(w)),
      wordIds,
    ),
  }));
}

/** How many ids two sorted arrays share, stopping once `enough` are found. */
function shared(x: Int32Array, y: Int32Array, enough = Number.POSITIVE_INFINITY): number {
  let count = 0;
  for (let i = 0, j = 0; i < x.length && j < y.length && count < enough; ) {
    if (x[i] === y[j]) {
      count++;
      i++;
      j++;
    } else if (x[i] < y[j]) i++;
    else j++;
  }
  return count;
}

/**
 * Whether the later decision `b` is on the subject of `a`: a subject in common and one more word in
 * common that is not a word of a's subjects, or else at least two words in common and at least half
 * of the shorter decision's.
 */
function sameSubject(a: SubjectIds, b: SubjectIds): boolean {
  if (shared(a.subjects, b.subjects, 1) > 0) return shared(a.freeWords, b.words, 1) > 0;
  const sharedWords = shared(a.words, b.words);
  return sharedWords >= 2 && sharedWords >= 0.5 * Math.min(a.words.length, b.words.length);
}

/**
 * Which decisions a later one replaced: decisions in date order (oldest first, as summary.md lists its
 * entries); a decision is replaced by the newest later decision of another session on the same subject.
 */
export function supersededDecisions(decisions: DatedDecision[]): Map<DatedDecision, Replacement> {
  const replaced = new Map<DatedDecision, Replacement>();
  const about = numbered(decisions.map(subjectOf));
  // Two decisions on one subject share a subject or a word, so only those are compared (every pair was:
  // 5 s of a one-session index run at 16× LoCoMo, whose summary.md holds thousands of decisions). Each
  // subject and word lists its decisions in order; a decision's candidates are walked newest first
  // by merging its lists from their ends, and the walk stops at the first that replaces it. PERF: a set
  // of every candidate a decision, sorted, cost 65–90 ms at 16× LoCoMo (2,640 decisions, common words
  // held by hundreds), for every index run and every rag_search's check of its hits.
  const holders = new Map<number, number[]>();
  const lists = about.map((a, i) => {
    const own: number[][] = [];
    const hold = (key: number) => {
      let list = holders.get(key);
      if (!list) holders.set(key, (list = []));
      list.push(i);
      own.push(list);
    };
    for (const s of a.subjects) hold(-1 - s);
    for (const w of a.words) hold(w);
    return own;
  });
  const seen = new Int32Array(decisions.length).fill(-1);
  for (let i = 0; i < decisions.length; i++) {
    const older = decisions[i];
    const own = lists[i];
    // Each list's next candidate from its end, newest first; a list's entries below i are never later.
    const at = own.map((list) => list.length - 1);
    for (;;) {
      let best = -1;
      let from = -1;
      for (let k = 0; k < own.length; k++)
        if (at[k] >= 0 && own[k][at[k]] > best) {
          best = own[k][at[k]];
          from = k;
        }
      if (best <= i) break;
      at[from]--;
      if (seen[best] === i) continue;
      seen[best] = i;
      const newer = decisions[best];
      if (newer.entry === older.entry || newer.date < older.date) continue;
      if (sameSubject(about[i], about[best])) {
        replaced.set(older, { by: newer });
        break;
      }
    }
  }
  return replaced;
}
