/**
 * Fresh, changed or gone: a memory that names a file is checked against the project as it is now. The
 * file's modification time against the memory's date says whether it changed since; a path that no
 * longer exists is gone. Pure: the caller hands in how to stat a path (the prelude hook with Bun.file, so
 * a check is one stat call and no model, index or git process).
 */

export type FileState = "unchanged" | "changed" | "gone";

export interface FileCheck {
  path: string;
  state: FileState;
  /** When it changed, for `changed`. */
  modifiedMs?: number;
}

/** The modification time of a project-relative path in ms, or undefined when nothing is there. */
export type Stat = (path: string) => number | undefined;

/**
 * A path the project may hold: folder/file (`src/auth/session.ts`, `db/migrations/`) or a file name with
 * an extension. Not a URL, not an absolute or home path (outside the project), not a glob. Tokens are
 * tested one by one (PERF: cheaper than one pattern with look-behinds over the whole text).
 */
const FOLDER_PATH = /^(?:\.\/)?[\w@+-][\w@.+-]*(?:\/[\w@.+-]+)*\/?$/;
const FILE_NAME =
  /^[\w-][\w.-]*\.(?:ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|py|rs|go|java|kt|swift|c|h|cc|cpp|hpp|cs|rb|php|sh|yml|yaml|toml|ini|cfg|sql|html|css|scss|vue|svelte|lock|txt|env|xml|gradle|ex|exs|hs|scala|zig|lua|dart)$/;

/**
 * A slash-joined token that names a path rather than words (`client/server`, `UI/UX`, `and/or`): its last
 * part has an extension, or it ends with a slash, or it has three or more parts.
 */
function looksLikePath(path: string): boolean {
  if (!FOLDER_PATH.test(path) || path.startsWith("/") || !/[A-Za-z]/.test(path)) return false;
  const parts = path.split("/");
  return /\.\w{1,6}$/.test(parts[parts.length - 1]) || path.endsWith("/") || parts.length >= 3;
}

/**
 * The paths of a summary entry's `Files:` line, which the summariser already filtered to real paths.
 * PERF: plain string splitting, no pattern: the prelude hook runs it on every session start.
 */
export function entryFiles(entry: string): string[] {
  const at = entry.indexOf("\nFiles: ");
  if (at < 0) return [];
  const end = entry.indexOf("\n", at + 1);
  const line = entry.slice(at + 8, end < 0 ? undefined : end);
  return line
    .split(", ")
    .map((name) => (name.endsWith("…") ? name.slice(0, -1) : name).trim())
    .filter(
      (name) => name.length > 0 && !name.startsWith("/") && !name.startsWith("~") && !name.includes(".."),
    );
}

/** Paths named in a text, in order, each once. */
export function namedPaths(text: string): string[] {
  const found = new Set<string>();
  for (const raw of text.split(/[\s,;()[\]{}"'`<>|]+/)) {
    const token = raw.replace(/[.:!?…]+$/, "");
    if (token.length < 3 || token.includes("..") || token.includes(":")) continue;
    const path = token.startsWith("./") ? token.slice(2) : token;
    if (path.includes("/") ? looksLikePath(path) : FILE_NAME.test(path)) found.add(path);
  }
  return [...found];
}

const DAY_MS = 86_400_000;

/** The end of a memory's day (`YYYY-MM-DD`, UTC): a file the session itself changed that day is unchanged. */
export function endOfDay(date: string): number | undefined {
  const start = Date.parse(`${date}T00:00:00Z`);
  return Number.isNaN(start) ? undefined : start + DAY_MS;
}

/**
 * Each path's state against a memory written on `date`. A bare file name that is not at the project's
 * root may live in any folder: it is left out rather than called gone.
 */
export function checkPaths(paths: string[], date: string, stat: Stat): FileCheck[] {
  const since = endOfDay(date);
  const checks: FileCheck[] = [];
  for (const path of paths) {
    const modifiedMs = stat(path);
    if (modifiedMs === undefined) {
      if (path.includes("/")) checks.push({ path, state: "gone" });
      continue;
    }
    if (since !== undefined && modifiedMs > since) checks.push({ path, state: "changed", modifiedMs });
    else checks.push({ path, state: "unchanged" });
  }
  return checks;
}

/** "today", "1 day ago", "12 days ago". */
export function ago(ms: number, now: number): string {
  const days = Math.floor((now - ms) / DAY_MS);
  if (days <= 0) return "today";
  return days === 1 ? "1 day ago" : `${days} days ago`;
}

/** The mark a path gets where a memory names it; nothing for an unchanged file. */
export function freshnessMark(check: FileCheck, now: number): string | undefined {
  if (check.state === "gone") return "gone";
  if (check.state === "changed" && check.modifiedMs !== undefined)
    return `changed since, ${ago(check.modifiedMs, now)}`;
  return undefined;
}

/**
 * The text with each checked path's first mention on every line followed by its mark:
 * `src/auth/session.ts [gone]`, `lib/a.ts [changed since, 3 days ago]`.
 */
export function markPaths(text: string, checks: FileCheck[], now: number): string {
  const marks = new Map<string, string>();
  for (const check of checks) {
    const mark = freshnessMark(check, now);
    if (mark) marks.set(check.path, mark);
  }
  if (marks.size === 0) return text;
  return text
    .split("\n")
    .map((line) => {
      let out = line;
      for (const [path, mark] of marks) {
        const end = findPath(out, path);
        if (end >= 0) out = `${out.slice(0, end)} [${mark}]${out.slice(end)}`;
      }
      return out;
    })
    .join("\n");
}

/** Where a whole mention of `path` in `line` ends (after a closing back-tick), or -1; a marked one is skipped. */
function findPath(line: string, path: string): number {
  for (let at = line.indexOf(path); at >= 0; at = line.indexOf(path, at + 1)) {
    const before = line[at - 1] ?? " ";
    const after = line[at + path.length] ?? " ";
    if (/[\w@.+/-]/.test(before) || /[\w@+/-]/.test(after)) continue;
    const end = after === "`" ? at + path.length + 1 : at + path.length;
    if (!line.startsWith(" [", end)) return end;
  }
  return -1;
}
