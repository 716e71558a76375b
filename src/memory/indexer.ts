/**
 * The indexer: turns new lines of `chats.jsonl` into chunks, static embeddings, a knowledge graph and
 * session summaries in the project's store. One per project at a time (a lock); crash-safe: every batch
 * is one SQLite transaction, and records already held by a chunk are skipped by uuid, so a run killed at
 * any point resumes with no duplicate and no loss. A damaged store is rebuilt from chats.jsonl.
 */
import { createHash } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_TOKENS, type StaticModel } from "../embed/model.ts";
import { readAt } from "../home/file-io.ts";
import { logError } from "../home/log.ts";
import { chatLogPath, indexLockPath, recallSnapshotPath, summaryPath } from "../home/paths.ts";
import type { Llm } from "../llm/client.ts";
import type { ResolveOptions } from "../llm/resolve.ts";
import { discardStore, isStoreDamage, openStoreForWrite, StoreCorruptError } from "../store/open.ts";
import type { SqliteMemoryStore } from "../store/sqlite.ts";
import { factKey } from "../store/sqlite.ts";
import { SYNONYM_RULE, type SynonymChanges, SynonymGraph } from "../store/synonyms.ts";
import type {
  Chunk,
  ChunkGraph,
  FactMention,
  GraphSource,
  IndexState,
  NewChunk,
  SummaryEntry,
} from "../store/types.ts";
import type { ChatRecord } from "./chatlog.ts";
import { chunkRecords, parseRecord } from "./chunking.ts";
import { extractGraph } from "./extract.ts";
import { graphFromOpenIE } from "./graph.ts";
import { tryLock } from "./lock.ts";
import { cleanFlaggedRecords, rewriteCleanedLines } from "./review.ts";
import type { SharedOptions, SyncResult } from "./shared.ts";
import { clipEntry, entryDate, extractiveSummary, refreshSummaryFile } from "./summary.ts";

/** Chunks per transaction: big enough to amortise embedding calls, small enough that a kill loses little work. */
export const BATCH_CHUNKS = 256;
/** Parallel LLM calls while indexing: providers rate-limit, and a background job need not hurry. */
const LLM_CONCURRENCY = 4;
/** Bytes hashed before the saved offset to notice that chats.jsonl was rewritten under us. */
const OFFSET_CHECK_BYTES = 256;
/** Earlier OpenIE failures retried per run: a long outage should not turn one run into thousands of calls. */
const MAX_LLM_RETRIES_PER_RUN = 500;

export interface IndexProgress {
  phase: "reading" | "indexing" | "llm-retry" | "done";
  done: number;
  total: number;
}

export interface IndexOptions {
  onProgress?: (progress: IndexProgress) => void;
  /** The LLM to use: undefined resolves the project's config (`llm`), null means none (local extractor). */
  llm?: Llm | null;
  /** The embedding model; defaults to the process-wide one. */
  model?: StaticModel;
  /** Passed to resolveLlm when `llm` is undefined (environment, retry policy); usage always goes to the store. */
  llmOptions?: Omit<ResolveOptions, "usage" | "projectRoot">;
  /** How the shared store (`storage: postgres`) is reached; tests pass a PGlite client. */
  shared?: SharedOptions;
}

export interface IndexResult {
  /** `busy`: another indexer holds the project's lock, nothing was done. */
  status: "indexed" | "busy";
  records: number;
  chunks: number;
  sessions: number;
  badLines: number;
  rebuilt: boolean;
  llm: string | null;
  llmFailures: number;
  /** Milliseconds spent in each phase of the run (PhaseTimer's names), for `index --timings` and benchmarks. */
  timings: Record<string, number>;
  /** Peak resident memory (MB) within each phase, where the system reports it (Linux); `index --timings`. */
  phasePeakMB?: Record<string, number>;
  /** The process's CPU milliseconds (every thread: the tokenizer's, the collector's) within each phase, user and system. */
  phaseCpuMs?: Record<string, { user: number; system: number }>;
  /** With a shared store: what was pushed and pulled, or the one line that says why not. */
  shared?: SyncResult;
}

