/**
 * Recall: the memory core every adapter (MCP `rag_search`, `triforge recall`, later HTTP) calls.
 * Never throws for an inactive project, a missing or empty index: it answers no hits and a reason.
 */
import { existsSync, rmSync, statSync } from "node:fs";
import { logError } from "../../home/log.ts";
import {
  indexLockPath,
  mirrorSnapshotPath,
  mirrorStorePath,
  recallSnapshotPath,
  snapshotFiles,
  storePath,
} from "../../home/paths.ts";
import { isCompiled } from "../../home/runtime.ts";
import { configPath, readProjectConfig } from "../../project/config.ts";
import { discardStore, isStoreDamage, openStoreFileForRead } from "../../store/open.ts";
import type { SqliteMemoryStore } from "../../store/sqlite.ts";
import { chunkRole, TURN_SEPARATOR } from "../chunking.ts";
import { isLocked, tryLock } from "../lock.ts";
import { damagedReason, notActiveReason, notIndexedReason, rebuildingReason } from "../reasons.ts";
import type { SharedOptions } from "../shared.ts";
import { lexicalTokens } from "../tokens.ts";
import { hitExcerpt } from "./excerpt.ts";
import {
  LLM_GRAPH_FUSION,
  LLM_GRAPH_SHARE,
  LOCAL_GRAPH_FUSION,
  reciprocalRankFusion,
  scoreFusion,
} from "./fusion.ts";
import { MODES, type Mode } from "./modes.ts";
import { MemoryIndex, type Ranked, type RecallChunk, topIndices } from "./snapshot.ts";
import { markSnapshotDamaged, persistedIndex } from "./snapshot-file.ts";
import { SnapshotFileError } from "./snapshot-pages.ts";
import { queryRole, type Role, withoutNames } from "./speakers.ts";

export { formatRecalled } from "./format.ts";
export { MODES, type Mode } from "./modes.ts";

export interface RecallHit {
  text: string;
  role: string;
  ts: string;
  session_id: string;
  score: number;
  /** Which retrieval produced the hit (`hybrid`, `graph`, `dense`, `bm25`). */
  source: string;
  /** The chunk's turns in order (uuid, role), for callers that map hits back to single turns. */
  turns: { uuid: string; role: string }[];
}

export interface RecallResult {
  hits: RecallHit[];
  reason?: string;
}

export interface RecallOptions {
  topK?: number;
  mode?: Mode;
  /** Only this side's turns ("what did the user decide…"), as a query naming that side gets them. */
  speaker?: Role;
  /** How the shared store (`storage: postgres`) is reached; tests and benchmarks pass a PGlite client. */
  shared?: SharedOptions;
}

export const DEFAULT_TOP_K = 5;

interface Warm {
  store: SqliteMemoryStore;
  inode: number;
  index?: MemoryIndex;
  /** The store generation and snapshot file the index was loaded at: another key means reload. */
  key?: string;
  loading?: Promise<MemoryIndex>;
}

/** Open stores and their built indexes, per store file: a long-lived process answers warm. */
const warm = new Map<string, Warm>();

/**
 * Snapshot files (path and stamp) a query found a damaged page in: this process reads the store instead
 * until the file is replaced (the process marks it, so the next index run checks every page and rebuilds it).
 */
const damagedSnapshots = new Set<string>();

/**
 * The store recall reads and its recall arrays: the local store, or with a shared store (`storage:
 * postgres`) the local mirror of it, pulled first when the shared store changed (see memory/shared.ts).
 */
async function recallFiles(
  root: string,
  shared?: SharedOptions,
): Promise<{ store: string; snapshot: string }> {
  const local = { store: storePath(root), snapshot: recallSnapshotPath(root) };
  if (readProjectConfig(root).storage === "local") return local;
  const { refreshMirror } = await import("../shared.ts");
  await refreshMirror(root, shared);
  const mirror = mirrorStorePath(root);
  // Never reached yet (down since activation): this machine's own memory is better than none.
  return existsSync(mirror) ? { store: mirror, snapshot: mirrorSnapshotPath(root) } : local;
}

