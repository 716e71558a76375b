import {
  closeSync,
  type Dirent,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  statSync,
} from "node:fs";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";
import { isLockFile, type LanguageInfo, languageOf, languageOfScript } from "./languages.ts";
import type { CapName } from "./limits.ts";

/** Files above this size are generated data or bundles far more often than code a person reads. */
export const MAX_FILE_BYTES = 1_000_000;

/**
 * Kernel and device file systems, never entered (a walk of `/` with --allow-large): their files
 * report a size of 0 or 4096 whatever they hold, and reading some of them (`/proc/kmsg`) blocks.
 */
const VIRTUAL_FILE_SYSTEMS = new Set(["/proc", "/sys", "/dev", "/run"]);

/** Version-control and dependency folders: never the user's own code, often huge. */
const SKIPPED_DIRS = new Set([
  ".git",
  ".hg",
  ".svn",
  ".jj",
  ".bzr",
  "node_modules",
  "bower_components",
  "jspm_packages",
  ".venv",
  "venv",
  "__pycache__",
  ".tox",
  ".nox",
  ".mypy_cache",
  ".pytest_cache",
  ".ruff_cache",
  ".gradle",
  ".bundle",
  "Pods",
  ".cargo",
  ".yarn",
  ".pnpm-store",
  ".next",
  ".nuxt",
  ".turbo",
  ".parcel-cache",
  ".cache",
  ".triforge",
  ".idea",
  ".DS_Store",
]);

export interface WalkedFile {
  /** Relative to the root, forward slashes. */
  path: string;
  size: number;
  mtimeMs: number;
  language: LanguageInfo;
}

/** Why files were left out, counted so that nothing is skipped silently. */
export interface SkipCounts {
  ignored: number;
  tooLarge: number;
  lockFiles: number;
  unsupported: number;
  symlinks: number;
  unreadable: number;
}

export function emptySkipCounts(): SkipCounts {
  return { ignored: 0, tooLarge: 0, lockFiles: 0, unsupported: 0, symlinks: 0, unreadable: 0 };
}

/** How far one walk may go; past a cap it stops and says which (limits.ts). */
export interface WalkLimits {
  maxFiles?: number;
  /** Sum of the sizes of the files collected. */
  maxBytes?: number;
  /** `performance.now()` past which no further folder is read. */
  deadline?: number;
}

interface Matcher {
  /** The folder the rules were read from, relative to the root ("" for the root), with a trailing slash. */
  base: string;
  rules: Ignore;
}

/** Reads `.gitignore` then `.triforgeignore` of one folder; the later file wins on conflicts. */
function matcherFor(absoluteDir: string, base: string): Matcher | undefined {
  let text = "";
  for (const name of [".gitignore", ".triforgeignore"]) {
    const file = join(absoluteDir, name);
    if (!existsSync(file)) continue;
    try {
      text += `${readFileSync(file, "utf8")}\n`;
    } catch {
      // An unreadable ignore file ignores nothing; the walk goes on.
    }
  }
  return text.trim() ? { base, rules: ignore().add(text) } : undefined;
}

/**
 * Git's precedence: the deepest ignore file with an opinion on the path decides, and within one
 * file the last matching rule wins (a `!negation` re-includes). Folders are tested with a trailing
 * slash so `build/` rules match them; an ignored folder is never entered, so nothing inside it can
 * be re-included, as in git.
 */
function isIgnored(relativePath: string, matchers: Matcher[]): boolean {
  for (let i = matchers.length - 1; i >= 0; i--) {
    const { base, rules } = matchers[i];
    const result = rules.test(relativePath.slice(base.length));
    if (result.unignored) return false;
    if (result.ignored) return true;
  }
  return false;
}

function firstLine(path: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const buffer = Buffer.alloc(128);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    return buffer.subarray(0, read).toString("latin1").split("\n")[0];
  } catch {
    return "";
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The files of a repository worth indexing: known source, doc and config types, honouring nested
 * `.gitignore` and `.triforgeignore` files. Symbolic links are never followed (a link can lead out
 * of the root or into a cycle); they are counted. Entries are sorted so every walk is the same, and
 * a walk stopped by a cap (`capped`) holds the same first files every time.
 */
export function walkRepository(
  root: string,
  limits: WalkLimits = {},
): { files: WalkedFile[]; skipped: SkipCounts; capped?: CapName } {
  const maxFiles = limits.maxFiles ?? Number.POSITIVE_INFINITY;
  const maxBytes = limits.maxBytes ?? Number.POSITIVE_INFINITY;
  const deadline = limits.deadline ?? Number.POSITIVE_INFINITY;
  const files: WalkedFile[] = [];
  const skipped = emptySkipCounts();
  let bytes = 0;
  let capped: CapName | undefined;

  const visit = (absoluteDir: string, relativeDir: string, inherited: Matcher[]) => {
    if (performance.now() > deadline) capped ??= "seconds";
    if (capped) return;
    const own = matcherFor(absoluteDir, relativeDir);
    const matchers = own ? [...inherited, own] : inherited;
    let entries: Dirent[];
    try {
      entries = readdirSync(absoluteDir, { withFileTypes: true });
    } catch {
      skipped.unreadable++;
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (capped) return;
      const relative = relativeDir + entry.name;
      const absolute = join(absoluteDir, entry.name);
      if (entry.isSymbolicLink()) {
        skipped.symlinks++;
        continue;
      }
      if (entry.isDirectory()) {
        if (SKIPPED_DIRS.has(entry.name) || VIRTUAL_FILE_SYSTEMS.has(absolute)) continue;
        if (isIgnored(`${relative}/`, matchers)) {
          skipped.ignored++;
          continue;
        }
        visit(absolute, `${relative}/`, matchers);
        continue;
      }
      // Sockets, FIFOs and devices: reading a FIFO would block forever.
      if (!entry.isFile()) continue;
      if (entry.name === ".gitignore" || entry.name === ".triforgeignore") continue;
      if (isIgnored(relative, matchers)) {
        skipped.ignored++;
        continue;
      }
      if (isLockFile(entry.name)) {
        skipped.lockFiles++;
        continue;
      }
      const byName = languageOf(entry.name);
      if (!byName && entry.name.includes(".")) {
        skipped.unsupported++;
        continue;
      }
      let size: number;
      let mtimeMs: number;
      try {
        ({ size, mtimeMs } = statSync(absolute));
      } catch {
        skipped.unreadable++;
        continue;
      }
      // An extension-less script is known by its first line; an empty file has none to read.
      const language = byName ?? (size > 0 ? languageOfScript(firstLine(absolute)) : undefined);
      if (!language) {
        skipped.unsupported++;
        continue;
      }
      if (size > MAX_FILE_BYTES) {
        skipped.tooLarge++;
        continue;
      }
      if (files.length >= maxFiles) capped = "files";
      else if (bytes + size > maxBytes) capped = "bytes";
      if (capped) return;
      bytes += size;
      files.push({ path: relative, size, mtimeMs, language });
    }
  };
  visit(root, "", []);
  return capped ? { files, skipped, capped } : { files, skipped };
}