/**
 * Wall time per named phase, summed over a run (a phase met once per batch adds up). Phases overlap
 * only where work runs off the main thread: `embed-wait` is the time the main thread waited for the
 * tokenizer's thread. With each phase's CPU time, user and system apart: on a loaded machine the wall
 * time is partly the neighbours', and system time (page reads, faults, writes) says where a phase
 * waits on the kernel.
 */
export class PhaseTimer {
  readonly ms: Record<string, number> = {};
  /** Peak resident memory (MB) reached within each phase, where the system reports it (Linux). */
  readonly peakMB: Record<string, number> = {};
  /** CPU milliseconds of the whole process within each phase. */
  readonly cpuMs: Record<string, { user: number; system: number }> = {};

  async time<T>(phase: string, work: () => T | Promise<T>): Promise<T> {
    const started = performance.now();
    const cpu = process.cpuUsage();
    resetResidentPeak();
    try {
      return await work();
    } finally {
      this.ms[phase] = (this.ms[phase] ?? 0) + performance.now() - started;
      const spent = process.cpuUsage(cpu);
      const sum = (this.cpuMs[phase] ??= { user: 0, system: 0 });
      sum.user += spent.user / 1000;
      sum.system += spent.system / 1000;
      const peak = residentPeakMB();
      if (peak !== undefined) this.peakMB[phase] = Math.max(this.peakMB[phase] ?? 0, peak);
    }
  }

  /** The phases in milliseconds, rounded. */
  rounded(): Record<string, number> {
    return Object.fromEntries(Object.entries(this.ms).map(([phase, ms]) => [phase, Math.round(ms)]));
  }

  /** The phases' CPU milliseconds, rounded. */
  roundedCpu(): Record<string, { user: number; system: number }> {
    return Object.fromEntries(
      Object.entries(this.cpuMs).map(([phase, { user, system }]) => [
        phase,
        { user: Math.round(user), system: Math.round(system) },
      ]),
    );
  }
}

/**
 * Linux keeps a process's peak resident set (VmHWM in /proc/self/status) and lets the process reset it
 * to the current one (`5` written to /proc/self/clear_refs), which gives each phase its own peak: the
 * whole run's peak alone does not say which phase holds the memory. Elsewhere both do nothing.
 */
function resetResidentPeak(): void {
  if (process.platform !== "linux") return;
  try {
    writeFileSync("/proc/self/clear_refs", "5");
  } catch {
    // Not permitted here: the phases then report the run's peak so far.
  }
}

function residentPeakMB(): number | undefined {
  if (process.platform !== "linux") return undefined;
  try {
    const kB = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    return kB === undefined ? undefined : Math.round(Number(kB) / 1024);
  } catch {
    return undefined;
  }
}

/** Hash of the bytes just before `offset`, the fingerprint of what was consumed. */
export function offsetFingerprint(file: string, offset: number): string {
  if (offset === 0) return "";
  const length = Math.min(OFFSET_CHECK_BYTES, offset);
  const buffer = Buffer.alloc(length);
  const fd = openSync(file, "r");
  try {
    readSync(fd, buffer, 0, length, offset - length);
  } finally {
    closeSync(fd);
  }
  return createHash("sha256").update(buffer).digest("hex").slice(0, 16);
}

function readFrom(file: string, offset: number, end: number): Buffer {
  const fd = openSync(file, "r");
  try {
    return readAt(fd, offset, end - offset);
  } finally {
    closeSync(fd);
  }
}

/**
 * SQLite's structural check reads every page: 0.68 s of a one-session run at 16× LoCoMo (a 127 MB store),
 * 0.13 s at 4× (43 MB). It runs on every index run while the store is under CHECK_EVERY_RUN_BYTES, and
 * once a day above. Damage a read or write meets in between is found then (the indexer, recall and status
 * all rebuild on it); the check finds what no query reaches, such as a damaged index b-tree.
 */
export const CHECK_EVERY_RUN_BYTES = 32 * 1024 * 1024;
export const INTEGRITY_CHECK_INTERVAL_MS = 24 * 60 * 60 * 1000;