/** The project's warm index (undefined when none is built yet), reloaded when the store changed (a new generation or a rebuilt file). */
export async function loadMemoryIndex(
  root: string,
  shared?: SharedOptions,
): Promise<MemoryIndex | undefined> {
  const files = await recallFiles(root, shared);
  const current = warmEntry(files.store);
  if (!current) return undefined;
  const file = files.snapshot;
  const stamp = snapshotStamp(file);
  const usable = !damagedSnapshots.has(stamp);
  const key = `${current.store.generation()}:${stamp}:${usable}`;
  if (current.index && current.key === key) return current.index;
  current.loading ??= (async () => {
    const { loadModel } = await import("../../embed/source.ts");
    const model = await loadModel();
    // The persisted snapshot answers without reading the whole store; while an indexer runs, an older
    // one is still right about every chunk it holds (nothing was deleted) and is refreshed at the run's end.
    const persisted = usable
      ? persistedIndex(file, current.store, model.id, isLocked(indexLockPath(root)), root)
      : undefined;
    return persisted ?? MemoryIndex.build(await current.store.snapshot(), model);
  })().finally(() => {
    current.loading = undefined;
  });
  current.index = await current.loading;
  current.key = key;
  return current.index;
}

/** The open store recall reads for `root` (kept open, as its index is): for what reads the store itself. */
export async function recallStore(
  root: string,
  shared?: SharedOptions,
): Promise<SqliteMemoryStore | undefined> {
  return warmEntry((await recallFiles(root, shared)).store)?.store;
}

/** The warm entry of the store file at `path`, opened when first met or replaced since (another inode). */
function warmEntry(path: string): Warm | undefined {
  if (!existsSync(path)) return undefined;
  const inode = statSync(path).ino;
  let entry = warm.get(path);
  if (entry && entry.inode !== inode) {
    entry.store.close();
    warm.delete(path);
    entry = undefined;
  }
  if (!entry) {
    const store = openStoreFileForRead(path);
    if (!store) return undefined;
    entry = { store, inode };
    warm.set(path, entry);
  }
  return entry;
}

/** The version of a snapshot and its additions: either replaced makes another index. */
function snapshotStamp(snapshot: string): string {
  return snapshotFiles(snapshot).map(fileStamp).join("+");
}

