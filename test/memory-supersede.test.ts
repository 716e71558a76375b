/**
 * Replaced decisions (memory/supersede.ts) against the rule worked out by brute force: every later
 * decision compared, newest first, with the subjects and words as sets.
 */
import { expect, test } from "bun:test";
import { type DatedDecision, type Subject, subjectOf, supersededDecisions } from "../src/memory/supersede.ts";
import { seededRandom } from "./support/random.ts";

/** The rule as its comment states it, on sets. */
function sameSubjectReference(a: Subject, b: Subject): boolean {
  if ([...a.subjects].some((s) => b.subjects.has(s)))
    return [...a.words].some((w) => b.words.has(w) && !a.subjectWords.has(w));
  const sharedWords = [...a.words].filter((w) => b.words.has(w)).length;
  return sharedWords >= 2 && sharedWords >= 0.5 * Math.min(a.words.size, b.words.size);
}

function replacedReference(decisions: DatedDecision[]): Map<DatedDecision, DatedDecision> {
  const about = decisions.map(subjectOf);
  const out = new Map<DatedDecision, DatedDecision>();
  for (let i = 0; i < decisions.length; i++)
    for (let j = decisions.length - 1; j > i; j--) {
      const [older, newer] = [decisions[i], decisions[j]];
      if (newer.entry === older.entry || newer.date < older.date) continue;
      if (sameSubjectReference(about[i], about[j])) {
        out.set(older, newer);
        break;
      }
    }
  return out;
}

const SUBJECTS = [
  "`src/auth/session.ts`",
  "src/jobs/worker.ts",
  "parseUser",
  "SESSION_SECRET",
  "orders.sql",
  "`redis`",
];
const WORDS = [
  "store",
  "sessions",
  "cookies",
  "signed",
  "retry",
  "backoff",
  "orders",
  "database",
  "postgres",
  "sqlite",
  "cache",
  "limit",
  "queue",
  "token",
  "the",
  "with",
  "in",
];

test("the decisions a later one replaces, and which replaces each, are the brute-force rule's", () => {
  const random = seededRandom(31);
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  for (let round = 0; round < 20; round++) {
    const decisions: DatedDecision[] = [];
    const count = 20 + Math.floor(random() * 120);
    let entry = 0;
    for (let n = 0; n < count; n++) {
      if (random() < 0.4) entry++;
      const parts = Array.from({ length: 2 + Math.floor(random() * 7) }, () =>
        random() < 0.25 ? pick(SUBJECTS) : pick(WORDS),
      );
      // Dates mostly rising with the entry, sometimes earlier (an imported session).
      const day = Math.max(1, Math.min(28, Math.floor(entry / 3) + 1 - (random() < 0.1 ? 2 : 0)));
      decisions.push({
        text: parts.join(" "),
        date: `2025-05-${String(day).padStart(2, "0")}`,
        entry,
        line: n,
      });
    }
    const expected = replacedReference(decisions);
    const found = supersededDecisions(decisions);
    expect([...found.keys()]).toEqual([...expected.keys()]);
    for (const [older, { by }] of found) expect(by).toBe(expected.get(older)!);
    // Rounds where the rule replaces some decisions and keeps others, so both sides are compared.
    if (round === 0) expect(expected.size).toBeGreaterThan(0);
  }
});