/** Opens the store, rebuilding it from scratch when it is damaged. */
function openOrRebuild(projectRoot: string): { store: SqliteMemoryStore; rebuilt: boolean } {
  let store: SqliteMemoryStore | undefined;
  try {
    store = openStoreForWrite(projectRoot);
    const interval = statSync(store.path).size < CHECK_EVERY_RUN_BYTES ? 0 : INTEGRITY_CHECK_INTERVAL_MS;
    if (!store.integrityCheckDue(interval) || store.integrityOk()) return { store, rebuilt: false };
    throw new StoreCorruptError("integrity check failed");
  } catch (error) {
    store?.close();
    if (!isStoreDamage(error)) throw error;
    return { store: rebuildStore(projectRoot, error), rebuilt: true };
  }
}

/** Moves the damaged store aside (one line in errors.log) and opens an empty one to fill from chats.jsonl. */
function rebuildStore(projectRoot: string, damage: unknown): SqliteMemoryStore {
  logError(
    "index",
    `memory store damaged, rebuilding from chats.jsonl: ${(damage as Error).message}`,
    projectRoot,
  );
  discardStore(projectRoot);
  return openStoreForWrite(projectRoot);
}

async function defaultLlm(
  projectRoot: string,
  store: SqliteMemoryStore,
  options: IndexOptions["llmOptions"],
): Promise<Llm | null> {
  const { readProjectConfig, configPath } = await import("../project/config.ts");
  if (!existsSync(configPath(projectRoot))) return null;
  const { resolveLlm } = await import("../llm/resolve.ts");
  return resolveLlm(readProjectConfig(projectRoot), { ...options, usage: store, projectRoot });
}

/** Runs `work` over items with at most `limit` in flight. */
async function pool<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]);
    }
  });
  await Promise.all(runners);
  return results;
}

/** Splits chunks into batches of whole sessions where possible, BATCH_CHUNKS at most. */
function batches(chunks: Chunk[]): Chunk[][] {
  const bySession = new Map<string, Chunk[]>();
  for (const c of chunks) {
    let list = bySession.get(c.sessionId);
    if (!list) bySession.set(c.sessionId, (list = []));
    list.push(c);
  }
  const out: Chunk[][] = [];
  let current: Chunk[] = [];
  for (const list of bySession.values()) {
    for (let i = 0; i < list.length; i += BATCH_CHUNKS) {
      const part = list.slice(i, i + BATCH_CHUNKS);
      if (current.length + part.length > BATCH_CHUNKS && current.length) {
        out.push(current);
        current = [];
      }
      current.push(...part);
    }
  }
  if (current.length) out.push(current);
  return out;
}

/**
 * Indexes what is new in the project's chats.jsonl. Returns `busy` at once when another indexer runs.
 */
export async function indexProject(projectRoot: string, options: IndexOptions = {}): Promise<IndexResult> {
  const result: IndexResult = {
    status: "indexed",
    records: 0,
    chunks: 0,
    sessions: 0,
    badLines: 0,
    rebuilt: false,
    llm: null,
    llmFailures: 0,
    timings: {},
  };
  const lock = tryLock(indexLockPath(projectRoot), "index");
  if (!lock) return { ...result, status: "busy" };
  let store: SqliteMemoryStore | undefined;
  const timer = new PhaseTimer();
  try {
    // The structural check reads every page of the store: its cost follows the store's size.
    const opened = await timer.time("open-check", () => openOrRebuild(projectRoot));
    store = opened.store;
    result.rebuilt = opened.rebuilt;
    try {
      await runOn(store);
    } catch (error) {
      // Damage the open's check did not see, found when a read or write reached it: the same rebuild.
      if (!isStoreDamage(error) || result.rebuilt) throw error;
      store.close();
      store = undefined;
      store = rebuildStore(projectRoot, error);
      Object.assign(result, {
        records: 0,
        chunks: 0,
        sessions: 0,
        badLines: 0,
        rebuilt: true,
        llmFailures: 0,
      });
      await runOn(store);
    }
    // storage postgres: this run's chunks go to the shared store, everyone's come back into the mirror.
    const local = store;
    const [{ syncShared }, { forgetHere }] = await Promise.all([
      import("./shared.ts"),
      import("./forget.ts"),
    ]);
    result.shared = await timer.time("shared", () =>
      syncShared(projectRoot, local, async (id) => void (await forgetHere(projectRoot, id)), options.shared),
    );
    result.timings = timer.rounded();
    result.phasePeakMB = { ...timer.peakMB };
    result.phaseCpuMs = timer.roundedCpu();
    return result;
  } finally {
    store?.close();
    lock.release();
  }

  async function runOn(target: SqliteMemoryStore): Promise<void> {
    const run = new IndexRun(projectRoot, target, options, result, timer);
    await run.execute();
  }
}

