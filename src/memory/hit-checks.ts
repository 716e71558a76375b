/**
 * Recalled excerpts checked against the project now, for `rag_search`: the files an excerpt names that
 * changed since or are gone, and a decision in it that a later session replaced (with that session's
 * date and words). The old decision is still returned, marked, never hidden: the agent may be asked why
 * it changed.
 */
import { join } from "node:path";
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

type ReplacedDecision = [said: string, replacedOn: string, by: string];

/**
 * Per summary.md, its replaced decisions as of the version seen last (size and time): the MCP server
 * answers many rag_search calls between two index runs, and working them out reads the whole file
 * (~30–40 ms at 16× LoCoMo, 2.6 MB).
 */
const replacedByFile = new Map<string, { size: number; modified: number; replaced: ReplacedDecision[] }>();

/** The decisions of summary.md that a later one replaced, as [what was said, replaced on, replaced by]. */
async function replacedDecisions(root: string): Promise<ReplacedDecision[]> {
  const path = summaryPath(root);
  const file = Bun.file(path);
  if (!(await file.exists())) return [];
  const { size, lastModified: modified } = file;
  const known = replacedByFile.get(path);
  if (known && known.size === size && known.modified === modified) return known.replaced;
  const replaced = [...withoutReplacedDecisions(summaryEntries(await file.text()))].map(
    ([old, { by }]): ReplacedDecision => [squash(decisionCore(old.text)), by.date, decisionCore(by.text)],
  );
  replacedByFile.set(path, { size, modified, replaced });
  return replaced;
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
  const contents = new Map<string, string | undefined>();
  return hits.map((hit) => {
    const notes: string[] = [];
    const text = squash(hit.text);
    for (const [said, date, by] of replaced) {
      if (said.length >= 20 && text.includes(said))
        notes.push(`a decision here was replaced on ${date} by: "${by}"`);
    }
    const date = /^\d{4}-\d{2}-\d{2}/.exec(hit.ts)?.[0] ?? "";
    const checks = checkPaths(namedPaths(hit.text), date, stat);
    for (const check of checks) {
      const mark = freshnessMark(check, now);
      if (mark) notes.push(`${check.path} ${mark}`);
    }
    notes.push(...missingSymbols(root, hit.text, checks, contents));
    return notes.length ? `[checked against the project now: ${notes.join("; ")}]` : undefined;
  });
}

/** The hits, each with its `check` where checkHits has one: what rag_search and the HTTP memory query return. */
export async function withChecks<T extends CheckedHit>(
  root: string,
  hits: T[],
): Promise<(T & { check?: string })[]> {
  const checks = await checkHits(root, hits);
  return hits.map((hit, i) => (checks[i] ? { ...hit, check: checks[i] } : hit));
}

/** A back-ticked or code-shaped name: `parseUser`, `SESSION_SECRET`, `user.id` (not a path). */
const SYMBOL =
  /`([A-Za-z_$][\w$.]{2,60})(?:\(\))?`|\b([a-z]+(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)\b/g;
/** Files larger than this are not read to look for a name. */
const MAX_SYMBOL_FILE_BYTES = 1 << 20;

/**
 * Names that a line of the excerpt places in a file ("Renamed it to `loadSettings` in settings.ts") and
 * that the file, still there, no longer holds: `loadSettings` not in src/settings.ts any more. Only lines
 * naming exactly one file that still exists are read that way.
 */
function missingSymbols(
  root: string,
  text: string,
  checks: { path: string; state: string }[],
  contents: Map<string, string | undefined>,
): string[] {
  const present = new Set(checks.filter((c) => c.state !== "gone").map((c) => c.path));
  const notes: string[] = [];
  for (const line of text.split("\n")) {
    const files = namedPaths(line);
    if (files.length !== 1 || !present.has(files[0])) continue;
    const file = files[0];
    if (!contents.has(file)) contents.set(file, readSmall(join(root, file)));
    const body = contents.get(file);
    if (body === undefined) continue;
    for (const m of line.matchAll(SYMBOL)) {
      const name = m[1] ?? m[2];
      if (!name || file.includes(name) || name.includes("/")) continue;
      const note = `\`${name}\` is no longer in ${file}`;
      if (!body.includes(name) && !notes.includes(note)) notes.push(note);
    }
  }
  return notes;
}

function readSmall(path: string): string | undefined {
  try {
    const { readFileSync, statSync } = require("node:fs") as typeof import("node:fs");
    const info = statSync(path);
    return info.isFile() && info.size <= MAX_SYMBOL_FILE_BYTES ? readFileSync(path, "utf8") : undefined;
  } catch {
    return undefined;
  }
}
