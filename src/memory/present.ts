/**
 * The project's present, as the SessionStart prelude sees it cheaply: a stat per named file (Bun.file,
 * no node:fs), the current branch from `.git/HEAD` and the last commit subjects from the tail of
 * `.git/logs/HEAD` — two small reads, no git process (a spawn alone would cost more than the whole hook).
 * PERF: imports only node:path; runs on every session start.
 */
import { isAbsolute, join } from "node:path";
import type { ProjectPresent } from "./prelude.ts";

/** Bun.file(...).lastModified of a path that does not exist. */
const MISSING = 2 ** 52 - 1;
/** Bytes read from the end of the reflog: the last dozen or so commits. */
const REFLOG_TAIL_BYTES = 4096;
const RECENT_COMMITS = 8;

/** Words of a branch name or commit subject that can name a topic ("feature/auth-cookies" → auth, cookies). */
const FOCUS_STOP = new Set(
  "main master develop feature fix bugfix hotfix release chore commit merge branch checkout from into with that this the and for".split(
    " ",
  ),
);

export function focusWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}_]{4,}/gu) ?? []).filter((w) => !FOCUS_STOP.has(w));
}

export function projectStat(root: string): (path: string) => number | undefined {
  return (path) => {
    if (isAbsolute(path)) return undefined;
    const modified = Bun.file(join(root, path)).lastModified;
    return Number.isFinite(modified) && modified > 0 && modified < MISSING ? modified : undefined;
  };
}

/**
 * The project's git folder: `.git` at its root (a worktree's or submodule's `.git` file says where).
 * PERF: only the root is looked at, one stat; a project inside a larger repository ranks by recency.
 */
async function gitDir(root: string): Promise<string | undefined> {
  const dotGit = join(root, ".git");
  const file = Bun.file(dotGit);
  // A folder has a modification time but does not "exist" as a file; a missing path has neither.
  // PERF: the (sync) modification time first, so a project without git awaits nothing here.
  const modified = file.lastModified;
  if (!(modified > 0 && modified < MISSING)) return undefined;
  if (await file.exists()) {
    const target = /^gitdir:\s*(.+)$/m.exec(await file.text())?.[1]?.trim();
    return target ? (isAbsolute(target) ? target : join(root, target)) : undefined;
  }
  return dotGit;
}

/** The branch name and the last commit subjects, as focus words; none outside a git repository. */
async function gitFocus(root: string): Promise<string[]> {
  const dir = await gitDir(root);
  if (!dir) return [];
  const words: string[] = [];
  const head = Bun.file(join(dir, "HEAD"));
  if (head.size === 0) return [];
  const branch = /^ref: refs\/heads\/(.+)$/m.exec(await head.text())?.[1];
  if (branch) words.push(...focusWords(branch));
  const reflog = Bun.file(join(dir, "logs", "HEAD"));
  const size = reflog.size;
  if (size > 0) {
    const tail = await reflog.slice(Math.max(0, size - REFLOG_TAIL_BYTES)).text();
    const subjects = tail
      .split("\n")
      .map((line) => /\tcommit(?: \([^)]*\))?: (.*)$/.exec(line)?.[1])
      .filter((s): s is string => s !== undefined)
      .slice(-RECENT_COMMITS);
    for (const subject of subjects) words.push(...focusWords(subject));
  }
  return [...new Set(words)];
}

/** What the prelude needs of the project now; never throws (a missing or odd `.git` gives no focus). */
export async function projectPresent(root: string, now = Date.now()): Promise<ProjectPresent> {
  let focus: string[] = [];
  try {
    focus = await gitFocus(root);
  } catch {
    // An unreadable .git is not a reason to lose the prelude: rank by recency alone.
  }
  return { now, stat: projectStat(root), focus };
}