class IndexRun {
  private model!: StaticModel;
  private llm: Llm | null = null;
  /** Token ids of phrase labels and predicates (see tokenIds). */
  private readonly tokens = new Map<string, number[]>();
  /**
   * The capped synonym graph: phrases this run registered, and the stored phrases from before the run
   * read from the store as new ones need them (their buckets, their neighbour lists). Let go once the
   * batches are written: it holds every phrase a run registered (~3 GB after a 100,000-record full
   * index), which would otherwise sit beneath the recall.bin build's own peak.
   */
  private synonyms?: SynonymGraph;
  /** Phrases this run registered with the synonym graph (new to the store when their batch began). */
  private readonly registered = new Set<string>();
  /**
   * A first run (nothing stored) leaves the synonym edges to its end: the rule applied to all its phrases
   * at once, band by band (SqliteMemoryStore.rebuildSynonyms), costs a fraction of the upkeep batch by
   * batch (10,000 synthetic records' 88k phrases: 4.4 s against 52 s CPU). Until then the store names no
   * synonym rule, so a run killed before the end has the next one recompute them.
   */
  private synonymsAtEnd = false;

  constructor(
    private readonly root: string,
    private readonly store: SqliteMemoryStore,
    private readonly options: IndexOptions,
    private readonly result: IndexResult,
    private readonly timer: PhaseTimer,
  ) {}

  private async loadModel(): Promise<StaticModel> {
    this.model ??= this.options.model ?? (await (await import("../embed/source.ts")).loadModel());
    return this.model;
  }

  /**
   * One run, phase by phase, each timed by `timer` (see IndexResult.timings): read what is new, load the
   * model and LLM, clean flagged records, index the chunks batch by batch, retry earlier LLM failures,
   * save the offset and summary.md, bring the recall snapshot up to date.
   */
  async execute(): Promise<void> {
    const progress = this.options.onProgress ?? (() => {});
    progress({ phase: "reading", done: 0, total: 0 });
    const timer = this.timer;
    const state = await this.store.state();
    const read = await timer.time("read", () => this.readNew(state));
    this.result.records = read.records.length;
    await timer.time("setup", () => this.setUp(read.records));
    const records = await timer.time("review", () => this.cleanFlagged(read));
    const chunks = chunkRecords(records);
    // Chunks left pending by EARLIER runs; this run's own failures wait for the next run.
    const pending = this.llm ? await this.store.pendingLlmChunks(MAX_LLM_RETRIES_PER_RUN) : [];
    await this.indexChunks(chunks, progress);
    if (pending.length) await timer.time("llm-retry", () => this.retryPendingLlm(pending, progress));
    this.synonyms = undefined;
    if (this.synonymsAtEnd)
      await timer.time("synonyms", () => this.store.rebuildSynonyms({ buckets: false }));
    // This run's phrases go into the phrase file and the heads file's log now, so the next run's upkeep
    // finds them current (and a first run's full index, not the next session, writes them whole).
    if (chunks.length) {
      await timer.time("phrase-file", () => this.store.refreshPhraseFile());
      await timer.time("heads-file", () => this.store.refreshHeadsFile());
    }
    await timer.time("save", async () => {
      await this.store.setState({
        offset: read.consumedTo,
        offsetCheck: read.exists ? offsetFingerprint(read.file, read.consumedTo) : "",
        reviewSwept: true,
        ...(chunks.length || !state.lastIndexed ? { lastIndexed: new Date().toISOString() } : {}),
      });
      const summary = summaryPath(this.root);
      if (chunks.length || this.result.rebuilt || !existsSync(summary))
        await refreshSummaryFile(summary, this.store);
    });
    await timer.time("recall-snapshot", async () => {
      // What this run's batches and synonym pass left (1.4-3 GB at 100,000 records) is collected before
      // recall.bin is extended or built, not left to pile up under it. Here, not in refreshSnapshotFile:
      // a recall pulling a shared mirror refreshes it too, in a server that a full collection would pause.
      if (chunks.length || this.result.rebuilt) Bun.gc(true);
      const { refreshSnapshotFile } = await import("./recall/snapshot-file.ts");
      const path = recallSnapshotPath(this.root);
      try {
        await refreshSnapshotFile(path, this.store, async () => (await this.loadModel()).id);
      } catch (error) {
        // The store is complete without it (recall then reads the store; the next run tries again): a full
        // disk, or Windows refusing to replace a file a running server has mapped, must not fail the run.
        if (isStoreDamage(error)) throw error;
        logError(
          "index: recall snapshot not refreshed, recall reads the store until the next run",
          error,
          this.root,
        );
      }
    });
    progress({ phase: "done", done: this.result.chunks, total: chunks.length });
  }

