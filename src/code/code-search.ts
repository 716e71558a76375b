/**
 * Code search: the core every adapter (CLI, MCP, later HTTP) calls. A repository is indexed on
 * first use and refreshed incrementally before answering, so a search never says "not indexed".
 * A folder inside a repository is searched through the repository's one index (see locateRepository).
 */
import { existsSync, realpathSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { loadModel } from "../embed/source.ts";
import { homeFolder } from "../home/paths.ts";
import { RepositoryError } from "./errors.ts";
import { CONTENT_KINDS } from "./languages.ts";
import { capNote, hasProjectFile, notAProject } from "./limits.ts";
import { type Progress, refreshIndex, resolveRepository } from "./refresh.ts";
import { type ContentFilter, MAX_QUERY_CHARS, type SearchMode, searchIndex } from "./search.ts";
import { type CodeIndex, type IndexReport, indexFile } from "./store.ts";
import { queryTokens, tokenize } from "./tokens.ts";

export { RepositoryError } from "./errors.ts";
export type { ContentFilter, SearchMode } from "./search.ts";
export type { IndexReport } from "./store.ts";

export interface CodeHit {
  file_path: string;
  start_line: number;
  end_line: number;
  score: number;
  language: string;
  content: string;
}

export interface CodeSearchResult {
  /** The repository's root: every `file_path` is relative to it. */
  repo: string;
  /** The folder searched, relative to `repo`, when it is not the whole repository ("src/lib"). */
  scope?: string;
  hits: CodeHit[];
  /** Set when the answer needs explaining: an empty query, nothing matched, a truncated query. */
  note?: string;
  index: IndexReport;
}

export interface SearchCodeOptions {
  topK?: number;
  /** Lines of each snippet shown, around its best-matching lines; 0 or undefined shows whole chunks. */
  maxSnippetLines?: number;
  content?: ContentFilter;
  mode?: SearchMode;
  /** Use the index as loaded, without checking the files again (batch evaluation). */
  refresh?: boolean;
  /** Only files under this folder of the repository ("src/lib"; "" or undefined: all of it). */
  scope?: string;
  /** Index the folder even when it is not a project (`/`, the home folder, a folder with no marker). */
  allowLarge?: boolean;
}

export const DEFAULT_TOP_K = 5;
export const MAX_TOP_K = 100;
/** A long-lived process (the MCP server) re-checks the files at most this often. */
const REFRESH_AFTER_MS = 1_000;

interface Loaded {
  index: CodeIndex;
  checkedAt: number;
}
const loaded = new Map<string, Loaded>();
const refreshing = new Map<string, Promise<CodeIndex>>();

/** A folder as code search sees it: the repository that holds it, and where in it the folder is. */
export interface RepositoryScope {
  root: string;
  /** The folder relative to `root`, with `/` separators; "" when it is the root. */
  scope: string;
  /**
   * Whether `root` is a project: a repository, an active folder or one with a project file, and
   * neither the home folder nor the file-system root. Only a project is indexed without allowLarge.
   */
  project: boolean;
}

/**
 * The repository holding `path`: the nearest folder at or above it with `.git` (a folder, or a
 * worktree's file) or `.triforge/config.json`, else the nearest with a project file (package.json,
 * Cargo.toml, …: limits.ts). A client started in `repo/src/lib` then shares the repository's one
 * index (and its redaction rules) instead of building another of the subfolder. The walk never ends
 * at the home folder or the file-system root from below (a dotfiles repository in `~` must not turn
 * `~/notes` into an index of the whole home); without a marker the folder is its own root, and not a
 * project. A bad path is a RepositoryError.
 */
export function locateRepository(path: string): RepositoryScope {
  const start = resolveRepository(path);
  const home = realHome();
  const scoped = (root: string): RepositoryScope => ({
    root,
    scope: relative(root, start).split(sep).join("/"),
    project: root !== home && dirname(root) !== root,
  });
  let marked: string | undefined;
  for (let dir = start; ; ) {
    if (isRepositoryRoot(dir)) return scoped(dir);
    if (!marked && hasProjectFile(dir)) marked = dir;
    const parent = dirname(dir);
    if (parent === dir || parent === home || dirname(parent) === parent) break;
    dir = parent;
  }
  return marked ? scoped(marked) : { root: start, scope: "", project: false };
}

/** The located repository when it may be indexed; a RepositoryError saying why and how otherwise. */
function indexable(located: RepositoryScope, allowLarge: boolean | undefined): RepositoryScope {
  if (located.project || allowLarge) return located;
  const { root } = located;
  throw new RepositoryError(
    notAProject(root, dirname(root) === root ? "root" : root === realHome() ? "home" : "folder"),
  );
}

function isRepositoryRoot(dir: string): boolean {
  return existsSync(join(dir, ".git")) || existsSync(join(dir, ".triforge", "config.json"));
}

function realHome(): string | undefined {
  try {
    return realpathSync(homeFolder());
  } catch {
    return undefined;
  }
}

/**
 * The up-to-date index of the folder `repo` itself (benchmarks index a `benchmark_root` this way);
 * adapters go through locateRepository first. Built on first use, refreshed when older than
 * REFRESH_AFTER_MS (or always with `refresh: "now"`). Concurrent callers share one refresh.
 */
export async function openIndex(
  repo: string,
  options: { refresh?: "now" | "auto" | "never"; onProgress?: Progress; force?: boolean } = {},
): Promise<CodeIndex> {
  const root = resolveRepository(repo);
  const current = loaded.get(root);
  const policy = options.refresh ?? "auto";
  if (current && !options.force) {
    if (policy === "never" || (policy === "auto" && performance.now() - current.checkedAt < REFRESH_AFTER_MS))
      return current.index;
  }
  let pending = refreshing.get(root);
  if (!pending) {
    pending = refreshIndex(root, {
      previous: current?.index,
      onProgress: options.onProgress,
      force: options.force,
    }).finally(() => refreshing.delete(root));
    refreshing.set(root, pending);
  }
  const index = await pending;
  loaded.set(root, { index, checkedAt: performance.now() });
  return index;
}

/**
 * Loads the saved index of a repository into this process (refreshed against the files), so that a
 * long-lived server's first search answers at once. Does nothing, and returns false, when the
 * repository has no saved index: a warm-up never starts a full index nobody asked for (the folder
 * may be a huge home directory).
 */
export async function warmIndex(repo: string): Promise<boolean> {
  let root: string;
  try {
    root = locateRepository(repo).root;
  } catch {
    return false;
  }
  if (!existsSync(indexFile(root))) return false;
  await openIndex(root);
  return true;
}

/** Builds or refreshes the index of the repository holding `repo` explicitly (`triforge code-index`). */
export async function indexRepository(
  repo: string,
  options: { onProgress?: Progress; force?: boolean; allowLarge?: boolean } = {},
): Promise<IndexReport> {
  const { root } = indexable(locateRepository(repo), options.allowLarge);
  return (await openIndex(root, { refresh: "now", onProgress: options.onProgress, force: options.force }))
    .report;
}

/**
 * The index of the repository holding `repo`, and the folder to search in it (batch search). A
 * folder that is not a project is refused unless `allowLarge` (limits.ts).
 */
export async function openRepository(
  repo: string,
  options: { refresh?: "now" | "auto" | "never"; allowLarge?: boolean } = {},
): Promise<{ index: CodeIndex; scope: string }> {
  const { root, scope } = indexable(locateRepository(repo), options.allowLarge);
  const index = await openIndex(root, { refresh: options.refresh });
  // A folder the repository's own rules leave out (a git-ignored scratch project, a vendored
  // checkout) has no file in its index: it is searched as its own root, as a folder outside any
  // repository is, rather than found empty.
  const under = scopePrefix(scope);
  if (under && !index.files.some((f) => f.path.startsWith(under)))
    return { index: await openIndex(join(root, scope), { refresh: options.refresh }), scope: "" };
  return { index, scope };
}

export function checkContent(content: string): ContentFilter {
  if (content === "all" || (CONTENT_KINDS as readonly string[]).includes(content))
    return content as ContentFilter;
  throw new RepositoryError(
    `content must be one of ${[...CONTENT_KINDS, "all"].join(", ")}, not '${content}'`,
  );
}

function clampTopK(topK: number | undefined): number {
  if (topK === undefined || !Number.isFinite(topK)) return DEFAULT_TOP_K;
  return Math.max(1, Math.min(MAX_TOP_K, Math.floor(topK)));
}

/** Ranked snippets answering `query` in the folder `repo` (a repository, or a folder inside one). */
export async function searchCode(
  repo: string,
  query: string,
  options: SearchCodeOptions = {},
): Promise<CodeSearchResult> {
  const { index, scope } = await openRepository(repo, {
    refresh: options.refresh === false ? "never" : "auto",
    allowLarge: options.allowLarge,
  });
  return searchLoaded(index, query, { ...options, scope });
}

/** "src/lib" → "src/lib/", the prefix of the paths under it; "" for the whole repository. */
function scopePrefix(scope: string | undefined): string {
  return scope ? `${scope.replace(/\/+$/, "")}/` : "";
}

/** Search an index already in hand (batch mode answers many queries from one loaded index). */
export async function searchLoaded(
  index: CodeIndex,
  query: string,
  options: SearchCodeOptions = {},
): Promise<CodeSearchResult> {
  const trimmed = query.trim();
  const under = scopePrefix(options.scope);
  const result: CodeSearchResult = {
    repo: index.root,
    ...(under ? { scope: under.slice(0, -1) } : {}),
    hits: [],
    index: index.report,
  };
  if (!trimmed) return { ...result, note: "the query is empty" };
  const model = await loadModel();
  const text = trimmed.slice(0, MAX_QUERY_CHARS);
  const vector = await model.embed(text);
  const ranked = searchIndex(index, text, vector, {
    topK: clampTopK(options.topK),
    content: options.content ?? "code",
    mode: options.mode,
    under,
  });
  const terms = queryTokens(text);
  result.hits = ranked.map(({ chunk, score }) => toHit(index, chunk, score, terms, options.maxSnippetLines));
  const notes: string[] = [];
  if (trimmed.length > MAX_QUERY_CHARS)
    notes.push(`the query was cut to its first ${MAX_QUERY_CHARS} characters`);
  if (index.report.capped) notes.push(capNote(index.report.capped));
  if (!result.hits.length) {
    const files = under ? index.files.filter((f) => f.path.startsWith(under)).length : index.files.length;
    const content = options.content ?? "code";
    const why = terms.length
      ? `no ${content === "all" ? "" : `${content} `}file shares a word with the query${content === "all" ? "" : " (content: all searches every kind)"}`
      : "the text does not occur in them";
    notes.push(`nothing in ${files} indexed files${under ? ` under ${result.scope}` : ""} matches: ${why}`);
  }
  if (notes.length) result.note = notes.join("; ");
  return result;
}

/**
 * Chunks similar to the one holding `line` of `file`, among the files under the folder `repo`.
 * `file` is relative to the repository's root (as hits give it), or to the folder `repo`, or absolute.
 */
export async function findRelated(
  repo: string,
  file: string,
  line: number,
  options: SearchCodeOptions = {},
): Promise<CodeSearchResult & { source?: CodeHit }> {
  const { index, scope } = await openRepository(repo, {
    refresh: options.refresh === false ? "never" : "auto",
    allowLarge: options.allowLarge,
  });
  const { relatedChunks } = await import("./related.ts");
  const found = relatedChunks(index, file, line, {
    topK: clampTopK(options.topK),
    content: options.content ?? "all",
    under: scopePrefix(scope),
  });
  if ("error" in found) throw new RepositoryError(found.error);
  return {
    repo: index.root,
    ...(scope ? { scope } : {}),
    source: toHit(index, found.source, 1, [], options.maxSnippetLines, line),
    hits: found.ranked.map(({ chunk, score }) => toHit(index, chunk, score, [], options.maxSnippetLines)),
    ...(index.report.capped ? { note: capNote(index.report.capped) } : {}),
    index: index.report,
  };
}

/**
 * A chunk as a hit. With `maxLines`, the snippet is the window of that many lines holding the most
 * query tokens (the first lines when none match), and its line numbers say which lines they are.
 * With `holdLine` (a file line inside the chunk), the window is the one centred on that line instead:
 * find_related's source must show the line it was asked about.
 */
export function toHit(
  index: CodeIndex,
  chunk: number,
  score: number,
  terms: string[],
  maxLines?: number,
  holdLine?: number,
): CodeHit {
  const file = index.files[index.chunkFile[chunk]];
  const lines = index.texts[chunk].split("\n");
  let first = 0;
  let count = lines.length;
  if (maxLines && maxLines > 0 && lines.length > maxLines) {
    const wanted = new Set(terms);
    const weight = lines.map((line) => tokenize(line).filter((token) => wanted.has(token)).length);
    let best = 0;
    let window = weight.slice(0, maxLines).reduce((a, b) => a + b, 0);
    let bestWindow = window;
    for (let start = 1; start + maxLines <= lines.length; start++) {
      window += weight[start + maxLines - 1] - weight[start - 1];
      if (window > bestWindow) {
        bestWindow = window;
        best = start;
      }
    }
    first = best;
    if (holdLine !== undefined) {
      const at = holdLine - index.chunkStart[chunk];
      first = Math.max(0, Math.min(lines.length - maxLines, at - Math.floor(maxLines / 2)));
    }
    count = maxLines;
  }
  return {
    file_path: file.path,
    start_line: index.chunkStart[chunk] + first,
    end_line: index.chunkStart[chunk] + first + count - 1,
    score: Math.round(score * 1e6) / 1e6,
    language: file.language,
    content: lines.slice(first, first + count).join("\n"),
  };
}
