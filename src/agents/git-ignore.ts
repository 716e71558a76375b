import { readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/**
 * Keeping what `activate` writes for one person (hooks with their absolute home paths, a memory
 * setting their team has not agreed on) out of `git status`. Where the lines go:
 * - `exclude`: the repository's own `.git/info/exclude`, seen by nobody else (the default);
 * - `gitignore`: the project's `.gitignore`, for a team that shares the setup: only the personal
 *   hooks file is ignored, the config and AGENTS.md are there to be committed;
 * - `none`: nothing.
 */
export const IGNORE_TARGETS = ["exclude", "gitignore", "none"] as const;
export type IgnoreTarget = (typeof IGNORE_TARGETS)[number];

export interface GitRepository {
  /** The work tree's top folder. */
  top: string;
  /** The folder holding `info/exclude` (the common git folder of a linked worktree). */
  gitDir: string;
}

/**
 * The git repository whose work tree holds `dir`, read from the files as git reads them: a `.git`
 * folder, or a `.git` file saying `gitdir: <path>` (linked worktrees, submodules), whose `commondir`
 * names the folder shared by every worktree. Undefined outside a repository.
 */
export function gitRepository(dir: string): GitRepository | undefined {
  for (let top = resolve(dir); ; top = dirname(top)) {
    const dotGit = join(top, ".git");
    const stat = statSync(dotGit, { throwIfNoEntry: false });
    if (stat?.isDirectory()) return { top, gitDir: dotGit };
    if (stat?.isFile()) {
      const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, "utf8"));
      if (!pointer) return undefined;
      const linked = resolve(top, pointer[1]);
      let common = linked;
      try {
        common = resolve(linked, readFileSync(join(linked, "commondir"), "utf8").trim());
      } catch {
        // No commondir: a submodule's own git folder, not a linked worktree.
      }
      return { top, gitDir: common };
    }
    if (dirname(top) === top) return undefined;
  }
}

/**
 * A gitignore pattern matching exactly the file at `path` (relative to the repository's top, `/`
 * separated): anchored with a leading `/`, and every character git would read as a wildcard, a
 * comment, a negation or trailing blank escaped.
 */
export function exactPattern(path: string): string {
  const escaped = path
    .split("/")
    .map((part) => part.replace(/[\\*?[\]!#]/g, (c) => `\\${c}`))
    .join("/")
    .replace(/ +$/, (blanks) => "\\ ".repeat(blanks.length));
  return `/${escaped}`;
}

/**
 * `file` (under the repository) as an exact pattern relative to the repository's top; a path ending in
 * the separator names a folder, and its pattern ends in `/`.
 */
export function patternFor(repository: GitRepository, file: string): string {
  const folder = file.endsWith(sep) ? "/" : "";
  return exactPattern(relative(repository.top, file).split(sep).join("/")) + folder;
}