  /** The complete lines of chats.jsonl not consumed yet (all of it when it was rewritten under us). */
  private async readNew(state: IndexState) {
    const file = chatLogPath(this.root);
    if (!existsSync(file))
      return { file, exists: false, consumedTo: state.offset, records: [], staleFlagged: [] };
    const size = statSync(file).size;
    let offset = state.offset;
    // A file shorter than our offset, or different just before it, was rewritten (forget, or by hand):
    // read it all again; records already indexed are skipped by uuid. Also once for a store that has
    // not been swept for flagged lines an older version indexed without rewriting them.
    if (offset > size || offsetFingerprint(file, offset) !== state.offsetCheck || !state.reviewSwept)
      offset = 0;
    const bytes = readFrom(file, offset, size);
    const end = bytes.lastIndexOf(10) + 1; // a last line without its newline is still being written
    const { records, staleFlagged } = await this.newRecords(bytes.subarray(0, end).toString("utf8"));
    return { file, exists: true, consumedTo: offset + end, records, staleFlagged };
  }

  /** The model, the LLM and the stored phrases, when there is anything to index. */
  private async setUp(records: ChatRecord[]): Promise<void> {
    // A store whose synonym edges follow another rule (made before the cap, or under another k).
    if (this.store.synonymRule() !== SYNONYM_RULE) this.store.rebuildSynonyms();
    // A store made before the row counters: counted once, so status need not scan it again.
    this.store.fillRowCounts();
    if (records.length === 0 && (await this.store.pendingLlmChunks(1)).length === 0) return;
    await this.loadModel();
    this.llm =
      this.options.llm !== undefined
        ? this.options.llm
        : await defaultLlm(this.root, this.store, this.options.llmOptions).catch((error) => {
            logError("index: llm", error, this.root);
            return null;
          });
    this.result.llm = this.llm ? `${this.llm.provider}/${this.llm.model}` : null;
    // Phrases from before this run are read from the store; those it adds are held by the graph itself.
    const stored = this.store.maxEntityId();
    if (stored > 0) this.synonyms = new SynonymGraph(this.store.synonymSource(stored, { cacheFiles: true }));
    else {
      this.synonymsAtEnd = true;
      this.store.forgetSynonymRule();
    }
  }

  /**
   * Flagged records cleaned before anything else sees their text (the store, summaries, OpenIE), and
   * their lines rewritten in chats.jsonl; `read.consumedTo` follows the rewrite.
   */
  private async cleanFlagged(read: Awaited<ReturnType<IndexRun["readNew"]>>): Promise<ChatRecord[]> {
    if (!read.records.some((r) => r.review) && !read.staleFlagged.length) return read.records;
    const flagged = new Set(read.records.filter((r) => r.review).map((r) => r.uuid));
    const onLlmError = (error: unknown) =>
      logError("index: secret review by the LLM failed, strict entropy pass used", error, this.root);
    const records = await cleanFlaggedRecords(read.records, this.llm, onLlmError);
    const stale = await cleanFlaggedRecords(read.staleFlagged, this.llm, onLlmError);
    // Before anything is stored: a run that dies after this re-reads the lines, now clean, from its saved
    // offset; the other order could index a record and never rewrite its line (indexed uuids are skipped).
    const cleaned = new Map(
      [...records.filter((r) => flagged.has(r.uuid)), ...stale].map((r) => [r.uuid, r.text]),
    );
    read.consumedTo += rewriteCleanedLines(this.root, cleaned, read.consumedTo);
    return records;
  }

