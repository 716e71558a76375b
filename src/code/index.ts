/**
 * Code search: the core every adapter (CLI, MCP, later HTTP) calls. A repository is indexed on
 * first use and refreshed incrementally before answering, so a search never says "not indexed".
 */
import { existsSync } from "node:fs";
import { loadModel } from "../embed/source.ts";
import { RepositoryError } from "./errors.ts";
import { type Progress, refreshIndex, resolveRepository } from "./indexer.ts";
import { CONTENT_KINDS } from "./languages.ts";
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
  repo: string;
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

/**
 * The up-to-date index of a repository: built on first use, refreshed when older than
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
    root = resolveRepository(repo);
  } catch {
    return false;
  }
  if (!existsSync(indexFile(root))) return false;
  await openIndex(root);
  return true;
}

/** Builds or refreshes the index explicitly (`triforge code-index`). */
export async function indexRepository(
  repo: string,
  options: { onProgress?: Progress; force?: boolean } = {},
): Promise<IndexReport> {
  return (await openIndex(repo, { refresh: "now", ...options })).report;
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

/** Ranked snippets answering `query` in the repository at `repo`. */
export async function searchCode(
  repo: string,
  query: string,
  options: SearchCodeOptions = {},
): Promise<CodeSearchResult> {
  const index = await openIndex(repo, { refresh: options.refresh === false ? "never" : "auto" });
  return searchLoaded(index, query, options);
}

/** Search an index already in hand (batch mode answers many queries from one loaded index). */
export async function searchLoaded(
  index: CodeIndex,
  query: string,
  options: SearchCodeOptions = {},
): Promise<CodeSearchResult> {
  const trimmed = query.trim();
  const result: CodeSearchResult = { repo: index.root, hits: [], index: index.report };
  if (!trimmed) return { ...result, note: "the query is empty" };
  const model = await loadModel();
  const text = trimmed.slice(0, MAX_QUERY_CHARS);
  const vector = await model.embed(text);
  const ranked = searchIndex(index, text, vector, {
    topK: clampTopK(options.topK),
    content: options.content ?? "code",
    mode: options.mode,
  });
  const terms = queryTokens(text);
  result.hits = ranked.map(({ chunk, score }) => toHit(index, chunk, score, terms, options.maxSnippetLines));
  const notes: string[] = [];
  if (trimmed.length > MAX_QUERY_CHARS)
    notes.push(`the query was cut to its first ${MAX_QUERY_CHARS} characters`);
  if (!result.hits.length) notes.push(`nothing in ${index.files.length} indexed files matches`);
  if (notes.length) result.note = notes.join("; ");
  return result;
}

/** Chunks similar to the one holding `line` of `file` (a path relative to the repository, or absolute inside it). */
export async function findRelated(
  repo: string,
  file: string,
  line: number,
  options: SearchCodeOptions = {},
): Promise<CodeSearchResult & { source?: CodeHit }> {
  const index = await openIndex(repo, { refresh: options.refresh === false ? "never" : "auto" });
  const { relatedChunks } = await import("./related.ts");
  const found = relatedChunks(index, file, line, clampTopK(options.topK), options.content ?? "all");
  if ("error" in found) throw new RepositoryError(found.error);
  return {
    repo: index.root,
    source: toHit(index, found.source, 1, [], options.maxSnippetLines, line),
    hits: found.ranked.map(({ chunk, score }) => toHit(index, chunk, score, [], options.maxSnippetLines)),
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
