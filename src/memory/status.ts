/**
 * What a project's memory holds and whether it is up to date: the numbers `status` and the MCP
 * `memory_status` tool print (chunks, graph, LLM use, records captured but not indexed yet).
 */
import { existsSync, statSync } from "node:fs";
import { chatLogPath, indexLockPath, storePath } from "../home/paths.ts";
import { configPath, readProjectConfig } from "../project/config.ts";
import { isStoreDamage, openStoreForRead } from "../store/open.ts";
import type { SqliteMemoryStore } from "../store/sqlite.ts";
import { parseRecord } from "./chunking.ts";
import { isLocked } from "./lock.ts";
import { damagedReason, notActiveReason, notIndexedReason } from "./reasons.ts";
import type { SharedStatus } from "./shared.ts";

export interface MemoryStatus {
  active: boolean;
  reason?: string;
  chunks: number;
  sessions: number;
  /** Graph nodes: passage nodes (chunks) plus phrase nodes. */
  nodes: number;
  edges: number;
  entities: number;
  facts: number;
  edgesByKind: { fact: number; context: number; synonym: number };
  lastIndexed: string | null;
  llmUsage: { provider: string; model: string; calls: number; inputTokens: number; outputTokens: number }[];
  /** The same for the current calendar month (UTC): what `status` reports as the month's spend. */
  llmUsageThisMonth: MemoryStatus["llmUsage"];
  /** Chunks whose LLM extraction failed and will be retried on the next run. */
  pendingLlm: number;
  /** Records of chats.jsonl captured since the last index run and not in the index yet. */
  pendingRecords: number;
  indexing: boolean;
  store: string;
  /** With a shared store (`storage: postgres`): where it is, whether it answered, what is still to push. */
  shared?: SharedStatus;
}

/** What `/v1/stats` says of a project's memory. */
export type MemoryCounts = Pick<MemoryStatus, "active" | "reason" | "chunks" | "sessions" | "lastIndexed">;

/**
 * A project's chunks, sessions and last index run, for `/v1/stats`, which the page asks for on every
 * view: memoryStatus also counts the graph, reading every edge (1.4 s at 100,000 synthetic records).
 * A shared store's counts are memoryStatus's (every machine's memory, from the shared store).
 */
export async function memoryCounts(projectRoot: string): Promise<MemoryCounts> {
  const pick = ({ active, reason, chunks, sessions, lastIndexed }: MemoryStatus): MemoryCounts => ({
    active,
    ...(reason ? { reason } : {}),
    chunks,
    sessions,
    lastIndexed,
  });
  if (!existsSync(configPath(projectRoot)) || readProjectConfig(projectRoot).storage !== "local")
    return pick(await memoryStatus(projectRoot));
  let store: SqliteMemoryStore | undefined;
  try {
    store = openStoreForRead(projectRoot);
    if (!store) return pick(await memoryStatus(projectRoot));
    return { active: true, ...store.counts() };
  } catch {
    // Half-written or damaged: memoryStatus says which, as status does.
    return pick(await memoryStatus(projectRoot));
  } finally {
    store?.close();
  }
}

export async function memoryStatus(projectRoot: string): Promise<MemoryStatus> {
  const empty: MemoryStatus = {
    active: existsSync(configPath(projectRoot)),
    chunks: 0,
    sessions: 0,
    nodes: 0,
    edges: 0,
    entities: 0,
    facts: 0,
    edgesByKind: { fact: 0, context: 0, synonym: 0 },
    lastIndexed: null,
    llmUsage: [],
    llmUsageThisMonth: [],
    pendingLlm: 0,
    pendingRecords: 0,
    indexing: isLocked(indexLockPath(projectRoot)),
    store: storePath(projectRoot),
  };
  if (!empty.active) return { ...empty, reason: notActiveReason(projectRoot) };
  let store: SqliteMemoryStore | undefined;
  try {
    store = openStoreForRead(projectRoot);
    if (!store)
      return {
        ...empty,
        pendingRecords: await pendingRecords(projectRoot),
        reason: notIndexedReason(projectRoot),
      };
    const { sharedStatus } = await import("./shared.ts");
    const shared = await sharedStatus(projectRoot, store);
    // The counts are the shared store's (every machine's memory) when there is one that answered or was mirrored.
    const s = shared?.store ?? (await store.status());
    const edges = s.edges.fact + s.edges.context + s.edges.synonym;
    return {
      ...empty,
      ...(shared ? { shared } : {}),
      chunks: s.chunks,
      sessions: s.sessions,
      nodes: s.chunks + s.entities,
      edges,
      entities: s.entities,
      facts: s.facts,
      edgesByKind: s.edges,
      lastIndexed: s.lastIndexed,
      llmUsage: s.llmUsage,
      llmUsageThisMonth: s.llmUsageThisMonth,
      pendingLlm: s.pendingLlm,
      pendingRecords: await pendingRecords(projectRoot, store),
    };
  } catch (error) {
    // While the indexer writes (it may be creating the store right now), a reader can catch it half-way:
    // that is "indexing", not damage, and status must still answer.
    if (empty.indexing)
      return {
        ...empty,
        reason: `the indexer is writing; ask again in a moment (${(error as Error).message})`,
      };
    // Found at open or by any read (SQLite's SQLITE_CORRUPT): the indexer rebuilds it.
    if (isStoreDamage(error))
      return {
        ...empty,
        reason: damagedReason(projectRoot, (error as Error).message),
      };
    throw error;
  } finally {
    store?.close();
  }
}

/**
 * Complete records of chats.jsonl that no chunk holds yet: the lines after the offset the last index run
 * consumed (all lines when the file was rewritten since, by forget or by hand), as the indexer would read
 * them — unusable lines, forgotten sessions and records already indexed do not count.
 */
async function pendingRecords(projectRoot: string, store?: SqliteMemoryStore): Promise<number> {
  const file = chatLogPath(projectRoot);
  if (!existsSync(file)) return 0;
  const size = statSync(file).size;
  let offset = 0;
  if (store) {
    const state = await store.state();
    // PERF: the indexer module (LLM chain, extractor, summaries) loads only when there is an offset to check.
    const { offsetFingerprint } = await import("./indexer.ts");
    if (state.offset <= size && offsetFingerprint(file, state.offset) === state.offsetCheck)
      offset = state.offset;
  }
  if (offset >= size) return 0;
  // Only what follows the offset: the log holds every session ever captured.
  const text = await Bun.file(file).slice(offset, size).text();
  // A last line without its newline is still being written: not a record yet.
  const records = text
    .slice(0, text.lastIndexOf("\n") + 1)
    .split("\n")
    .flatMap((line) => (line.trim() ? (parseRecord(line) ?? []) : []));
  if (!store || records.length === 0) return records.length;
  const [forgotten, indexed] = await Promise.all([
    store.forgottenSessions(),
    store.indexedRecords(records.map((r) => r.uuid)),
  ]);
  return records.filter((r) => !forgotten.has(r.session_id) && !indexed.has(r.uuid)).length;
}