  /**
   * Chunks in batches, each one transaction. The tokenizer runs on a native thread: the next batch's
   * chunk texts are embedded while this batch's graph, synonyms and SQLite writes keep the main thread
   * busy. Batch k is written after batch k+1 is prepared (the synonym graph holds batch k's phrases
   * until then); batches are still written in order.
   */
  private async indexChunks(chunks: Chunk[], progress: (p: IndexProgress) => void): Promise<void> {
    const timer = this.timer;
    const sessions = new Set<string>();
    let done = 0;
    progress({ phase: "indexing", done, total: chunks.length });
    const list = batches(chunks);
    const embed = (i: number) => {
      const vectors = i < list.length ? this.model.embedBatch(list[i].map((c) => c.text)) : undefined;
      vectors?.catch(() => {}); // awaited by its own batch; a run that stops first must not crash on it
      return vectors;
    };
    const write = async (prepared: Awaited<ReturnType<IndexRun["prepareBatch"]>>) => {
      await timer.time("write", () => this.store.writeBatch(prepared.write));
      for (const c of prepared.batch) sessions.add(c.sessionId);
      done += prepared.batch.length;
      this.result.chunks = done;
      progress({ phase: "indexing", done, total: chunks.length });
    };
    let next = embed(0);
    let unwritten: Awaited<ReturnType<IndexRun["prepareBatch"]>> | undefined;
    for (const [i, batch] of list.entries()) {
      const vectors = await timer.time("embed-wait", () => next!);
      next = embed(i + 1);
      const prepared = await this.prepareBatch(batch, vectors);
      if (unwritten) await write(unwritten);
      unwritten = prepared;
    }
    if (unwritten) await write(unwritten);
    this.result.sessions = sessions.size;
  }

