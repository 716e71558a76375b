/**
 * The RAG service core: claw-rag-service's query, stats and ingest over triforge's code search, for
 * any number of workspaces. The HTTP adapter (`serve --http`) and `triforge ingest` call it. Each
 * workspace is one code-search index (the folder itself is its root, so nothing outside it is read);
 * the catalog file records which workspaces are ingested and, with an OpenAI-compatible embeddings
 * endpoint configured, the remote vector of each chunk.
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import { basename } from "node:path";
import { openIndex, searchLoaded, toHit } from "../code/code-search.ts";
import { prepareIndex, searchIndex } from "../code/search.ts";
import { type CodeIndex, indexFile } from "../code/store.ts";
import { queryTokens } from "../code/tokens.ts";
import { embedTexts, type RemoteEmbeddingConfig } from "../embed/remote.ts";
import { logError } from "../home/log.ts";
import { Catalog, chunkKey, type WorkspaceRecord } from "./catalog.ts";

/** claw-rag-service's defaults: 8 hits unless asked, never more than 64. */
export const DEFAULT_TOP_K = 8;
export const MAX_TOP_K = 64;
/** Lines of each snippet, around its best-matching lines (claw clients print at most 32). */
export const SNIPPET_LINES = 12;
/**
 * Searches a process runs over its own index as it starts, before its first clients. JavaScriptCore
 * compiles a function in its optimising tiers only after many calls, and a query path is many
 * functions called once or a few times a query: a fresh server answered its first thousand queries
 * with ~1.6× the CPU of later ones. Under load (benchmark/http.ts, alternating with the tree before)
 * p99 fell by 3–6 ms (medians 84.0 → 81.2 ms in the server, 74.5 → 68.1 with two workers); more than
 * a few hundred did not lower it further. They cost ~1 ms each at 100k chunks: WARM_UP_MS bounds
 * them all (every served index) on larger ones, whose first clients wait for them as for the load.
 */
const WARM_UP_QUERIES = 400;
const WARM_UP_MS = 1_000;
/** How a query searches a served index (the warm-up searches the same way): top k aside. */
const QUERY_SEARCH = { maxSnippetLines: SNIPPET_LINES, content: "all", refresh: false } as const;
/** A served index file is checked for a newer copy (another process ingested) at most this often. */
const RELOAD_CHECK_MS = 1_000;

/**
 * The phases claw-rag-service's clients accept (they refuse any other value): `1-sqlite-no-db` when no
 * workspace has an index yet, `1-sqlite-empty` when the indexes hold nothing, `1-sqlite` otherwise.
 */
export type Phase = "1-sqlite" | "1-sqlite-empty" | "1-sqlite-no-db";

export interface RagHit {
  /** Relative to the workspace; `<folder name>:<path>` when several workspaces are served. */
  path: string;
  snippet: string;
  score: number;
  start_line: number;
  end_line: number;
}

export interface RagQueryResult {
  hits: RagHit[];
  phase: Phase;
  note?: string;
}

export interface IngestProgress {
  workspace: string;
  stage: "index" | "embed";
  done: number;
  total: number;
}

export interface IngestReport extends WorkspaceRecord {
  changed: number;
  removed: number;
  /** Chunks sent to the remote embeddings endpoint (0 with the embedded model). */
  embedded: number;
  durationMs: number;
}

/** A bad request the caller can fix (an unknown workspace, a query in another vector space). */
export class RagRequestError extends Error {}

/** A folder's real absolute path, or a RagRequestError saying what is wrong with it. */
export function realFolder(path: string): string {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    throw new RagRequestError(`${path} does not exist`);
  }
  if (!statSync(real).isDirectory()) throw new RagRequestError(`${path} is not a folder`);
  return real;
}

interface Served {
  root: string;
  index?: CodeIndex;
  /** mtime of index.bin when `index` was loaded, and when it was last looked at. */
  loadedMtime: number;
  checkedAt: number;
  /** A reload under way (one at a time). */
  reloading?: Promise<unknown>;
}