/** Identifies one version of a file (it is only ever replaced whole, by rename): path, inode, size and time. */
function fileStamp(path: string): string {
  try {
    const s = statSync(path);
    return `${path}:${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return `${path}:none`;
  }
}

/**
 * SQLite found the store damaged while recall read it. Unless an indexer holds the store, it is moved
 * aside at once (so no later call reads it again) and, in the installed binary, a detached indexer
 * rebuilds it from chats.jsonl; the answer says so instead of failing.
 */
async function damagedStoreReason(root: string, damage: unknown): Promise<string> {
  const path = storePath(root);
  warm.get(path)?.store.close();
  warm.delete(path);
  const cause = (damage as Error).message;
  const mirror = mirrorStorePath(root);
  if (warm.has(mirror)) {
    // The mirror of a shared store is a copy: removed, and pulled whole at the next question.
    warm.get(mirror)?.store.close();
    warm.delete(mirror);
    for (const file of [mirror, `${mirror}-wal`, `${mirror}-shm`, ...snapshotFiles(mirrorSnapshotPath(root))])
      rmSync(file, { force: true, recursive: true });
    logError("recall", `local mirror of the shared store damaged, removed: ${cause}`, root);
    return rebuildingReason(cause, "it is pulled again from the shared store at the next question");
  }
  const lock = tryLock(indexLockPath(root), "recall: move a damaged store aside");
  if (!lock) return rebuildingReason(cause, "the indexer running now rebuilds it");
  try {
    logError("recall", `memory store damaged, moved aside for rebuilding from chats.jsonl: ${cause}`, root);
    discardStore(root);
  } finally {
    lock.release();
  }
  if (!isCompiled()) return damagedReason(root, cause);
  const { spawnDetachedIndexer } = await import("../background.ts");
  spawnDetachedIndexer(root);
  return rebuildingReason(cause, "an indexer started in the background rebuilds it");
}

/** Drops warm indexes (tests; a server that wants to free memory). */
export function closeWarmIndexes(): void {
  for (const entry of warm.values()) entry.store.close();
  warm.clear();
}

/**
 * Ranks chunks for a query in one mode; the benchmarks call this directly for deeper lists.
 *
 * A query that names one side of the conversation (a name speakers.ts linked to a role: "What
 * activities does Melanie partake in?") is about that side's turns: each hit holds only the chunks'
 * turns of that role, and the names are left out of the scoring, because in the text a name is mostly
 * the OTHER side addressing that person ("Thanks, Melanie!"), which would pull the wrong turns up.
 */
export async function rankChunks(
  index: MemoryIndex,
  query: string,
  mode: Mode,
  k: number,
  speaker?: Role,
): Promise<Ranked[]> {
  const named = queryRole(query, index.speakerNames);
  const role = speaker ?? named;
  if (!role) return rankAllTurns(index, query, mode, k);
  const unnamed = named ? withoutNames(query, index.speakerNames) : query;
  // The names matched memory even when nothing else does ("What attributes describe John?"): the query
  // is related, so the relevance floor does not apply.
  const ranked = await rankAllTurns(
    index,
    lexicalTokens(unnamed).length ? unnamed : query,
    mode,
    k * SPEAKER_DEPTH_FACTOR,
    named !== undefined,
  );
  const out: Ranked[] = [];
  for (const hit of ranked) {
    const turns = index.chunk(hit.chunk).turns.flatMap((t, i) => (t.role === role ? [i] : []));
    if (turns.length) out.push({ ...hit, turns });
    if (out.length === k) break;
  }
  // That side said nothing that matches: unless the caller asked for that side only, the other side's
  // turns are better than no answer.
  return out.length || speaker ? out : rankAllTurns(index, query, mode, k);
}

/**
 * Chunks ranked for a speaker's question are fetched this many times deeper than asked: a chunk with
 * none of that speaker's turns is dropped (an exchange can be one side only).
 */
const SPEAKER_DEPTH_FACTOR = 2;

async function rankAllTurns(
  index: MemoryIndex,
  query: string,
  mode: Mode,
  k: number,
  namesMatched = false,
): Promise<Ranked[]> {
  const n = index.chunkCount;
  if (n === 0 || k <= 0) return [];
  const bm25 = index.bm25Scores(query);
  // BM25 scores only chunks that share a term with the query: every hit is lexically related.
  if (mode === "bm25") return top(bm25, k, true);
  const { loadModel } = await import("../../embed/source.ts");
  const vector = await (await loadModel()).embed(query);
  const dense = index.denseScores(vector);
  const ranked =
    mode === "dense"
      ? top(dense, Math.min(n, k * FLOOR_DEPTH_FACTOR), false)
      : mode === "graph"
        ? top(index.graphScores(query, vector, dense, bm25), Math.min(n, k * FLOOR_DEPTH_FACTOR), false)
        : top(
            hybridScores(index, query, index.graphScores(query, vector, dense, bm25), bm25, dense),
            Math.min(n, k * FLOOR_DEPTH_FACTOR),
            true,
          );
  // Something in memory shares a term with the query: every hit is one of those or reached from them.
  if (namesMatched || bm25.some((score) => score > 0)) return ranked.slice(0, k);
  return ranked.filter(({ chunk }) => dense[chunk] >= RELEVANCE_FLOOR).slice(0, k);
}

/**
 * The relevance floor: when no stored exchange shares a term with the query, meaning alone must carry a
 * hit, and a hit under this dense cosine is not returned (every mode would otherwise rank something for
 * "zzzqqq unrelated"). 0.55 is the 99th percentile of the best cosine that questions about something
 * else reach: MuSiQue's questions against LoCoMo's conversations, 101 of 1,000 pairs with no shared term
 * (median 0.28, max 0.62). Answers score no higher (LoCoMo evidence cosines: median 0.44), so only
 * a close paraphrase passes: the static model cannot tell a loose answer from noise.
 * No floor when some exchange shares a term: hits without one were reached through those (feedback
 * words, a session neighbour, a shared phrase node), and their cosines say little — on LoCoMo's
 * tuning half a floor of 0.1 / 0.3 / 0.5 on them lowers recall@10 from 74.3 to 74.1 / 73.6 / 71.2,
 * and a graph hop to a passage through a phrase node can point away from the query (cosine < 0).
 * No LoCoMo question is without a shared term, so its recall is unchanged with the floor on.
 */
export const RELEVANCE_FLOOR = 0.55;
/** Ranked this many times deeper than asked, so hits under the floor are replaced by the next ones. */
const FLOOR_DEPTH_FACTOR = 3;

/** The fusion recipe that suits the project's graph (see fusion.ts). */
function hybridScores(
  index: MemoryIndex,
  query: string,
  graph: Float64Array,
  bm25: Float64Array,
  dense: Float64Array,
): Float64Array {
  if (index.llmGraphShare >= LLM_GRAPH_SHARE) {
    const { graph: g, bm25: b, dense: d, rrfK } = LLM_GRAPH_FUSION;
    return reciprocalRankFusion([graph, index.smoothAlongSessions(bm25), dense], [g, b, d], rrfK);
  }
  const { graph: g, bm25: b, dense: d } = LOCAL_GRAPH_FUSION;
  return index.smoothAlongSessions(
    scoreFusion([graph, index.feedbackBm25Scores(query, bm25), dense], [g, b, d]),
  );
}

/** The k best, dropping zero scores where zero means "no match" (BM25, fusion). */
function top(scores: ArrayLike<number>, k: number, positiveOnly: boolean): Ranked[] {
  return topIndices(scores, k)
    .filter((i) => !positiveOnly || scores[i] > 0)
    .map((chunk) => ({ chunk, score: scores[chunk] }));
}

/** A chunk cut down to some of its turns (their texts joined as a chunk's are, spans rebased). */
function turnsOf(chunk: RecallChunk, picked: number[]): RecallChunk {
  let text = "";
  const turns = picked.map((i) => {
    const t = chunk.turns[i];
    if (text) text += TURN_SEPARATOR;
    const start = text.length;
    text += chunk.text.slice(t.start, t.end);
    return { ...t, start, end: text.length };
  });
  return { ...chunk, text, turns };
}

export async function recall(
  projectRoot: string,
  query: string,
  options: RecallOptions = {},
): Promise<RecallResult> {
  const mode = options.mode ?? "hybrid";
  const topK = Math.max(1, Math.floor(options.topK ?? DEFAULT_TOP_K));
  if (!MODES.includes(mode)) return { hits: [], reason: `unknown mode '${mode}' (use ${MODES.join(", ")})` };
  if (!existsSync(configPath(projectRoot))) return { hits: [], reason: notActiveReason(projectRoot) };
  if (!query.trim()) return { hits: [], reason: "empty query" };
  // Every mode would still rank something (dense cosine of a "???" vector, graph priors): confident noise.
  if (lexicalTokens(query).length === 0)
    return {
      hits: [],
      reason:
        "the query has no content terms (only punctuation or common words); ask with a name, topic, file or identifier",
    };
  try {
    return await answer(projectRoot, query, mode, topK, options);
  } catch (error) {
    if (!isStoreDamage(error)) throw error;
    return { hits: [], reason: await damagedStoreReason(projectRoot, error) };
  }
}

/**
 * The answer from the project's index; when a page of recall.bin that the query read is damaged (its
 * pages are checked as they are first read), the damage is logged and the same query answered from
 * the store, as for a file that is damaged where opening checks it.
 */
async function answer(
  projectRoot: string,
  query: string,
  mode: Mode,
  topK: number,
  options: RecallOptions,
): Promise<RecallResult> {
  try {
    const index = await loadMemoryIndex(projectRoot, options.shared);
    return await answerFrom(projectRoot, index, query, mode, topK, options);
  } catch (error) {
    if (!(error instanceof SnapshotFileError)) throw error;
    logError("recall: snapshot file unusable, reading the store instead", error, projectRoot);
    const { snapshot } = await recallFiles(projectRoot, options.shared);
    damagedSnapshots.add(snapshotStamp(snapshot));
    markSnapshotDamaged(snapshot);
    const index = await loadMemoryIndex(projectRoot, options.shared);
    return answerFrom(projectRoot, index, query, mode, topK, options);
  }
}

async function answerFrom(
  projectRoot: string,
  index: MemoryIndex | undefined,
  query: string,
  mode: Mode,
  topK: number,
  { speaker }: RecallOptions,
): Promise<RecallResult> {
  if (!index || index.chunkCount === 0) {
    const running = isLocked(indexLockPath(projectRoot)) ? " (an indexer is running now)" : "";
    return {
      hits: [],
      reason: notIndexedReason(projectRoot, running),
    };
  }
  const ranked = await rankChunks(index, query, mode, topK, speaker);
  if (ranked.length === 0)
    return {
      hits: [],
      reason:
        "nothing in memory matches the query: no stored exchange shares a word with it or is close in meaning",
    };
  return {
    hits: ranked.map(({ chunk, score, turns }) => {
      const c = turns ? turnsOf(index.chunk(chunk), turns) : index.chunk(chunk);
      return {
        text: hitExcerpt(c.text, c.turns, query),
        role: chunkRole(c.turns),
        ts: c.turns[0]?.ts ?? c.ts,
        session_id: c.sessionId,
        score: Number(score.toFixed(6)),
        source: mode,
        turns: c.turns.map((t) => ({ uuid: t.uuid, role: t.role })),
      };
    }),
  };
}
