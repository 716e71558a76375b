/**
 * Recalled excerpts checked against the project now, for `rag_search`: the files an excerpt names that
 * changed since or are gone, and a decision in it that a later session replaced (with that session's
 * date and words). The old decision is still returned, marked, never hidden: the agent may be asked why
 * it changed.
 */
import { summaryPath } from "../home/paths.ts";
import { checkPaths, freshnessMark, namedPaths } from "./freshness.ts";
import { summaryEntries, withoutReplacedDecisions } from "./prelude.ts";
import { projectStat } from "./present.ts";
import { decisionCore } from "./supersede.ts";

interface CheckedHit {
  text: string;
  ts: string;
}

const squash = (text: string) => text.replace(/\s+/g, " ");

/** The decisions of summary.md that a later one replaced, as [what was said, replaced on, replaced by]. */
async function replacedDecisions(root: string): Promise<[string, string, string][]> {
  const file = Bun.file(summaryPath(root));
  if (!(await file.exists())) return [];
  const replaced = withoutReplacedDecisions(summaryEntries(await file.text()));
  return [...replaced].map(([old, { by }]) => [
    squash(decisionCore(old.text)),
    by.date,
    decisionCore(by.text),
  ]);
}

/**
 * One line per hit (undefined when there is nothing to say): `[checked against the project now: …]`.
 * Never throws: a check that cannot be made is left out.
 */
export async function checkHits(
  root: string,
  hits: CheckedHit[],
  now = Date.now(),
): Promise<(string | undefined)[]> {
  let replaced: [string, string, string][] = [];
  try {
    replaced = await replacedDecisions(root);
  } catch {
    // An unreadable summary.md: the hits still go out, with their file checks only.
  }
  const stat = projectStat(root);
  return hits.map((hit) => {
    const notes: string[] = [];
    const text = squash(hit.text);
    for (const [said, date, by] of replaced) {
      if (said.length >= 20 && text.includes(said))
        notes.push(`a decision here was replaced on ${date} by: "${by}"`);
    }
    const date = /^\d{4}-\d{2}-\d{2}/.exec(hit.ts)?.[0] ?? "";
    for (const check of checkPaths(namedPaths(hit.text), date, stat)) {
      const mark = freshnessMark(check, now);
      if (mark) notes.push(`${check.path} ${mark}`);
    }
    return notes.length ? `[checked against the project now: ${notes.join("; ")}]` : undefined;
  });
}