export interface RagServiceOptions {
  catalogPath: string;
  remote?: RemoteEmbeddingConfig;
}

export class RagService {
  private readonly served: Served[];
  /** Per loaded index, the same index with the remote vectors in place of the built-in ones. */
  private readonly remoteViews = new WeakMap<CodeIndex, CodeIndex>();

  constructor(
    roots: string[],
    private readonly options: RagServiceOptions,
  ) {
    this.served = [...new Set(roots.map(realFolder))].map((root) => ({ root, loadedMtime: 0, checkedAt: 0 }));
  }

  get workspaces(): string[] {
    return this.served.map((s) => s.root);
  }

  /** The served workspace `path` names (its real path must be one of them), else a RagRequestError. */
  workspace(path: string): string {
    let real: string | undefined;
    try {
      real = realFolder(path);
    } catch {
      // Said as for any other folder: the API does not tell what exists outside its workspaces.
    }
    const served = this.served.find((s) => s.root === real);
    if (!served)
      throw new RagRequestError(
        `${path} is not a workspace this server serves (${this.workspaces.join(", ")})`,
      );
    return served.root;
  }

  /** The workspace's index as saved on disk, reloaded in the background when another process re-ingested it. */
  private async loaded(served: Served): Promise<CodeIndex | undefined> {
    const now = performance.now();
    if (served.index && now - served.checkedAt < RELOAD_CHECK_MS) return served.index;
    served.checkedAt = now;
    const file = indexFile(served.root);
    if (!existsSync(file)) return served.index;
    const mtime = statSync(file).mtimeMs;
    // A served index answers many queries: what its first ones would build is built as it loads
    // (with remote vectors a query searches another view of it, which builds its own).
    const load = (refresh: "never" | "now") =>
      openIndex(served.root, { refresh }).then((index) => {
        if (!this.options.remote) prepareIndex(index);
        served.index = index;
        served.loadedMtime = mtime;
        return index;
      });
    // Loads at once from several callers are one (openIndex shares a load under way).
    if (!served.index) return load("never");
    if (mtime !== served.loadedMtime && !served.reloading)
      // A reload that fails keeps the index being served (and is logged): nobody awaits it, so a
      // rejection left to itself would end the server.
      served.reloading = load("now")
        .catch((error) => logError(`serve --http: reloading the index of ${served.root}`, error))
        .finally(() => {
          served.reloading = undefined;
        });
    return served.index;
  }

  /**
   * Loads (and prepares) every served index now, so that the first query does not, then runs
   * WARM_UP_QUERIES searches of them (not with `searches: false`, nor with remote vectors): the server
   * and each query worker call it as they start. A query meanwhile waits for the same load.
   */
  async warm(options: { searches?: boolean } = {}): Promise<void> {
    const loaded = await this.indexes();
    // With remote vectors every query is a call to the provider: those are not spent on warming up;
    // nor a server's own thread when query workers answer for it.
    if (this.options.remote || options.searches === false) return;
    const until = performance.now() + WARM_UP_MS;
    for (const { index } of loaded)
      await warmUpSearch(index, Math.ceil(WARM_UP_QUERIES / loaded.length), until);
  }

  private async indexes(): Promise<{ root: string; index: CodeIndex }[]> {
    const out: { root: string; index: CodeIndex }[] = [];
    for (const served of this.served) {
      const index = await this.loaded(served);
      if (index) out.push({ root: served.root, index });
    }
    return out;
  }