  /**
   * Parses lines, dropping bad ones (logged), forgotten sessions and records already indexed; flagged
   * records already indexed are returned apart (their lines were left flagged by an older version).
   */
  private async newRecords(text: string): Promise<{ records: ChatRecord[]; staleFlagged: ChatRecord[] }> {
    const records: ChatRecord[] = [];
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      const record = parseRecord(line);
      if (record) records.push(record);
      else this.result.badLines++;
    }
    if (this.result.badLines)
      logError("index", `${this.result.badLines} unreadable line(s) in chats.jsonl skipped`, this.root);
    const forgotten = await this.store.forgottenSessions();
    const fresh = records.filter((r) => !forgotten.has(r.session_id));
    const indexed = await this.store.indexedRecords(fresh.map((r) => r.uuid));
    return {
      records: fresh.filter((r) => !indexed.has(r.uuid)),
      staleFlagged: fresh.filter((r) => r.review && indexed.has(r.uuid)),
    };
  }

  /** The chunk's graph: cached OpenIE, else live OpenIE, else the local extractor. */
  private async graphOf(chunk: {
    hash: string;
    text: string;
  }): Promise<{ graph: ChunkGraph; source: GraphSource }> {
    const { cacheKey } = await import("../llm/cache.ts");
    const { parseOpenIEOutput, extractOpenIE } = await import("../llm/openie.ts");
    const cached = this.store.get(cacheKey("openie", chunk.hash));
    if (cached) {
      try {
        // Stored results (a benchmark's, or an earlier run's) pass the same validation as live output.
        return { graph: graphFromOpenIE(parseOpenIEOutput(cached)), source: "llm" };
      } catch (error) {
        logError("index: cached OpenIE unreadable", error, this.root);
      }
    }
    if (this.llm) {
      try {
        const result = await extractOpenIE(this.llm, chunk.text, {
          cache: { cache: this.store, chunkHash: chunk.hash },
        });
        return { graph: graphFromOpenIE(result), source: "llm" };
      } catch (error) {
        this.result.llmFailures++;
        logError("index: OpenIE failed, local graph used, retried next run", error, this.root);
        return { graph: extractGraph(chunk.text), source: "llm-pending" };
      }
    }
    return { graph: extractGraph(chunk.text), source: "local" };
  }

  /**
   * Token ids of short texts (phrase labels, predicates), tokenised once per run: labels and predicates
   * repeat across chunks and facts, and the tokenizer call is most of an embedding's cost.
   */
  private async tokenIds(texts: Iterable<string>): Promise<void> {
    const missing = [...new Set(texts)].filter((t) => !this.tokens.has(t));
    if (!missing.length) return;
    const ids = await this.model.tokenize(missing);
    missing.forEach((t, i) => {
      this.tokens.set(t, ids[i]);
    });
  }

  /**
   * A fact's vector is its text's (`subject predicate object`): the tokenizer splits at spaces, so the
   * text's token ids are the three parts' ids in a row, pooled here without tokenising every fact again.
   */
  private factIds(labels: Map<string, string>, f: FactMention): number[] {
    const ids = this.tokens
      .get(labels.get(f.subject) ?? f.subject)!
      .concat(this.tokens.get(f.predicate)!, this.tokens.get(labels.get(f.object) ?? f.object)!);
    return ids.length > MAX_TOKENS ? ids.slice(0, MAX_TOKENS) : ids;
  }

  /** Vectors of a set of graphs' phrases and facts, and synonym edges for phrases new to the store. */
  private async graphVectors(graphs: ChunkGraph[]) {
    const labels = new Map<string, string>();
    const facts = new Map<string, FactMention>();
    for (const g of graphs) {
      for (const e of g.entities) if (!labels.has(e.phrase)) labels.set(e.phrase, e.label);
    }
    for (const g of graphs) {
      for (const f of g.facts) facts.set(factKey(f.subject, f.predicate, f.object), f);
    }
    const phrases = [...labels.keys()];
    await this.tokenIds([
      ...labels.values(),
      ...[...facts.values()].flatMap((f) => [
        labels.get(f.subject) ?? f.subject,
        f.predicate,
        labels.get(f.object) ?? f.object,
      ]),
    ]);
    const phraseVectors = this.model.embedIds(phrases.map((p) => this.tokens.get(labels.get(p)!)!));
    const dim = this.model.dim;
    const entityVectors = new Map<string, Float32Array>();
    phrases.forEach((p, i) => {
      entityVectors.set(p, phraseVectors.subarray(i * dim, (i + 1) * dim));
    });
    const factKeys = [...facts.keys()];
    const factVectors = this.model.embedIds([...facts.values()].map((f) => this.factIds(labels, f)));
    const factVectorMap = new Map<string, Float32Array>();
    factKeys.forEach((k, i) => {
      factVectorMap.set(k, factVectors.subarray(i * dim, (i + 1) * dim));
    });
    const stored = this.store.knownPhrases(phrases.filter((p) => !this.registered.has(p)));
    const fresh = phrases.filter((p) => !this.registered.has(p) && !stored.has(p));
    const freshVectors = new Float32Array(fresh.length * dim);
    fresh.forEach((p, i) => {
      freshVectors.set(entityVectors.get(p)!, i * dim);
    });
    return { entityVectors, factVectors: factVectorMap, fresh, freshVectors };
  }

  /**
   * Synonym edge changes of phrases new to the store, which count as known from here on (so call this
   * in batch order, and write the batches in the same order).
   */
  private synonymsOf(fresh: string[], freshVectors: Float32Array): SynonymChanges {
    for (const p of fresh) this.registered.add(p);
    if (this.synonymsAtEnd) return { add: [], drop: [] };
    if (!this.synonyms) throw new Error("index: the synonym graph is used after the run's batches");
    return this.synonyms.add(fresh, freshVectors);
  }

  /** Everything a batch writes. */
  private async prepareBatch(batch: Chunk[], vectors: Float32Array) {
    const dim = this.model.dim;
    const timer = this.timer;
    const graphs = await timer.time("graph", () =>
      pool(batch, this.llm ? LLM_CONCURRENCY : 1, (c) => this.graphOf(c)),
    );
    const { entityVectors, factVectors, fresh, freshVectors } = await timer.time("graph-vectors", () =>
      this.graphVectors(graphs.map((g) => g.graph)),
    );
    const chunks: NewChunk[] = batch.map((c, i) => ({
      ...c,
      vector: vectors.subarray(i * dim, (i + 1) * dim),
      graph: graphs[i].graph,
      graphSource: graphs[i].source,
    }));
    const synonyms = await timer.time("synonyms", () => this.synonymsOf(fresh, freshVectors));
    return {
      batch,
      write: {
        model: this.model.id,
        chunks,
        entityVectors,
        factVectors,
        summaries: await timer.time("summaries", () => this.summarise(batch, graphs)),
        synonyms: synonyms.add,
        synonymsDropped: synonyms.drop,
      },
    };
  }

  /** Names the extractive summary's Files: may list because they exist in the project (`Makefile`). */
  private readonly existing = new Map<string, boolean>();
  private readonly fileExists = (name: string): boolean => {
    if (name.length > 200 || !/^[\w@.+-]+(?:\/[\w@.+-]+)*$/.test(name) || name.includes("..")) return false;
    let found = this.existing.get(name);
    if (found === undefined) this.existing.set(name, (found = existsSync(join(this.root, name))));
    return found;
  };

  /**
   * One summary entry per session in the batch: the LLM's when it answers, else extractive. `graphs`
   * (the batch's, in chunk order) are the extractive summary's files and identifiers when the local
   * extractor made them, so no chunk is extracted twice.
   */
  private async summarise(
    batch: Chunk[],
    graphs: { graph: ChunkGraph; source: GraphSource }[],
  ): Promise<SummaryEntry[]> {
    const bySession = new Map<string, Chunk[]>();
    const entitiesOf = new Map<Chunk, ChunkGraph["entities"]>();
    batch.forEach((c, i) => {
      let list = bySession.get(c.sessionId);
      if (!list) bySession.set(c.sessionId, (list = []));
      list.push(c);
      if (graphs[i].source !== "llm") entitiesOf.set(c, graphs[i].graph.entities);
    });
    const entries: SummaryEntry[] = [];
    for (const [sessionId, chunks] of bySession) {
      let last = chunks[0].ts;
      for (const c of chunks) if (c.ts > last) last = c.ts;
      let text: string | undefined;
      let source = "extractive";
      if (this.llm) {
        try {
          const { summarizeChunk } = await import("../llm/summarize.ts");
          text = clipEntry(await summarizeChunk(this.llm, chunks.map((c) => c.text).join("\n\n")));
          source = "llm";
        } catch (error) {
          logError("index: LLM summary failed, extractive summary used", error, this.root);
        }
      }
      text ??= extractiveSummary(chunks, (c) => entitiesOf.get(c), this.fileExists);
      entries.push({ sessionId, date: entryDate(chunks[0].ts || last), ts: last, text, source });
    }
    return entries;
  }

  /** Chunks whose OpenIE failed on an earlier run get their LLM graph now; failures stay pending. */
  private async retryPendingLlm(
    pending: { id: number; hash: string; text: string }[],
    progress: (p: IndexProgress) => void,
  ): Promise<void> {
    let done = 0;
    for (const chunk of pending) {
      const { graph, source } = await this.graphOf(chunk);
      if (source === "llm") {
        const vectors = await this.graphVectors([graph]);
        // Worked out against the phrases before the swap: a phrase the old graph alone held is still
        // counted among the new phrases' neighbours (its edges go with it; the rest follow the rule).
        const synonyms = this.synonymsOf(vectors.fresh, vectors.freshVectors);
        await this.store.replaceChunkGraph(chunk.id, graph, source, {
          model: this.model.id,
          entityVectors: vectors.entityVectors,
          factVectors: vectors.factVectors,
          synonyms: synonyms.add,
          synonymsDropped: synonyms.drop,
        });
      }
      progress({ phase: "llm-retry", done: ++done, total: pending.length });
    }
  }
}