  async stats(): Promise<{
    chunks: number;
    phase: Phase;
    files: number;
    model: string;
    workspaces: { root: string; files: number; chunks: number; indexed_at: string | null }[];
  }> {
    const loaded = new Map((await this.indexes()).map(({ root, index }) => [root, index]));
    const workspaces = this.served.map(({ root }) => {
      const index = loaded.get(root);
      return {
        root,
        files: index?.files.length ?? 0,
        chunks: index?.texts.length ?? 0,
        indexed_at: index?.report.indexedAt ?? null,
      };
    });
    const chunks = workspaces.reduce((sum, w) => sum + w.chunks, 0);
    const builtIn = [...loaded.values()][0]?.modelId ?? "potion (embedded)";
    return {
      chunks,
      phase: phaseOf(loaded.size, chunks),
      files: workspaces.reduce((sum, w) => sum + w.files, 0),
      model: this.options.remote ? this.options.remote.model : builtIn,
      workspaces,
    };
  }

  /** claw-rag-service's `POST /v1/query`: the best `topK` snippets over every served workspace. */
  async query(query: string, topK = DEFAULT_TOP_K): Promise<RagQueryResult> {
    const k = Math.max(1, Math.min(MAX_TOP_K, Math.floor(topK)));
    const loaded = await this.indexes();
    const chunks = loaded.reduce((sum, { index }) => sum + index.texts.length, 0);
    const phase = phaseOf(loaded.length, chunks);
    if (phase !== "1-sqlite") return { hits: [], phase };
    const prefix = this.served.length > 1;
    const remoteVector = this.options.remote ? await this.remoteQueryVector(query) : undefined;
    const hits: RagHit[] = [];
    const notes = new Set<string>();
    for (const { root, index } of loaded) {
      const found = remoteVector
        ? this.searchRemote(root, index, query, remoteVector, k)
        : await searchLoaded(index, query, { ...QUERY_SEARCH, topK: k });
      if (found.note) notes.add(found.note);
      for (const hit of found.hits)
        hits.push({
          path: prefix ? `${basename(root)}:${hit.file_path}` : hit.file_path,
          snippet: hit.content,
          score: hit.score,
          start_line: hit.start_line,
          end_line: hit.end_line,
        });
    }
    hits.sort((a, b) => b.score - a.score);
    return {
      hits: hits.slice(0, k),
      phase,
      ...(notes.size && hits.length === 0 ? { note: [...notes].join("; ") } : {}),
    };
  }

  /** The query's remote vector, checked against the space the stored vectors were embedded in. */
  private async remoteQueryVector(query: string): Promise<Float32Array> {
    const remote = this.options.remote!;
    const catalog = Catalog.open(this.options.catalogPath);
    const space = catalog.vectorSpace();
    catalog.close();
    if (!space)
      throw new RagRequestError(
        `the index holds no vectors of ${remote.model}: run 'triforge ingest' with the same CLAW_RAG_EMBEDDING_MODEL first`,
      );
    if (space.model !== remote.model)
      throw new RagRequestError(
        `the index was embedded with ${space.model} (dimension ${space.dim}) but queries are embedded with ${remote.model}; use the same model for both, or re-run 'triforge ingest'`,
      );
    const [vector] = await embedTexts(remote, [query.trim()]);
    if (vector.length !== space.dim)
      throw new RagRequestError(
        `the index was embedded with ${space.model} at dimension ${space.dim} but the query embedding has dimension ${vector.length}; use the same model and dimension for both`,
      );
    return vector;
  }

  private searchRemote(root: string, index: CodeIndex, query: string, vector: Float32Array, topK: number) {
    let view = this.remoteViews.get(index);
    if (!view) {
      const catalog = Catalog.open(this.options.catalogPath);
      const stored = catalog.vectors(root);
      catalog.close();
      const vectors = new Float32Array(index.texts.length * vector.length);
      index.texts.forEach((text, i) => {
        const v = stored.get(chunkKey(text));
        if (v && v.length === vector.length) vectors.set(v, i * vector.length);
      });
      view = { ...index, vectors, dim: vector.length };
      this.remoteViews.set(index, view);
    }
    const ranked = searchIndex(view, query, vector, { topK, content: "all" });
    const terms = queryTokens(query);
    return {
      hits: ranked.map(({ chunk, score }) => toHit(view, chunk, score, terms, SNIPPET_LINES)),
      note: undefined,
    };
  }

  /** Re-indexes one served workspace (its changed files only), and its remote vectors when configured. */
  async ingest(root: string, onProgress?: (progress: IngestProgress) => void): Promise<IngestReport> {
    const served = this.served.find((s) => s.root === root);
    if (!served) throw new RagRequestError(`${root} is not a workspace this server serves`);
    const report = await ingestWorkspace(root, { ...this.options, onProgress });
    served.index = await openIndex(root, { refresh: "never" });
    served.loadedMtime = existsSync(indexFile(root)) ? statSync(indexFile(root)).mtimeMs : 0;
    return report;
  }
}

function phaseOf(indexes: number, chunks: number): Phase {
  if (indexes === 0) return "1-sqlite-no-db";
  return chunks === 0 ? "1-sqlite-empty" : "1-sqlite";
}

/**
 * Builds or refreshes the index of one folder (only new and changed files are read) and records it in the
 * catalog. Only this workspace's rows change: the others' chunks and vectors stay as they are.
 */
export async function ingestWorkspace(
  folder: string,
  options: RagServiceOptions & { onProgress?: (progress: IngestProgress) => void },
): Promise<IngestReport> {
  const root = realFolder(folder);
  const started = performance.now();
  const index = await openIndex(root, {
    refresh: "now",
    onProgress: (done, total) => options.onProgress?.({ workspace: root, stage: "index", done, total }),
  });
  const catalog = Catalog.open(options.catalogPath);
  try {
    let embedded = 0;
    if (options.remote)
      embedded = await embedRemote(catalog, root, index, options.remote, options.onProgress);
    const record: WorkspaceRecord = {
      root,
      ingestedAt: new Date().toISOString(),
      files: index.files.length,
      chunks: index.texts.length,
    };
    catalog.record(record);
    return {
      ...record,
      changed: index.report.changed,
      removed: index.report.removed,
      embedded,
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    catalog.close();
  }
}

/** Embeds the chunks whose text has no stored remote vector yet; drops vectors of texts that are gone. */
async function embedRemote(
  catalog: Catalog,
  root: string,
  index: CodeIndex,
  remote: RemoteEmbeddingConfig,
  onProgress?: (progress: IngestProgress) => void,
): Promise<number> {
  const space = catalog.vectorSpace();
  const stored = space?.model === remote.model ? catalog.vectorKeys(root) : new Set<string>();
  const keys = index.texts.map(chunkKey);
  const missing = new Map<string, string>();
  keys.forEach((key, i) => {
    if (!stored.has(key)) missing.set(key, index.texts[i]);
  });
  const added = new Map<string, Float32Array>();
  if (missing.size) {
    const vectors = await embedTexts(remote, [...missing.values()], {
      onProgress: (done, total) => onProgress?.({ workspace: root, stage: "embed", done, total }),
    });
    catalog.setVectorSpace({ model: remote.model, dim: vectors[0].length });
    [...missing.keys()].forEach((key, i) => {
      added.set(key, vectors[i]);
    });
  }
  catalog.replaceVectors(root, added, new Set(keys));
  return added.size;
}

/**
 * Up to `count` searches of `index` made from its own chunks (their first words, or one identifier of
 * them, the two shapes of query the ranking treats differently), until the clock passes `until`.
 */
async function warmUpSearch(index: CodeIndex, count: number, until: number): Promise<void> {
  const chunks = index.texts.length;
  if (!chunks) return;
  const step = Math.max(1, Math.floor(chunks / count));
  for (let i = 0; i < count && performance.now() < until; i++) {
    const words = index.texts[(i * step) % chunks].match(/[A-Za-z_][A-Za-z0-9_]{2,}/g);
    if (!words) continue;
    const query = i % 2 ? words.slice(0, 5).join(" ") : words[Math.min(3, words.length - 1)];
    await searchLoaded(index, query, { ...QUERY_SEARCH, topK: DEFAULT_TOP_K });
  }
}
