import { Database, type Statement } from "bun:sqlite";
import { statSync } from "node:fs";
import { headsFilePath, phraseFilePath } from "../home/paths.ts";
import type { LlmUsage } from "../llm/usage.ts";
import { Growable } from "./growable.ts";
import {
  BucketHeads,
  headsBaseOf,
  type KeyedPhrase,
  phraseColumns,
  removeHeadsFileOf,
} from "./heads-file.ts";
import { PhraseFile, type PhraseRow, removePhraseFileOf } from "./phrase-file.ts";
import type { ChunkRow } from "./remote.ts";
import {
  BUCKET_LIMIT,
  bandKeys,
  type HeadRows,
  LSH_BANDS,
  LSH_BITS,
  phraseRank,
  SYNONYM_NEIGHBOURS,
  SYNONYM_RULE,
  type SynonymChanges,
  SynonymGraph,
  type SynonymSource,
  synonymEdgesOf,
} from "./synonyms.ts";
import {
  type ChunkForgetResult,
  type ChunkGraph,
  EDGE_KIND,
  type ForgetResult,
  type GraphSource,
  type IndexBatch,
  type IndexState,
  type MemoryStore,
  type SnapshotDelta,
  type SnapshotMarks,
  type StoreSnapshot,
  type StoreStatus,
  type SummaryEntry,
  type SummaryRewrite,
  type Turn,
} from "./types.ts";

/** What reads a store's snapshot rows slice by slice (see SqliteMemoryStore.snapshotRows). */
export interface SnapshotRowVisitor {
  /** Row counts, before any rows. */
  counts(n: { chunks: number; facts: number; edges: number }): void;
  /** A slice of chunks and their vectors (row i is chunk i's, `dim` wide). */
  chunks(rows: SnapshotDelta["chunks"], vectors: Float32Array, dim: number): void;
  /** Every phrase row id, ascending (after the chunks). */
  entities(ids: Int32Array): void;
  facts(rows: SnapshotDelta["facts"], vectors: Float32Array, dim: number): void;
  /** Every edge (row ids, as SnapshotDelta's), last. */
  edges(edges: SnapshotDelta["edges"]): void;
}

/** The writer's page cache ceiling (KiB): part of the indexer's RSS ceiling (docs/memory.md). */
const WRITER_CACHE_KIB = 256 * 1024;
/**
 * How much of the store file the synonym source maps while it reads (SQLite clamps it to its build's
 * limit, ~2 GB, and reads the rest as before). A session at 100,000 records reads ~120k synonym edges
 * and ~1 M bucket rows from random pages: through the page cache each page is a read() system call and
 * a copy into the writer's cache; mapped, a memory access. Mapped only while a read runs: the pages it
 * touched then count in RSS for that long. (Left mapped for the whole run, the write and snapshot
 * phases' pages did too: peak RSS 1.66 → 3.17 GB.)
 */
const MAPPED_READ_BYTES = 2 ** 32;
/** Phrase rows (with their vectors) a synonym heads query reads at once, by id. */
const PHRASE_ROWS_A_QUERY = 4096;
/** phrase_keys rows a query when all of them are read (879k at 100,000 records: not all at once). */
const KEYED_ROWS_A_QUERY = 65_536;

/** Bumped when the schema changes; an older file is rebuilt from chats.jsonl (the source of truth). */
export const SCHEMA_VERSION = 1;

/** An edge whose weight falls to this or below after `forget` no longer exists. */
export const EDGE_EPSILON = 1e-9;

/** The same counts per calendar month (UTC, `YYYY-MM`), for status's month's spend. Added to older stores on open. */
const LLM_USAGE_MONTHS = `CREATE TABLE IF NOT EXISTS llm_usage_months(
  month TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, calls INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, PRIMARY KEY(month, provider, model)) WITHOUT ROWID;`;

/**
 * The capped synonym graph's side tables, added within schema 1 (a store made before them gets them
 * empty, and its synonym edges recomputed: meta `synonym_rule`). `phrase_keys`: each phrase's rank
 * (synonyms.ts phraseRank) and its LSH_BANDS bucket keys (int32 in the machine's order), a row per
 * phrase in row-id order, so a session appends its phrases' rows; a bucket's heads are looked up in
 * heads-file.ts's arrays built from it. It replaced `phrase_buckets` (a row per phrase and bucket,
 * ordered by key: a new session's phrases landed on ~6,300 of its pages at 100,000 synthetic records,
 * two thirds of all it wrote), whose rows fill it once (ensurePhraseKeys), and `phrase_bands` before
 * that. `synonym_changes`: earlier synonym edges whose weight a later batch changed (a neighbour fell
 * out of both lists: weight 0), with the highest chunk id at that batch, which is how an extended
 * recall snapshot learns of them.
 */
const SYNONYM_TABLES = `CREATE TABLE IF NOT EXISTS phrase_keys(entity INTEGER PRIMARY KEY, rank INTEGER NOT NULL, keys BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS synonym_changes(edge_id INTEGER PRIMARY KEY, chunk INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS synonym_changes_chunk ON synonym_changes(chunk);`;

/**
 * The records of chunks deleted one by one (`forgetChunk`), added within schema 1 (a store made before
 * it gets it empty): `indexedRecords` counts them, so a rescan or a late capture never indexes them again.
 */
const FORGOTTEN_RECORDS = `CREATE TABLE IF NOT EXISTS forgotten_records(uuid TEXT PRIMARY KEY, at TEXT NOT NULL) WITHOUT ROWID;`;

/**
 * Meta `summaries_changed` counts every update or delete of a summary, whoever makes it (forget, a
 * corrected line, an LLM summary replacing the extractive one); added summaries leave it. While it
 * stands where summary.md's writer last saw it, the file holds every older summary as it is, and the
 * indexer appends the new ones (memory/summary.ts refreshSummaryFile). Within schema 1: added on open.
 */
const SUMMARY_CHANGE_COUNT = (event: "UPDATE" | "DELETE") =>
  `CREATE TRIGGER IF NOT EXISTS summaries_${event.toLowerCase()}_counted AFTER ${event} ON summaries BEGIN INSERT INTO meta(key, value) VALUES ('summaries_changed', '1') ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1; END;`;
const SUMMARY_TRIGGERS = `${SUMMARY_CHANGE_COUNT("UPDATE")}\n${SUMMARY_CHANGE_COUNT("DELETE")}`;

/**
 * Live row counts for status (`row_counts`, added within schema 1), kept by triggers in the same
 * transaction as the rows, so status reads a few rows instead of counting 879k phrases, 2.3 M facts
 * and 9 M edges (1.3 s warm, 11 s with a cold page cache, at 100,000 synthetic records). An edge counts
 * while its weight is above 0 (a dropped synonym edge keeps its row at weight 0), a chunk while its
 * LLM graph is pending. A store made before the table gets it empty, its triggers counting nothing
 * until the indexer fills it once from a scan (`fillRowCounts`); till then status counts by scan.
 */
const COUNTED = [
  "entities",
  "facts",
  ...Object.values(EDGE_KIND).map((kind) => `edges:${kind}`),
  "chunks:llm-pending",
];
const ROW_COUNTS = `CREATE TABLE IF NOT EXISTS row_counts(name TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
${["entities", "facts"]
  .map(
    (table) =>
      `CREATE TRIGGER IF NOT EXISTS ${table}_counted_in AFTER INSERT ON ${table} BEGIN UPDATE row_counts SET n = n + 1 WHERE name = '${table}'; END;
CREATE TRIGGER IF NOT EXISTS ${table}_counted_out AFTER DELETE ON ${table} BEGIN UPDATE row_counts SET n = n - 1 WHERE name = '${table}'; END;`,
  )
  .join("\n")}
CREATE TRIGGER IF NOT EXISTS edges_counted_in AFTER INSERT ON edges WHEN NEW.weight > 0 BEGIN UPDATE row_counts SET n = n + 1 WHERE name = 'edges:' || NEW.kind; END;
CREATE TRIGGER IF NOT EXISTS edges_counted_out AFTER DELETE ON edges WHEN OLD.weight > 0 BEGIN UPDATE row_counts SET n = n - 1 WHERE name = 'edges:' || OLD.kind; END;
CREATE TRIGGER IF NOT EXISTS edges_counted_weight AFTER UPDATE OF weight ON edges WHEN (OLD.weight > 0) != (NEW.weight > 0) BEGIN UPDATE row_counts SET n = n + (CASE WHEN NEW.weight > 0 THEN 1 ELSE -1 END) WHERE name = 'edges:' || NEW.kind; END;
CREATE TRIGGER IF NOT EXISTS chunks_counted_in AFTER INSERT ON chunks WHEN NEW.graph_source = 'llm-pending' BEGIN UPDATE row_counts SET n = n + 1 WHERE name = 'chunks:llm-pending'; END;
CREATE TRIGGER IF NOT EXISTS chunks_counted_out AFTER DELETE ON chunks WHEN OLD.graph_source = 'llm-pending' BEGIN UPDATE row_counts SET n = n - 1 WHERE name = 'chunks:llm-pending'; END;
CREATE TRIGGER IF NOT EXISTS chunks_counted_source AFTER UPDATE OF graph_source ON chunks WHEN (OLD.graph_source = 'llm-pending') != (NEW.graph_source = 'llm-pending') BEGIN UPDATE row_counts SET n = n + (CASE WHEN NEW.graph_source = 'llm-pending' THEN 1 ELSE -1 END) WHERE name = 'chunks:llm-pending'; END;`;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chunks(
  id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, ts TEXT NOT NULL,
  text TEXT NOT NULL, graph_source TEXT NOT NULL, model TEXT NOT NULL, vector BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_session ON chunks(session_id);
CREATE TABLE IF NOT EXISTS turns(
  uuid TEXT PRIMARY KEY, chunk_id INTEGER NOT NULL, ord INTEGER NOT NULL, role TEXT NOT NULL, ts TEXT NOT NULL,
  start INTEGER NOT NULL, end INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS turns_chunk ON turns(chunk_id);
CREATE TABLE IF NOT EXISTS entities(id INTEGER PRIMARY KEY, phrase TEXT NOT NULL UNIQUE, label TEXT NOT NULL, model TEXT NOT NULL, vector BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS facts(
  id INTEGER PRIMARY KEY, subject INTEGER NOT NULL, predicate TEXT NOT NULL, object INTEGER NOT NULL,
  model TEXT NOT NULL, vector BLOB NOT NULL, UNIQUE(subject, predicate, object));
CREATE TABLE IF NOT EXISTS fact_sources(fact_id INTEGER NOT NULL, chunk_id INTEGER NOT NULL, PRIMARY KEY(fact_id, chunk_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fact_sources_chunk ON fact_sources(chunk_id);
CREATE TABLE IF NOT EXISTS edges(id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, a INTEGER NOT NULL, b INTEGER NOT NULL, weight REAL NOT NULL, UNIQUE(kind, a, b));
CREATE INDEX IF NOT EXISTS edges_b ON edges(b);
CREATE TABLE IF NOT EXISTS edge_sources(edge_id INTEGER NOT NULL, chunk_id INTEGER NOT NULL, amount REAL NOT NULL, PRIMARY KEY(edge_id, chunk_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edge_sources_chunk ON edge_sources(chunk_id);
CREATE TABLE IF NOT EXISTS llm_cache(key TEXT PRIMARY KEY, chunk_hash TEXT NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS llm_cache_chunk ON llm_cache(chunk_hash);
CREATE TABLE IF NOT EXISTS summaries(id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, date TEXT NOT NULL, ts TEXT NOT NULL, text TEXT NOT NULL, source TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS summaries_session ON summaries(session_id);
CREATE TABLE IF NOT EXISTS forgotten(session_id TEXT PRIMARY KEY, at TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS llm_usage(
  provider TEXT NOT NULL, model TEXT NOT NULL, calls INTEGER NOT NULL, input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL, PRIMARY KEY(provider, model)) WITHOUT ROWID;
${LLM_USAGE_MONTHS}
${SYNONYM_TABLES}
${FORGOTTEN_RECORDS}`;

/** The store file is not a usable memory store (damaged, foreign, or an older schema). */
export class StoreCorruptError extends Error {}

/**
 * Whether an error says the store is damaged: our verdict at open, or SQLite's at any later read or
 * write (a damaged page is often found only when a query reaches it).
 */
export function isStoreDamage(error: unknown): boolean {
  return error instanceof StoreCorruptError || isCorruption(error);
}

/** SQLite's own verdicts that a file is damaged or not a database (not a busy or permission error). */
export function isCorruption(error: unknown): boolean {
  const code = String((error as { code?: unknown })?.code ?? "");
  return (
    /SQLITE_(CORRUPT|NOTADB)/.test(code) ||
    /malformed|not a database|file is not a database/i.test(String((error as Error)?.message))
  );
}

/** What SQLite's `PRAGMA quick_check` finds wrong with a database; none when it answers `ok`. */
export function quickCheckProblems(db: Database): string[] {
  const rows = db.query("PRAGMA quick_check").all() as { quick_check: string }[];
  return rows.length === 1 && rows[0].quick_check === "ok" ? [] : rows.map((r) => r.quick_check);
}

/** A phrase's bucket keys as phrase_keys holds them. */
function keysBlob(keys: ArrayLike<number>): Uint8Array {
  return new Uint8Array(Int32Array.from(keys).buffer);
}

/**
 * A phrase_keys BLOB's keys, read a byte at a time (little-endian, as keysBlob wrote them on every
 * target; the bytes need not be aligned for an Int32Array view). PERF: a view and a copy a row cost
 * ~0.4 s of the 879k rows a full read takes at 100,000 records, the bytes ~0.05 s.
 */
function keysOfBlob(blob: Uint8Array): Int32Array {
  const keys = new Int32Array(LSH_BANDS);
  for (let b = 0, at = 0; b < LSH_BANDS; b++, at += 4)
    keys[b] = blob[at] | (blob[at + 1] << 8) | (blob[at + 2] << 16) | (blob[at + 3] << 24);
  return keys;
}

/** phrase_keys rows as KeyedPhrase. */
function* keyedRows(rows: Iterable<[number, number, Uint8Array]>): Iterable<KeyedPhrase> {
  for (const [id, rank, blob] of rows) yield { id, rank, keys: keysOfBlob(blob) };
}

function toBlob(vector: Float32Array): Uint8Array {
  return new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
}

/**
 * Copies a BLOB into `target` at `row`, byte for byte (SQLite's buffers need not be 4-byte aligned). A
 * BLOB holds float32 values as toBlob wrote them, in the writer's byte order: little-endian on every
 * target. PERF: one copy a row; a DataView read per value cost ~2 µs a 64-dimension row.
 */
function readVector(blob: Uint8Array, target: Float32Array, row: number, dim: number): void {
  const bytes = Math.min(dim, blob.byteLength >> 2) * 4;
  new Uint8Array(target.buffer, target.byteOffset + row * dim * 4, bytes).set(blob.subarray(0, bytes));
}

/** Rows' vector BLOBs in one array, each as wide as the first row's (`dim` when there are no rows). */
export function readVectors(
  rows: readonly { vector: Uint8Array }[],
  dim = 0,
): { dim: number; vectors: Float32Array } {
  const width = rows.length ? rows[0].vector.byteLength >> 2 : dim;
  const vectors = new Float32Array(rows.length * width);
  rows.forEach((r, i) => {
    readVector(r.vector, vectors, i, width);
  });
  return { dim: width, vectors };
}

/** Edge weight changes of one batch, summed per edge (keyed `kind:a:b`), with each chunk's share (for forget). */
export type EdgeDeltas = Map<
  string,
  { kind: number; a: number; b: number; amount: number; sources: Map<number, number> }
>;

/** Records that `chunkId` adds `amount` to an edge; the store writes the sums. */
export function addEdge(
  deltas: EdgeDeltas,
  kind: number,
  a: number,
  b: number,
  amount: number,
  chunkId: number,
): void {
  const key = `${kind}:${a}:${b}`;
  let delta = deltas.get(key);
  if (!delta) deltas.set(key, (delta = { kind, a, b, amount: 0, sources: new Map() }));
  delta.amount += amount;
  // A context edge has one source, its own passage (`a`): forget finds it by that, no source row needed.
  if (kind !== EDGE_KIND.context) delta.sources.set(chunkId, (delta.sources.get(chunkId) ?? 0) + amount);
}

/** Undirected edges are stored once, smaller id first, so the same pair never appears twice. */
export function ordered(a: number, b: number): [number, number] {
  return a < b ? [a, b] : [b, a];
}

/** A synonym graph's changes in a batch's shape. */
function changesOf(changes: SynonymChanges): Pick<IndexBatch, "synonyms" | "synonymsDropped"> {
  return { synonyms: changes.add, synonymsDropped: changes.drop };
}

export function factKey(subject: string, predicate: string, object: string): string {
  return `${subject}\u0001${predicate}\u0001${object}`;
}

/** A bucket's heads: row ids and ranks, in rank order. */
type BucketRows = { ids: number[]; ranks: number[] };

/** The heads of each of `keys` (BUCKET_LIMIT and the ties of the last). */
function headsAtKeys(heads: BucketHeads, keys: Iterable<number>): Map<number, BucketRows> {
  const out = new Map<number, BucketRows>();
  for (const key of keys) {
    const rows: BucketRows = { ids: [], ranks: [] };
    heads.headsOf(key, BUCKET_LIMIT, rows.ids, rows.ranks);
    out.set(key, rows);
  }
  return out;
}

/**
 * Removes the indexer's cache files beside the store at `storeFile` (the phrase and heads files): any
 * deletion of phrases, or a store discarded, leaves them naming rows that are gone.
 */
export function removeCacheFilesOf(storeFile: string): void {
  removePhraseFileOf(storeFile);
  removeHeadsFileOf(storeFile);
}

/**
 * One SQLite file per project, WAL mode (the MCP server reads while the indexer writes).
 * Opening checks the schema version; `StoreCorruptError` tells the caller to rebuild.
 */
export class SqliteMemoryStore implements MemoryStore {
  readonly backend = "sqlite";
  private readonly db: Database;
  private readonly statements = new Map<string, Statement>();

  constructor(
    readonly path: string,
    options: { readonly?: boolean } = {},
  ) {
    let db: Database | undefined;
    // SQLite only says "unable to open database file", which is also what a permission problem says.
    // A reader reports it; a writer (the indexer) treats it as damage: moved aside and rebuilt.
    if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
      const message = `${path} is a directory, not a memory store`;
      throw options.readonly ? new Error(message) : new StoreCorruptError(message);
    }
    try {
      // A reader opens read-write without creating: a WAL reader may need to create the -shm file.
      db = new Database(
        path,
        options.readonly ? { readwrite: true, create: false } : { create: true, readwrite: true },
      );
      this.db = db;
      db.run("PRAGMA busy_timeout = 5000");
      if (!options.readonly) {
        db.run("PRAGMA journal_mode = WAL");
        // NORMAL is durable across process crashes in WAL mode (only an OS crash can drop the last commit).
        db.run("PRAGMA synchronous = NORMAL");
        // SQLite's own page cache (2 MB by default) in front of the OS's: a large store's indexes are
        // read at random by every batch (unique keys, synonym buckets and edges), and each miss is a
        // read syscall. Pages are allocated as used, so a small store never holds this much.
        db.run(`PRAGMA cache_size = -${WRITER_CACHE_KIB}`);
      }
      const version = this.readSchemaVersion();
      if (version === undefined) {
        if (options.readonly) throw new StoreCorruptError(`${path}: not a triforge memory store`);
        db.transaction(() => {
          db?.run(SCHEMA);
          db?.run("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?)", [String(SCHEMA_VERSION)]);
          db?.run("INSERT OR REPLACE INTO meta(key, value) VALUES ('synonym_rule', ?)", [SYNONYM_RULE]);
        })();
      } else if (version !== SCHEMA_VERSION) {
        throw new StoreCorruptError(`${path}: schema version ${version}, expected ${SCHEMA_VERSION}`);
      }
      // Names this file's rows: a store rebuilt in its place numbers them anew (see snapshotDelta).
      if (!options.readonly) {
        db.run("INSERT OR IGNORE INTO meta(key, value) VALUES ('store_id', ?)", [crypto.randomUUID()]);
        // A table added within schema 1: a store made before it gets it here, empty.
        db.run(LLM_USAGE_MONTHS);
        db.run(SYNONYM_TABLES);
        db.run(FORGOTTEN_RECORDS);
        db.run(SUMMARY_TRIGGERS);
        db.run(ROW_COUNTS);
        // A new store's counts are known (none): filled at once, not by the indexer's scan.
        if (version === undefined) this.fillRowCounts();
      }
    } catch (error) {
      try {
        db?.close();
      } catch {
        // Opening failed half-way; there may be nothing to close.
      }
      if (error instanceof StoreCorruptError || !isCorruption(error)) throw error;
      throw new StoreCorruptError(`${path}: ${(error as Error).message}`);
    }
  }

  private readSchemaVersion(): number | undefined {
    const hasMeta = this.db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get();
    if (!hasMeta) {
      const tables = this.db.query("SELECT count(*) AS n FROM sqlite_master").get() as { n: number };
      if (tables.n > 0) throw new StoreCorruptError(`${this.path}: not a triforge memory store`);
      return undefined;
    }
    const row = this.db.query("SELECT value FROM meta WHERE key = 'schema'").get() as {
      value: string;
    } | null;
    return row ? Number(row.value) : undefined;
  }

  /**
   * SQLite's own structural check; false means rebuild. A damaged page can make the check itself fail
   * (SQLITE_CORRUPT) instead of listing problems: that is the same verdict.
   */
  integrityOk(): boolean {
    try {
      const ok = quickCheckProblems(this.db).length === 0;
      if (ok) this.setMeta("checked_at", new Date().toISOString());
      return ok;
    } catch (error) {
      if (isCorruption(error)) return false;
      throw error;
    }
  }

  /** Whether integrityOk is due: it never passed on this file, or last passed `intervalMs` ago or more. */
  integrityCheckDue(intervalMs: number): boolean {
    const last = Date.parse(this.meta("checked_at") ?? "");
    return !(Date.now() - last < intervalMs);
  }

  private sql(text: string): Statement {
    let statement = this.statements.get(text);
    if (!statement) this.statements.set(text, (statement = this.db.prepare(text)));
    return statement;
  }

  private meta(key: string): string | undefined {
    return (this.sql("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | null)?.value;
  }

  private setMeta(key: string, value: string): void {
    this.sql(
      "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    ).run(key, value);
  }

  private bumpGeneration(): void {
    this.setMeta("generation", String(Number(this.meta("generation") ?? 0) + 1));
  }

  async state(): Promise<IndexState> {
    return {
      offset: Number(this.meta("offset") ?? 0),
      offsetCheck: this.meta("offset_check") ?? "",
      lastIndexed: this.meta("last_indexed") ?? null,
      generation: Number(this.meta("generation") ?? 0),
      reviewSwept: this.meta("review_swept") === "1",
    };
  }

  /** The write generation alone: one indexed read, cheap enough to check before every warm query. */
  generation(): number {
    return Number(this.meta("generation") ?? 0);
  }

  async setState(state: Partial<IndexState>): Promise<void> {
    this.db.transaction(() => {
      if (state.offset !== undefined) this.setMeta("offset", String(state.offset));
      if (state.offsetCheck !== undefined) this.setMeta("offset_check", state.offsetCheck);
      if (state.lastIndexed) this.setMeta("last_indexed", state.lastIndexed);
      if (state.reviewSwept !== undefined) this.setMeta("review_swept", state.reviewSwept ? "1" : "0");
    })();
  }

  async indexedRecords(uuids: string[]): Promise<Set<string>> {
    const found = new Set<string>();
    const query = this.sql(
      "SELECT 1 FROM turns WHERE uuid = ?1 UNION ALL SELECT 1 FROM forgotten_records WHERE uuid = ?1",
    );
    for (const uuid of uuids) if (query.get(uuid)) found.add(uuid);
    return found;
  }

  async forgottenSessions(): Promise<Set<string>> {
    return new Set(
      (this.sql("SELECT session_id FROM forgotten").all() as { session_id: string }[]).map(
        (r) => r.session_id,
      ),
    );
  }

  async hasSession(sessionId: string): Promise<boolean> {
    return this.sql("SELECT 1 FROM chunks WHERE session_id = ? LIMIT 1").get(sessionId) !== null;
  }

  async entityVectors(): Promise<{ phrases: string[]; vectors: Float32Array; models: string[] }> {
    const rows = this.sql("SELECT phrase, model, vector FROM entities ORDER BY id").all() as {
      phrase: string;
      model: string;
      vector: Uint8Array;
    }[];
    const { vectors } = readVectors(rows);
    return { phrases: rows.map((r) => r.phrase), vectors, models: rows.map((r) => r.model) };
  }

  async writeBatch(batch: IndexBatch): Promise<void> {
    const edges: EdgeDeltas = new Map();
    // New phrases' keys are appended after the stored ones': those must be there first.
    this.ensurePhraseKeys();
    this.guarded(() => {
      const insertChunk = this.sql(
        "INSERT INTO chunks(hash, session_id, ts, text, graph_source, model, vector) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(hash) DO NOTHING RETURNING id",
      );
      const insertTurn = this.sql(
        "INSERT OR IGNORE INTO turns(uuid, chunk_id, ord, role, ts, start, end) VALUES (?, ?, ?, ?, ?, ?, ?)",
      );
      for (const chunk of batch.chunks) {
        const row = insertChunk.get(
          chunk.hash,
          chunk.sessionId,
          chunk.ts,
          chunk.text,
          chunk.graphSource,
          batch.model,
          toBlob(chunk.vector),
        ) as { id: number } | null;
        if (!row) continue; // already indexed: idempotent by chunk hash
        chunk.turns.forEach((t, ord) => {
          insertTurn.run(t.uuid, row.id, ord, t.role, t.ts, t.start, t.end);
        });
        this.addChunkGraph(row.id, chunk.graph, batch, edges);
      }
      this.flushEdges(edges);
      this.addSynonyms(batch);
      const insertSummary = this.sql(
        "INSERT INTO summaries(session_id, date, ts, text, source) VALUES (?, ?, ?, ?, ?)",
      );
      for (const s of batch.summaries) insertSummary.run(s.sessionId, s.date, s.ts, s.text, s.source);
      this.bumpGeneration();
    });
  }

  /**
   * Row ids of phrases and facts by their natural keys, remembered as a run meets them (each first looked
   * up through its unique index), so a run's cost follows what it writes, not the store's size. Dropped
   * whenever a transaction fails or rows are deleted, so it never names a row that is not there.
   */
  private ids?: { phrase: Map<string, number>; fact: Map<string, number> };

  private idCache() {
    this.ids ??= { phrase: new Map(), fact: new Map() };
    return this.ids;
  }

  /** The phrase's row id, or undefined when no phrase node has that key. */
  private phraseId(phrase: string): number | undefined {
    const cache = this.idCache().phrase;
    let id = cache.get(phrase);
    if (id === undefined) {
      id = (this.sql("SELECT id FROM entities WHERE phrase = ?").get(phrase) as { id: number } | null)?.id;
      if (id !== undefined) cache.set(phrase, id);
    }
    return id;
  }

  /** Runs `work` in a transaction; a failure also drops the id cache (its rows were rolled back). */
  private guarded<T>(work: () => T): T {
    try {
      return this.db.transaction(work)();
    } catch (error) {
      this.ids = undefined;
      throw error;
    }
  }

  private entityId(phrase: string, label: string, model: string, vectors: Map<string, Float32Array>): number {
    const existing = this.phraseId(phrase);
    if (existing !== undefined) return existing;
    const vector = vectors.get(phrase);
    if (!vector) throw new Error(`no vector for new phrase '${phrase}'`);
    const id = Number(
      this.sql("INSERT INTO entities(phrase, label, model, vector) VALUES (?, ?, ?, ?)").run(
        phrase,
        label,
        model,
        toBlob(vector),
      ).lastInsertRowid,
    );
    this.idCache().phrase.set(phrase, id);
    // OR REPLACE: a row id SQLite hands out again (its phrase deleted without its keys row) takes this one's.
    this.sql("INSERT OR REPLACE INTO phrase_keys(entity, rank, keys) VALUES (?, ?, ?)").run(
      id,
      phraseRank(phrase),
      keysBlob(bandKeys(vector)),
    );
    return id;
  }

  /** Adds each edge's summed amount (creating it) and its per-chunk contributions. */
  private flushEdges(deltas: EdgeDeltas): void {
    const upsert = this.sql(
      "INSERT INTO edges(kind, a, b, weight) VALUES (?, ?, ?, ?) ON CONFLICT(kind, a, b) DO UPDATE SET weight = weight + excluded.weight RETURNING id",
    );
    const source = this.sql(
      "INSERT INTO edge_sources(edge_id, chunk_id, amount) VALUES (?, ?, ?) ON CONFLICT(edge_id, chunk_id) DO UPDATE SET amount = amount + excluded.amount",
    );
    for (const d of deltas.values()) {
      const { id } = upsert.get(d.kind, d.a, d.b, d.amount) as { id: number };
      for (const [chunkId, amount] of d.sources) source.run(id, chunkId, amount);
    }
  }

  private addChunkGraph(
    chunkId: number,
    graph: ChunkGraph,
    vectors: Pick<IndexBatch, "model" | "entityVectors" | "factVectors">,
    edges: EdgeDeltas,
  ): void {
    const ids = new Map<string, number>();
    for (const e of graph.entities) {
      if (ids.has(e.phrase)) continue;
      const id = this.entityId(e.phrase, e.label, vectors.model, vectors.entityVectors);
      ids.set(e.phrase, id);
      // Passage↔phrase context edge, weight 1 as in HippoRAG 2.
      addEdge(edges, EDGE_KIND.context, chunkId, id, 1, chunkId);
    }
    const facts = this.idCache().fact;
    const insertFact = this.sql(
      "INSERT INTO facts(subject, predicate, object, model, vector) VALUES (?, ?, ?, ?, ?)",
    );
    const insertSource = this.sql("INSERT OR IGNORE INTO fact_sources(fact_id, chunk_id) VALUES (?, ?)");
    const findFact = this.sql("SELECT id FROM facts WHERE subject = ? AND predicate = ? AND object = ?");
    for (const f of graph.facts) {
      const s = ids.get(f.subject);
      const o = ids.get(f.object);
      if (s === undefined || o === undefined || s === o) continue;
      const key = `${s}\u0001${f.predicate}\u0001${o}`;
      let factId = facts.get(key) ?? (findFact.get(s, f.predicate, o) as { id: number } | null)?.id;
      if (factId !== undefined) facts.set(key, factId);
      else {
        const vector = vectors.factVectors.get(factKey(f.subject, f.predicate, f.object));
        if (!vector) throw new Error(`no vector for new fact '${f.subject} ${f.predicate} ${f.object}'`);
        factId = Number(insertFact.run(s, f.predicate, o, vectors.model, toBlob(vector)).lastInsertRowid);
        facts.set(key, factId);
      }
      // A chunk stating the same fact twice counts once; each distinct fact adds 1 to its phrase pair's edge.
      if (insertSource.run(factId, chunkId).changes > 0)
        addEdge(edges, EDGE_KIND.fact, ...ordered(s, o), 1, chunkId);
    }
  }

  /**
   * Synonym edges added (or revived) and dropped (weight 0, the row kept: an extended recall snapshot
   * holds it by position). A change to an earlier row is recorded in synonym_changes for snapshotDelta.
   */
  private addSynonyms(batch: Pick<IndexBatch, "synonyms" | "synonymsDropped">): void {
    const marks = this.sql(
      "SELECT (SELECT coalesce(max(id), 0) FROM edges) AS edge, (SELECT coalesce(max(id), 0) FROM chunks) AS chunk",
    ).get() as { edge: number; chunk: number };
    const upsert = this.sql(
      "INSERT INTO edges(kind, a, b, weight) VALUES (?, ?, ?, ?) ON CONFLICT(kind, a, b) DO UPDATE SET weight = excluded.weight RETURNING id",
    );
    const drop = this.sql("UPDATE edges SET weight = 0 WHERE kind = ? AND a = ? AND b = ? RETURNING id");
    const changed = this.sql("INSERT OR REPLACE INTO synonym_changes(edge_id, chunk) VALUES (?, ?)");
    const pair = (x: string, y: string) => {
      const a = this.phraseId(x);
      const b = this.phraseId(y);
      return a === undefined || b === undefined || a === b ? undefined : ordered(a, b);
    };
    for (const s of batch.synonyms) {
      const ids = pair(s.a, s.b);
      if (!ids) continue;
      const { id } = upsert.get(EDGE_KIND.synonym, ...ids, s.score) as { id: number };
      if (id <= marks.edge) changed.run(id, marks.chunk);
    }
    for (const s of batch.synonymsDropped ?? []) {
      const ids = pair(s.a, s.b);
      const row = ids && (drop.get(EDGE_KIND.synonym, ...ids) as { id: number } | null);
      if (row) changed.run(row.id, marks.chunk);
    }
  }

  /** The rule this store's synonym edges follow (none: a store made before the cap, or whose first run has not finished them). */
  synonymRule(): string | undefined {
    return this.meta("synonym_rule");
  }

  /** The store's synonym edges follow no rule until rebuildSynonyms (a first run computes them at its end). */
  forgetSynonymRule(): void {
    this.sql("DELETE FROM meta WHERE key = 'synonym_rule'").run();
  }

  /** The highest phrase row id: phrases a run adds lie above it. */
  maxEntityId(): number {
    return (this.sql("SELECT coalesce(max(id), 0) AS n FROM entities").get() as { n: number }).n;
  }

  /** Which of `phrases` are stored phrase nodes. */
  knownPhrases(phrases: string[]): Set<string> {
    return new Set(phrases.filter((p) => this.phraseId(p) !== undefined));
  }

  /**
   * The store as the synonym graph reads it; `upTo`: only phrases with a row id up to it (those of
   * before a run). Buckets' heads come from heads-file.ts's arrays, built from phrase_keys; with
   * `cacheFiles` (the indexer) from the heads file's base and the phrases after it, and the heads'
   * vectors and names from the phrase file beside the store, brought up to `upTo` first; vectors and
   * names from `phraseFile` and BUCKET_LIMIT's heads from `heads` where given (forget's, from the
   * files as they were before it).
   */
  synonymSource(
    upTo = Number.MAX_SAFE_INTEGER,
    options: { cacheFiles?: boolean; phraseFile?: PhraseFile; heads?: BucketHeads } = {},
  ): SynonymSource {
    // Lists of phrases in slices of up to 500 (each one `?`), one query per slice.
    const inSlices = <T>(
      list: (string | number)[],
      text: (marks: string) => string,
      ...rest: number[]
    ): T[] => {
      const out: T[] = [];
      for (let at = 0; at < list.length; at += 500) {
        const slice = list.slice(at, at + 500);
        out.push(...(this.sql(text(slice.map(() => "?").join(", "))).all(...slice, ...rest) as T[]));
      }
      return out;
    };
    // The phrases bucketHeads returned, by row id: the graph keeps what it met, so a phrase heading
    // buckets of several calls is read once (at 10,000 synthetic records a session's calls read 155k
    // entity rows for 88k phrases without this). In plain arrays, not Maps: a session's calls look
    // 1.2 M head rows up in them. `named`: the names read so far (a name in the phrase file is read
    // when the graph asks for it).
    const rows = Math.min(upTo, this.maxEntityId()) + 1;
    const given = new Uint8Array(rows);
    const named: (string | undefined)[] = new Array(rows).fill(undefined);
    // A phrase's place among the phrases of the bucketHeads call running (-1: none), and its rank.
    const slot = new Int32Array(rows).fill(-1);
    const rankOf = new Float64Array(rows);
    const columns = {
      memberKeys: new Growable(Int32Array),
      memberIds: new Growable(Int32Array),
      memberRanks: new Growable(Float64Array),
      listed: new Growable(Float64Array),
      vectorAt: new Growable(Int32Array),
      phraseIds: new Growable(Int32Array),
      ranks: new Growable(Float64Array),
      rowKeys: new Growable(Int32Array),
      rowHeads: new Growable(Int32Array),
    };
    let file: PhraseFile | undefined | null =
      options.phraseFile ?? (options.cacheFiles && upTo > 0 ? undefined : null);
    const phraseFile = () => {
      if (file === undefined) file = this.currentPhraseFile(upTo) ?? null;
      return file ?? undefined;
    };
    // Buckets' heads by limit: BUCKET_LIMIT's from the heads file where the indexer reads through one,
    // else (and for any other limit: tests) built from phrase_keys once per source. The indexer's source
    // writes what it built as the file, so the run's end appends to it instead of building it again
    // (~5 s at 100,000 records: the first run after a forget or an upgrade built it twice).
    const headsByLimit = new Map<number, BucketHeads>();
    const headsAt = (limit: number): BucketHeads => {
      let heads = headsByLimit.get(limit) ?? (limit === BUCKET_LIMIT ? options.heads : undefined);
      if (!heads) {
        this.ensurePhraseKeys();
        const path = options.cacheFiles && limit === BUCKET_LIMIT ? headsFilePath(this.path) : undefined;
        const identity = this.cacheIdentity();
        heads = path
          ? BucketHeads.open(path, identity, upTo, (after, to) => this.keyedPhrases(after, to))
          : undefined;
        if (!heads) {
          const base = headsBaseOf(phraseColumns(this.keyedPhrases(0, upTo)), limit);
          heads = BucketHeads.of(base);
          if (path)
            try {
              BucketHeads.write(path, identity, Math.min(upTo, this.maxEntityId()), base);
            } catch {
              // A read-only or full disk: the run's end tries again.
              removeHeadsFileOf(this.path);
            }
        }
        headsByLimit.set(limit, heads);
      }
      return heads;
    };
    /** Phrases' names by row id: those met, then the phrase file's, then the table's. */
    const endNames = new Map<number, string>();
    const namesOf = (ids: number[]): Map<number, string> => {
      const out = new Map<number, string>();
      const rest: number[] = [];
      const mapped = phraseFile();
      for (const id of new Set(ids)) {
        const name =
          named[id] ??
          endNames.get(id) ??
          (id <= upTo && mapped && mapped.vectorAt(id) >= 0 ? mapped.nameOf(id) : undefined);
        if (name === undefined) rest.push(id);
        else out.set(id, name);
      }
      const row = this.sql("SELECT id, phrase FROM entities WHERE id IN (SELECT value FROM json_each(?))");
      for (let at = 0; at < rest.length; at += PHRASE_ROWS_A_QUERY)
        for (const [id, phrase] of row.values(JSON.stringify(rest.slice(at, at + PHRASE_ROWS_A_QUERY))) as [
          number,
          string,
        ][])
          out.set(id, phrase);
      for (const [id, name] of out) endNames.set(id, name);
      return out;
    };
    const source: SynonymSource = {
      empty: upTo <= 0,
      bucketHeads: (keys, limit) => {
        const found: HeadRows = { phrases: [], ids: [], vectors: [], vectorAt: [], keys: [], heads: [] };
        if (upTo <= 0) return found;
        // Each bucket's heads, then each phrase once, however many buckets show it. The rows as columns
        // (~950k of them a session at 100k records: no array a row), in memory every call reuses.
        for (const column of Object.values(columns)) column.clear();
        const { memberKeys, memberIds, memberRanks, listed, vectorAt, phraseIds, ranks, rowKeys, rowHeads } =
          columns;
        const heads = headsAt(limit);
        for (const key of keys) {
          heads.headsOf(key, limit, memberIds, memberRanks);
          while (memberKeys.length < memberIds.length) memberKeys.push(key);
        }
        // Each phrase once, by row id in order, so the phrase file is read front to back (~500k records of
        // one session at 100k records); ids thousands a statement, rows as arrays, where the table is read.
        const members = memberIds.view();
        const memberRank = memberRanks.view();
        for (let i = 0; i < members.length; i++) {
          const id = members[i];
          if (slot[id] === -1) {
            slot[id] = -2;
            rankOf[id] = memberRank[i];
            listed.push(id);
          }
        }
        // A typed array's own numeric sort: a comparator's took 0.27 s for a session's ~500k ids.
        const ids = listed.view().sort();
        const { phrases, vectors } = found;
        const take = (id: number, phrase: string | undefined, from: Float32Array | undefined, at: number) => {
          slot[id] = phrases.push(phrase) - 1;
          phraseIds.push(id);
          vectors.push(from);
          vectorAt.push(at);
          ranks.push(rankOf[id]);
          given[id] = 1;
        };
        const mapped = phraseFile();
        const fromTable: number[] = [];
        for (const id of ids) {
          // Given by an earlier call: the graph has its vector (and asks for its name by row id).
          if (given[id]) take(id, named[id], undefined, 0);
          else {
            const at = mapped ? mapped.vectorAt(id) : -1;
            // No phrase file, a record that did not check out (the file is then removed) or a name too
            // long for it: the row comes from the table.
            if (at < 0 || !mapped!.holdsName(id)) fromTable.push(id);
            else take(id, undefined, mapped!.floats, at);
          }
        }
        const table = this.sql(
          "SELECT id, phrase, vector FROM entities WHERE id IN (SELECT value FROM json_each(?))",
        );
        for (let at = 0; at < fromTable.length; at += PHRASE_ROWS_A_QUERY)
          for (const [id, phrase, blob] of table.values(
            JSON.stringify(fromTable.slice(at, at + PHRASE_ROWS_A_QUERY)),
          ) as [number, string, Uint8Array][]) {
            named[id] = phrase;
            take(id, phrase, readVectors([{ vector: blob }]).vectors, 0);
          }
        const memberKey = memberKeys.view();
        for (let i = 0; i < members.length; i++) {
          const at = slot[members[i]];
          // A row whose phrase is gone from the table: skipped, as a join would.
          if (at < 0) continue;
          rowKeys.push(memberKey[i]);
          rowHeads.push(at);
        }
        for (const id of ids) slot[id] = -1;
        return {
          phrases,
          ids: phraseIds.view(),
          vectors,
          vectorAt: vectorAt.view(),
          keys: rowKeys.view(),
          heads: rowHeads.view(),
          ranks: ranks.view(),
        };
      },
      phraseName: (id) => {
        const name = namesOf([id]).get(id);
        if (name === undefined) throw new Error(`synonym source: no phrase has row id ${id}`);
        return name;
      },
      phraseVectors: (phrases) =>
        new Map(
          inSlices<{ id: number; phrase: string; vector: Uint8Array }>(
            phrases,
            (marks) => `SELECT id, phrase, vector FROM entities WHERE phrase IN (${marks}) AND id <= ?`,
            upTo,
          ).map((r) => [r.phrase, { id: r.id, vector: readVectors([r]).vectors }]),
        ),
      synonymNeighbours: (phrases, known) => {
        const out = new Map<string, [string, number, number][]>();
        const names = new Map<number, string>();
        const unknown: string[] = [];
        phrases.forEach((phrase, i) => {
          const id = known?.[i] ?? 0;
          if (id > 0) names.set(id, phrase);
          else unknown.push(phrase);
        });
        for (const r of inSlices<{ id: number; phrase: string }>(
          unknown,
          (marks) => `SELECT id, phrase FROM entities WHERE phrase IN (${marks})`,
        ))
          names.set(r.id, r.phrase);
        // Numbers, not their text: an INTEGER column compared with text parameters is not looked up by index.
        const ids = [...names.keys()];
        // Each side through its own index: (kind, a) of the unique key, and edges_b (left to itself, SQLite
        // took the unique key's `kind` prefix for the b side and walked every synonym edge per query).
        // The other ends by row id, their names from what this source has met, the phrase file, then the
        // table: joining entities for them read a row at random per edge (1.4 s for 14k phrases' edges
        // on the 100,000-record synthetic store).
        const edges: [number, number, number][] = [];
        for (const [self, other] of [
          ["a", "b"],
          ["b", "a"],
        ])
          for (let at = 0; at < ids.length; at += PHRASE_ROWS_A_QUERY)
            for (const row of this.sql(
              `SELECT e.${self}, e.${other}, e.weight FROM edges e ${self === "b" ? "INDEXED BY edges_b " : ""}WHERE e.kind = ${EDGE_KIND.synonym} AND e.${self} IN (SELECT value FROM json_each(?)) AND e.weight > 0`,
            ).values(JSON.stringify(ids.slice(at, at + PHRASE_ROWS_A_QUERY))) as [number, number, number][])
              edges.push(row);
        const ends = namesOf(edges.map((e) => e[1]));
        for (const [self, other, weight] of edges) {
          // An edge to a row no phrase holds is skipped, as the join with entities did.
          const end = ends.get(other);
          if (end === undefined) continue;
          const phrase = names.get(self)!;
          let list = out.get(phrase);
          if (!list) out.set(phrase, (list = []));
          list.push([end, weight, other]);
        }
        return out;
      },
    };
    return {
      empty: source.empty,
      bucketHeads: (keys, limit) => this.mappedReads(() => source.bucketHeads(keys, limit)),
      phraseVectors: (phrases) => this.mappedReads(() => source.phraseVectors(phrases)),
      phraseName: (id) => this.mappedReads(() => source.phraseName!(id)),
      synonymNeighbours: (phrases, ids) => this.mappedReads(() => source.synonymNeighbours(phrases, ids)),
      reading: (work) => this.mappedReads(work),
    };
  }

  /** How many mappedReads are running (they nest: the outermost maps the file and unmaps it). */
  private mappedDepth = 0;

  /**
   * `read` with the store file mapped (MAPPED_READ_BYTES), unmapped after it. PERF: each unmapping
   * drops the pages read, so the graph's many reads of one batch (bucket heads, then edges, then heads
   * again) share one mapping: mapped a call at a time, a session at 100,000 records faulted ~100k more
   * pages in.
   */
  private mappedReads<T>(read: () => T): T {
    if (this.mappedDepth++ === 0) this.db.run(`PRAGMA mmap_size = ${MAPPED_READ_BYTES}`);
    try {
      return read();
    } finally {
      if (--this.mappedDepth === 0) this.db.run("PRAGMA mmap_size = 0");
    }
  }

  /** Brings the phrase file up to every stored phrase (the indexer, at the end of a run). */
  refreshPhraseFile(): void {
    this.currentPhraseFile(Number.MAX_SAFE_INTEGER);
  }

  /**
   * Brings the heads file up to every stored phrase (the indexer, at the end of a run): this run's
   * phrases appended to its log, or base and log merged into a new base when the log has grown past its
   * share, or a base built from phrase_keys when there is none usable. A file that cannot be written is
   * no file (the source builds the heads from the table). Tests bring it up to an earlier row (`upTo`)
   * or keep the base longer (`rebuildShare`).
   */
  refreshHeadsFile(options: { upTo?: number; rebuildShare?: number } = {}): void {
    const path = headsFilePath(this.path);
    const upTo = Math.min(options.upTo ?? Number.MAX_SAFE_INTEGER, this.maxEntityId());
    if (!path || upTo <= 0) return;
    const identity = this.cacheIdentity();
    const keyed = (after: number, to: number) => this.keyedPhrases(after, to);
    try {
      this.ensurePhraseKeys();
      const file = BucketHeads.open(path, identity, upTo, keyed);
      if (file && !file.stale(upTo, options.rebuildShare)) file.append(upTo, keyed);
      else
        BucketHeads.write(
          path,
          identity,
          upTo,
          file ? file.merged() : headsBaseOf(phraseColumns(keyed(0, upTo))),
        );
    } catch {
      removeHeadsFileOf(this.path);
    }
  }

  /** What names this store's cache files' rows: a store rebuilt in place, or with deletions, is another. */
  private cacheIdentity(): string {
    return `${this.storeId()}/${this.deletions()}`;
  }

  /** The phrases with row ids in (after, upTo], in order, with their ranks and bucket keys: KEYED_ROWS_A_QUERY rows a query. */
  private *keyedPhrases(after: number, upTo: number): Iterable<KeyedPhrase> {
    const rows = this.sql(
      `SELECT entity, rank, keys FROM phrase_keys WHERE entity > ? AND entity <= ? ORDER BY entity LIMIT ${KEYED_ROWS_A_QUERY}`,
    );
    for (let from = after; ; ) {
      const slice = rows.values(from, upTo) as [number, number, Uint8Array][];
      yield* keyedRows(slice);
      if (slice.length < KEYED_ROWS_A_QUERY) return;
      from = slice[slice.length - 1][0];
    }
  }

  /**
   * Gives every phrase after the last keyed one its phrase_keys row (from its vector and text), in
   * row-id order, and drops the table it replaced: once for a store from before phrase_keys (~13 s at
   * 100,000 synthetic records, the indexer's or forget's, never a reader's); otherwise two lookups of
   * the highest row ids.
   */
  private ensurePhraseKeys(): void {
    const keyed = this.sql("SELECT coalesce(max(entity), 0) AS n FROM phrase_keys").get() as { n: number };
    if (keyed.n >= this.maxEntityId()) return;
    this.guarded(() => {
      const insert = this.sql("INSERT INTO phrase_keys(entity, rank, keys) VALUES (?, ?, ?)");
      for (const { id, phrase, vector } of this.sql(
        "SELECT id, phrase, vector FROM entities WHERE id > ? ORDER BY id",
      ).iterate(keyed.n) as Iterable<{ id: number; phrase: string; vector: Uint8Array }>)
        insert.run(id, phraseRank(phrase), keysBlob(bandKeys(readVectors([{ vector }]).vectors)));
      this.db.run("DROP TABLE IF EXISTS phrase_buckets");
    });
  }

  /** The phrase file read whole as it is, where it is of the store named `identity`; nothing written. */
  private phraseFileAsOf(identity: string): PhraseFile | undefined {
    const path = phraseFilePath(this.path);
    const row = this.sql("SELECT vector FROM entities ORDER BY id DESC LIMIT 1").get() as {
      vector: Uint8Array;
    } | null;
    return path && row ? PhraseFile.readWhole(path, row.vector.byteLength >> 2, identity) : undefined;
  }

  /** The phrase file holding every phrase up to row `upTo`, or undefined where it cannot be had. */
  private currentPhraseFile(upTo: number): PhraseFile | undefined {
    const path = phraseFilePath(this.path);
    if (!path) return undefined;
    const to = Math.min(upTo, this.maxEntityId());
    const last = this.sql("SELECT id, phrase, vector FROM entities WHERE id = ?").get(to) as PhraseRow | null;
    if (!last) return undefined;
    const after = this.sql("SELECT id, phrase, vector FROM entities WHERE id > ? AND id <= ? ORDER BY id");
    return PhraseFile.current(
      path,
      last.vector.byteLength >> 2,
      this.cacheIdentity(),
      to,
      (id, upTo) => after.iterate(id, upTo) as Iterable<PhraseRow>,
    );
  }

  /**
   * The heads of these buckets as the table has them now (BUCKET_LIMIT lowest ranks and the ties of the
   * last, by row id): one pass over phrase_keys keeping only their rows.
   */
  private bucketHeadsAt(keys: Iterable<number>): Map<number, BucketRows> {
    const wanted = [...keys];
    const only = new Uint8Array(LSH_BANDS * 2 ** LSH_BITS);
    for (const key of wanted) only[key] = 1;
    // Only the phrases in one of them: sorting every phrase by rank costs seconds at 100,000 records.
    const members = function* (phrases: Iterable<KeyedPhrase>) {
      for (const p of phrases)
        for (let b = 0; b < LSH_BANDS; b++)
          if (only[p.keys[b]]) {
            yield p;
            break;
          }
    };
    const base = headsBaseOf(
      phraseColumns(members(this.keyedPhrases(0, Number.MAX_SAFE_INTEGER))),
      BUCKET_LIMIT,
      only,
    );
    return headsAtKeys(BucketHeads.of(base), wanted);
  }

  /**
   * Recomputes every synonym edge under the current rule (a store made before the cap, or under another
   * k): all of them go (a deletion: an extended recall snapshot is rebuilt), every phrase gets its
   * buckets (`buckets: false`: they are already the rule's, written with the phrases), and the edges are
   * each phrase's k nearest.
   */
  rebuildSynonyms(options: { buckets?: boolean } = {}): void {
    this.guarded(() => {
      this.setMeta("deletions", String(this.deletions() + 1));
      this.sql("DELETE FROM edges WHERE kind = ?").run(EDGE_KIND.synonym);
      this.sql("DELETE FROM synonym_changes").run();
      this.db.run("DROP TABLE IF EXISTS phrase_bands");
      this.db.run("DROP TABLE IF EXISTS phrase_buckets");
      const rows = this.sql("SELECT id, phrase, vector FROM entities ORDER BY id").all() as {
        id: number;
        phrase: string;
        vector: Uint8Array;
      }[];
      const { vectors } = readVectors(rows);
      const dim = rows.length ? vectors.length / rows.length : 0;
      const keys = new Int32Array(rows.length * LSH_BANDS);
      for (let i = 0; i < rows.length; i++)
        keys.set(bandKeys(vectors.subarray(i * dim, (i + 1) * dim)), i * LSH_BANDS);
      if (options.buckets ?? true) {
        this.sql("DELETE FROM phrase_keys").run();
        const insert = this.sql("INSERT INTO phrase_keys(entity, rank, keys) VALUES (?, ?, ?)");
        rows.forEach((r, i) => {
          insert.run(r.id, phraseRank(r.phrase), keysBlob(keys.subarray(i * LSH_BANDS, (i + 1) * LSH_BANDS)));
        });
      }
      // Every phrase's vector in one array and the rule applied band by band (synonymEdgesOf), not a
      // synonym graph of every phrase: one bucket query per phrase would cost a store of 8,000 phrases
      // 2.4 M index lookups, and the graph holds ~3 KB per phrase (878k phrases at 100,000 records).
      const insert = this.sql("INSERT OR IGNORE INTO edges(kind, a, b, weight) VALUES (?, ?, ?, ?)");
      for (const e of synonymEdgesOf(
        rows.map((r) => r.phrase),
        vectors,
        SYNONYM_NEIGHBOURS,
        BUCKET_LIMIT,
        keys,
      ))
        insert.run(EDGE_KIND.synonym, ...ordered(rows[e.a].id, rows[e.b].id), e.score);
      this.setMeta("synonym_rule", SYNONYM_RULE);
      this.bumpGeneration();
    });
  }

  /** ResultCache: keys end with the chunk hash (`openie:v1:<hash>`), which `forget` deletes by. */
  get(key: string): string | undefined {
    return (this.sql("SELECT value FROM llm_cache WHERE key = ?").get(key) as { value: string } | null)
      ?.value;
  }

  set(key: string, value: string): void {
    const chunkHash = key.slice(key.lastIndexOf(":") + 1);
    this.sql("INSERT OR REPLACE INTO llm_cache(key, chunk_hash, value) VALUES (?, ?, ?)").run(
      key,
      chunkHash,
      value,
    );
  }

  /** Many cache entries in one transaction (loading stored OpenIE output for a whole corpus). */
  setMany(entries: [key: string, value: string][]): void {
    this.db.transaction(() => {
      for (const [key, value] of entries) this.set(key, value);
    })();
  }

  async pendingLlmChunks(limit: number): Promise<{ id: number; hash: string; text: string }[]> {
    return this.sql(
      "SELECT id, hash, text FROM chunks WHERE graph_source = 'llm-pending' ORDER BY id LIMIT ?",
    ).all(limit) as {
      id: number;
      hash: string;
      text: string;
    }[];
  }

  async replaceChunkGraph(
    chunkId: number,
    graph: ChunkGraph,
    source: GraphSource,
    vectors: Omit<IndexBatch, "chunks" | "summaries">,
  ): Promise<void> {
    this.guarded(() => {
      this.removeChunkGraph([chunkId]);
      const edges: EdgeDeltas = new Map();
      this.addChunkGraph(chunkId, graph, vectors, edges);
      this.flushEdges(edges);
      this.addSynonyms(vectors);
      this.sql("UPDATE chunks SET graph_source = ? WHERE id = ?").run(source, chunkId);
      this.bumpGeneration();
    });
  }

  /**
   * Subtracts exactly what `chunkIds` contributed: edge weights go down by their recorded amounts (and
   * vanish at zero), facts lose these sources (and vanish with none), phrases with no passage left vanish
   * with their synonym edges.
   */
  private removeChunkGraph(chunkIds: number[]): {
    facts: number;
    entities: number;
    edgesRemoved: number;
    edgesLowered: number;
  } {
    this.ids = undefined; // rows are deleted below
    // What names the cache files as they are, before this deletion renames the store.
    const identity = this.cacheIdentity();
    // Rows go away: arrays extended from this store's rows (a persisted recall snapshot) must be rebuilt.
    this.setMeta("deletions", String(this.deletions() + 1));
    const touchedEntities = new Set<number>();
    const touchedFacts = new Set<number>();
    let edgesRemoved = 0;
    let edgesLowered = 0;
    const sources = this.sql(
      "SELECT s.edge_id AS id, s.amount AS amount, e.kind AS kind, e.a AS a, e.b AS b FROM edge_sources s JOIN edges e ON e.id = s.edge_id WHERE s.chunk_id = ?",
    );
    const lower = this.sql("UPDATE edges SET weight = weight - ? WHERE id = ? RETURNING weight");
    const deleteEdge = this.sql("DELETE FROM edges WHERE id = ?");
    const contextEdges = this.sql("DELETE FROM edges WHERE kind = ? AND a = ? RETURNING b");
    for (const chunkId of chunkIds) {
      for (const s of sources.all(chunkId) as {
        id: number;
        amount: number;
        kind: number;
        a: number;
        b: number;
      }[]) {
        if (s.kind === EDGE_KIND.context) touchedEntities.add(s.b);
        const { weight } = lower.get(s.amount, s.id) as { weight: number };
        if (weight <= EDGE_EPSILON) {
          deleteEdge.run(s.id);
          edgesRemoved++;
        } else edgesLowered++;
      }
      this.sql("DELETE FROM edge_sources WHERE chunk_id = ?").run(chunkId);
      for (const { b } of contextEdges.all(EDGE_KIND.context, chunkId) as { b: number }[]) {
        touchedEntities.add(b);
        edgesRemoved++;
      }
      for (const { fact_id } of this.sql("DELETE FROM fact_sources WHERE chunk_id = ? RETURNING fact_id").all(
        chunkId,
      ) as { fact_id: number }[]) {
        touchedFacts.add(fact_id);
      }
    }
    let facts = 0;
    for (const factId of touchedFacts) {
      if (!this.sql("SELECT 1 FROM fact_sources WHERE fact_id = ?").get(factId)) {
        this.sql("DELETE FROM facts WHERE id = ?").run(factId);
        facts++;
      }
    }
    let entities = 0;
    // Phrases that lose a synonym neighbour may take in the next nearest one (repaired below).
    const bereaved = new Set<number>();
    const removed = new Set<number>();
    // No passage mentions these phrases any more: they go, and with them their synonym edges.
    // INDEXED BY: left to itself, SQLite walked the unique key's `kind` prefix, every context edge, for
    // each phrase that has none left (16 s of a session forgotten at 100,000 synthetic records).
    const going = [...touchedEntities].filter(
      (id) =>
        !this.sql("SELECT 1 FROM edges INDEXED BY edges_b WHERE b = ? AND kind = ?").get(
          id,
          EDGE_KIND.context,
        ),
    );
    if (going.length) this.ensurePhraseKeys();
    // The phrase file as it was, read before it goes: the repair reads the heads' vectors from it, not
    // a row at random each (15.6 s of a session's forget at 100,000 synthetic records).
    const phraseFile = going.length ? this.phraseFileAsOf(identity) : undefined;
    // So are the bucket heads: every bucket but those the phrases leave keeps its heads.
    const headsPath = headsFilePath(this.path);
    const headsBefore =
      going.length && headsPath
        ? BucketHeads.open(
            headsPath,
            identity,
            this.maxEntityId(),
            (after, to) => this.keyedPhrases(after, to),
            {
              whole: true,
            },
          )
        : undefined;
    const keysOf = this.sql("SELECT keys FROM phrase_keys WHERE entity = ?");
    const leftKeys = new Set<number>();
    for (const id of going) {
      const row = keysOf.get(id) as { keys: Uint8Array } | null;
      if (row) for (const key of keysOfBlob(row.keys)) leftKeys.add(key);
    }
    /** Bucket keys the removed phrases leave, with their heads before any left. */
    const left = !leftKeys.size
      ? new Map<number, BucketRows>()
      : headsBefore
        ? headsAtKeys(headsBefore, leftKeys)
        : this.bucketHeadsAt(leftKeys);
    for (const entityId of going) {
      this.sql("DELETE FROM phrase_keys WHERE entity = ?").run(entityId);
      // The phrase file holds the phrase's text: it goes first (the next run rewrites it).
      if (!entities) removeCacheFilesOf(this.path);
      this.sql("DELETE FROM entities WHERE id = ?").run(entityId);
      removed.add(entityId);
      // Each side through its own index (the unique key's (kind, a), edges_b): `kind != ? AND (a = ?
      // OR b = ?)` scanned every edge for each phrase, ~500 s for a session's 327 phrases at 100,000
      // synthetic records (9 M edges).
      const gone = [
        ...this.sql("DELETE FROM edges WHERE kind IN (?, ?) AND a = ? RETURNING id, kind, a, b, weight").all(
          EDGE_KIND.fact,
          EDGE_KIND.synonym,
          entityId,
        ),
        ...this.sql("DELETE FROM edges WHERE b = ? AND kind != ? RETURNING id, kind, a, b, weight").all(
          entityId,
          EDGE_KIND.context,
        ),
      ] as { id: number; kind: number; a: number; b: number; weight: number }[];
      for (const e of gone) {
        this.sql("DELETE FROM edge_sources WHERE edge_id = ?").run(e.id);
        if (e.kind === EDGE_KIND.synonym && e.weight > 0) bereaved.add(e.a === entityId ? e.b : e.a);
      }
      edgesRemoved += gone.length;
      facts += this.sql("DELETE FROM facts WHERE subject = ? RETURNING id").all(entityId).length;
      entities++;
    }
    // Facts naming a removed phrase as their object: one pass for all of them (no index leads with
    // `object`; one scan a phrase was the other half of those ~500 s). Normally none are left: a fact's
    // chunks mention both its ends, so its sources went with the chunks above.
    if (removed.size)
      facts += this.sql(
        "DELETE FROM facts WHERE object IN (SELECT value FROM json_each(?)) RETURNING id",
      ).all(JSON.stringify([...removed])).length;
    this.repairSynonyms(
      [...bereaved].filter((id) => !removed.has(id)),
      left,
      { phraseFile, headsBefore },
    );
    this.ids = undefined;
    return { facts, entities, edgesRemoved, edgesLowered };
  }

  /**
   * After phrases left, the synonym lists they changed are repaired (SynonymGraph.repair): those of
   * phrases joined to one that left (`bereaved`: pairs are lost only by a phrase that left), and where
   * a phrase moved up into a bucket's heads (`left`: each bucket a phrase left, with its heads before),
   * the moved-up phrase's, which gains candidates, and the lists it may now enter. Rows were deleted,
   * so the recall snapshot is rebuilt anyway: dropped synonym rows (weight 0) and their change records
   * go.
   */
  private repairSynonyms(
    bereaved: number[],
    left: Map<number, BucketRows>,
    before: { phraseFile?: PhraseFile; headsBefore?: BucketHeads } = {},
  ): void {
    this.sql("DELETE FROM edges WHERE kind = ? AND weight <= 0").run(EDGE_KIND.synonym);
    this.sql("DELETE FROM synonym_changes").run();
    this.ids = undefined;
    const now = left.size ? this.bucketHeadsAt(left.keys()) : new Map<number, BucketRows>();
    const movedUp = new Set<number>();
    for (const [key, { ids }] of left) {
      const was = new Set(ids);
      for (const id of now.get(key)?.ids ?? []) if (!was.has(id)) movedUp.add(id);
    }
    // The heads as the file had them, with the buckets phrases left read again: the rest did not change.
    const heads = before.headsBefore?.replacing(now);
    const name = this.sql("SELECT phrase FROM entities WHERE id = ?");
    const phrasesOf = (ids: Iterable<number>) =>
      [...ids].map((id) => (name.get(id) as { phrase: string }).phrase);
    if (bereaved.length || movedUp.size)
      this.addSynonyms(
        changesOf(
          new SynonymGraph(
            this.synonymSource(Number.MAX_SAFE_INTEGER, { phraseFile: before.phraseFile, heads }),
          ).repair(phrasesOf(bereaved), phrasesOf(movedUp)),
        ),
      );
  }

  async forgetSession(sessionId: string): Promise<ForgetResult> {
    // Forgotten text must leave the file, not linger in free pages: secure_delete zeroes what this
    // connection frees from here on, and the TRUNCATE checkpoint below drops the WAL's older page copies.
    this.db.run("PRAGMA secure_delete = ON");
    const result = this.guarded(() => {
      this.sql("INSERT OR IGNORE INTO forgotten(session_id, at) VALUES (?, ?)").run(
        sessionId,
        new Date().toISOString(),
      );
      const chunks = this.sql("SELECT id, hash FROM chunks WHERE session_id = ?").all(sessionId) as {
        id: number;
        hash: string;
      }[];
      const removed = this.removeChunkGraph(chunks.map((c) => c.id));
      for (const c of chunks) {
        this.sql("DELETE FROM turns WHERE chunk_id = ?").run(c.id);
        this.sql("DELETE FROM llm_cache WHERE chunk_hash = ?").run(c.hash);
        this.sql("DELETE FROM chunks WHERE id = ?").run(c.id);
      }
      this.sql("DELETE FROM summaries WHERE session_id = ?").run(sessionId);
      this.bumpGeneration();
      return { chunks: chunks.length, ...removed };
    });
    // A reader holding an old snapshot (a running `serve`) can keep this from truncating; it then
    // happens at a later checkpoint. It does not throw for that.
    this.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    return result;
  }

  async forgetChunk(chunkId: number, rewrite: SummaryRewrite): Promise<ChunkForgetResult | undefined> {
    // As in forgetSession: the chunk's text must leave the file, not linger in free pages.
    this.db.run("PRAGMA secure_delete = ON");
    const result = this.guarded(() => {
      const chunk = this.sql("SELECT hash, session_id, text FROM chunks WHERE id = ?").get(chunkId) as
        | { hash: string; session_id: string; text: string }
        | undefined;
      if (!chunk) return undefined;
      const uuids = (
        this.sql("SELECT uuid FROM turns WHERE chunk_id = ? ORDER BY ord").all(chunkId) as { uuid: string }[]
      ).map((t) => t.uuid);
      const kept = (
        this.sql("SELECT text FROM chunks WHERE session_id = ? AND id != ?").all(
          chunk.session_id,
          chunkId,
        ) as {
          text: string;
        }[]
      ).map((c) => c.text);
      const removed = this.removeChunkGraph([chunkId]);
      const at = new Date().toISOString();
      const remember = this.sql("INSERT OR IGNORE INTO forgotten_records(uuid, at) VALUES (?, ?)");
      for (const uuid of uuids) remember.run(uuid, at);
      this.sql("DELETE FROM turns WHERE chunk_id = ?").run(chunkId);
      this.sql("DELETE FROM llm_cache WHERE chunk_hash = ?").run(chunk.hash);
      this.sql("DELETE FROM chunks WHERE id = ?").run(chunkId);
      let summaryLines = 0;
      const lineCount = (text: string) => (text.trim() ? text.trim().split("\n").length : 0);
      for (const row of this.sql("SELECT id, text FROM summaries WHERE session_id = ?").all(
        chunk.session_id,
      ) as {
        id: number;
        text: string;
      }[]) {
        const text = rewrite(row.text, chunk.text, kept);
        if (text === row.text) continue;
        summaryLines += Math.max(0, lineCount(row.text) - lineCount(text));
        if (text.trim()) this.sql("UPDATE summaries SET text = ? WHERE id = ?").run(text, row.id);
        else this.sql("DELETE FROM summaries WHERE id = ?").run(row.id);
      }
      this.bumpGeneration();
      return { chunks: 1, ...removed, sessionId: chunk.session_id, uuids, summaryLines };
    });
    if (result) this.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    return result;
  }

  async replaceSummaryLine(sessionId: string, line: string, replacement: string): Promise<number> {
    // As in forgetSession: the corrected text must leave the file, not linger in free pages.
    this.db.run("PRAGMA secure_delete = ON");
    const changed = this.guarded(() => {
      let entries = 0;
      const update = this.sql("UPDATE summaries SET text = ? WHERE id = ?");
      for (const row of this.sql("SELECT id, text FROM summaries WHERE session_id = ?").all(sessionId) as {
        id: number;
        text: string;
      }[]) {
        const lines = row.text.split("\n");
        const at = lines.indexOf(line);
        if (at < 0) continue;
        lines[at] = replacement;
        update.run(lines.join("\n"), row.id);
        entries++;
      }
      if (entries) this.bumpGeneration();
      return entries;
    });
    if (changed) this.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    return changed;
  }

  async summaries(): Promise<SummaryEntry[]> {
    return this.summaryRows(
      "SELECT id, session_id, date, ts, text, source FROM summaries ORDER BY ts, id",
    ).map(({ id: _id, ...entry }) => entry);
  }

  /** The summaries with a row id above `after`, in summaries()' order, each with its row id. */
  summariesAfter(after: number): (SummaryEntry & { id: number })[] {
    return this.summaryRows(
      "SELECT id, session_id, date, ts, text, source FROM summaries WHERE id > ? ORDER BY ts, id",
      after,
    );
  }

  /** The summaries that hold a `Decided:` line, in summaries()' order: the only ones a replaced decision is found among. */
  decisionSummaries(): (SummaryEntry & { id: number })[] {
    return this.summaryRows(
      "SELECT id, session_id, date, ts, text, source FROM summaries WHERE instr(text, 'Decided:') > 0 ORDER BY ts, id",
    );
  }

  /**
   * Stored sessions with their chunk counts and first and last chunk times, newest last chunk first
   * (then by session id), `limit` of them from `offset`; from the chunks' rows, not their text.
   */
  sessionList(
    limit = -1,
    offset = 0,
  ): { sessionId: string; chunks: number; firstTs: string; lastTs: string }[] {
    return this.sql(
      "SELECT session_id AS sessionId, count(*) AS chunks, min(ts) AS firstTs, max(ts) AS lastTs FROM chunks GROUP BY session_id ORDER BY lastTs DESC, session_id LIMIT ? OFFSET ?",
    ).all(limit, offset) as { sessionId: string; chunks: number; firstTs: string; lastTs: string }[];
  }

  /** The summaries of these sessions, in summaries()' order. */
  summariesOf(sessionIds: string[]): SummaryEntry[] {
    const out: SummaryEntry[] = [];
    for (let at = 0; at < sessionIds.length; at += PHRASE_ROWS_A_QUERY)
      out.push(
        ...this.summaryRows(
          "SELECT id, session_id, date, ts, text, source FROM summaries WHERE session_id IN (SELECT value FROM json_each(?)) ORDER BY ts, id",
          JSON.stringify(sessionIds.slice(at, at + PHRASE_ROWS_A_QUERY)),
        ).map(({ id: _id, ...entry }) => entry),
      );
    return out;
  }

  /** The last summary's row id and the latest summary ts (0 and "" when there is none). */
  summaryMarks(): { id: number; ts: string } {
    const row = this.sql("SELECT max(id) AS id, max(ts) AS ts FROM summaries").get() as {
      id: number | null;
      ts: string | null;
    };
    return { id: row.id ?? 0, ts: row.ts ?? "" };
  }

  /** How many times a stored summary was changed or deleted (SUMMARY_TRIGGERS). */
  summaryChanges(): number {
    const row = this.sql("SELECT value FROM meta WHERE key = 'summaries_changed'").get() as {
      value: string;
    } | null;
    return row ? Number(row.value) : 0;
  }

  private summaryRows(query: string, ...params: (number | string)[]): (SummaryEntry & { id: number })[] {
    return (this.sql(query).all(...params) as Record<string, string | number>[]).map((r) => ({
      id: r.id as number,
      sessionId: r.session_id as string,
      date: r.date as string,
      ts: r.ts as string,
      text: r.text as string,
      source: r.source as string,
    }));
  }

  async snapshot(): Promise<StoreSnapshot> {
    return this.db.transaction(() => {
      const generation = this.generation();
      const chunkRows = this.sql(
        "SELECT id, session_id, ts, text, graph_source, model, vector FROM chunks ORDER BY id",
      ).all() as Omit<ChunkRow, "hash">[];
      const { dim, vectors: chunkVectors } = readVectors(chunkRows);
      const turnsOf = new Map<number, Turn[]>();
      for (const t of this.sql(
        "SELECT uuid, chunk_id, role, ts, start, end FROM turns ORDER BY chunk_id, ord",
      ).all() as (Turn & { chunk_id: number })[]) {
        let list = turnsOf.get(t.chunk_id);
        if (!list) turnsOf.set(t.chunk_id, (list = []));
        list.push({ uuid: t.uuid, role: t.role, ts: t.ts, start: t.start, end: t.end });
      }
      const chunks = chunkRows.map((r) => ({
        id: r.id,
        sessionId: r.session_id,
        ts: r.ts,
        text: r.text,
        graphSource: r.graph_source,
        turns: turnsOf.get(r.id) ?? [],
      }));
      const entities = this.sql(
        "SELECT id, phrase, label FROM entities ORDER BY id",
      ).all() as StoreSnapshot["entities"];
      const factRows = this.sql(
        "SELECT id, subject, predicate, object, model, vector FROM facts ORDER BY id",
      ).all() as {
        id: number;
        subject: number;
        predicate: string;
        object: number;
        model: string;
        vector: Uint8Array;
      }[];
      const { dim: factDim, vectors: factVectors } = readVectors(factRows, dim);
      const edgeRows = this.sql("SELECT kind, a, b, weight FROM edges").values() as [
        number,
        number,
        number,
        number,
      ][];
      const edges = {
        kind: new Uint8Array(edgeRows.length),
        a: new Int32Array(edgeRows.length),
        b: new Int32Array(edgeRows.length),
        weight: new Float64Array(edgeRows.length),
      };
      edgeRows.forEach(([kind, a, b, weight], i) => {
        edges.kind[i] = kind;
        edges.a[i] = a;
        edges.b[i] = b;
        edges.weight[i] = weight;
      });
      return {
        generation,
        dim: dim || factDim,
        chunks,
        chunkVectors,
        chunkModels: chunkRows.map((r) => r.model),
        entities,
        facts: factRows.map(({ id, subject, predicate, object }) => ({ id, subject, predicate, object })),
        factVectors,
        factModels: factRows.map((r) => r.model),
        edges,
      };
    })();
  }

  /** This store file's identity (a store rebuilt in its place gets another). */
  storeId(): string {
    return this.meta("store_id") ?? "";
  }

  /** How many times rows were deleted (forget, a replaced chunk graph): marks a persisted snapshot stale. */
  deletions(): number {
    return Number(this.meta("deletions") ?? 0);
  }

  /**
   * The rows added since `marks` (row ids only grow while nothing is deleted), in one read transaction:
   * what a persisted recall snapshot built at `marks` needs to catch up. Undefined when rows were
   * deleted since or the marks are another store file's (the snapshot must be rebuilt from nothing),
   * or when a vector is not of `model`. Marks with no store (`""`) ask for every row.
   */
  snapshotDelta(marks: SnapshotMarks, model: string): SnapshotDelta | undefined {
    return this.db.transaction(() => {
      const deletions = this.deletions();
      const store = this.storeId();
      if (deletions !== marks.deletions || (marks.store !== "" && marks.store !== store)) return undefined;
      const max = (table: string) =>
        (this.sql(`SELECT coalesce(max(id), 0) AS n FROM ${table}`).get() as { n: number }).n;
      const now: SnapshotMarks = {
        chunk: max("chunks"),
        entity: max("entities"),
        fact: max("facts"),
        edge: max("edges"),
        deletions,
        store,
      };
      const foreign = this.sql(
        "SELECT (SELECT count(*) FROM chunks WHERE id > ? AND model != ?) + (SELECT count(*) FROM facts WHERE id > ? AND model != ?) AS n",
      ).get(marks.chunk, model, marks.fact, model) as { n: number };
      if (foreign.n > 0) return undefined;
      const chunkRows = this.sql(
        "SELECT id, session_id, text, graph_source, vector FROM chunks WHERE id > ? ORDER BY id",
      ).all(marks.chunk) as {
        id: number;
        session_id: string;
        text: string;
        graph_source: string;
        vector: Uint8Array;
      }[];
      const { dim, vectors: chunkVectors } = readVectors(chunkRows);
      const turnsOf = new Map<number, { role: "user" | "assistant"; start: number; end: number }[]>();
      for (const t of this.sql(
        "SELECT chunk_id, role, start, end FROM turns WHERE chunk_id > ? ORDER BY chunk_id, ord",
      ).all(marks.chunk) as { chunk_id: number; role: "user" | "assistant"; start: number; end: number }[]) {
        let list = turnsOf.get(t.chunk_id);
        if (!list) turnsOf.set(t.chunk_id, (list = []));
        list.push({ role: t.role, start: t.start, end: t.end });
      }
      const sessionTails = new Map<string, number>();
      const tail = this.sql("SELECT max(id) AS id FROM chunks WHERE session_id = ? AND id <= ?");
      for (const session of new Set(chunkRows.map((r) => r.session_id))) {
        const row = tail.get(session, marks.chunk) as { id: number | null };
        if (row.id !== null) sessionTails.set(session, row.id);
      }
      const factRows = this.sql(
        `SELECT f.id, f.subject, f.object, s.label || ' ' || f.predicate || ' ' || o.label AS text, f.vector
         FROM facts f JOIN entities s ON s.id = f.subject JOIN entities o ON o.id = f.object WHERE f.id > ? ORDER BY f.id`,
      ).all(marks.fact) as {
        id: number;
        subject: number;
        object: number;
        text: string;
        vector: Uint8Array;
      }[];
      const { dim: factDim, vectors: factVectors } = readVectors(factRows, dim);
      // Streamed into typed arrays: a large-vocabulary store has millions of edges, and one object (or
      // row array) per edge made the end of a full index its peak of memory.
      const count = (
        this.sql("SELECT count(*) AS n FROM edges WHERE id > ?").get(marks.edge) as { n: number }
      ).n;
      const edges = {
        ids: new Int32Array(count),
        kind: new Uint8Array(count),
        a: new Int32Array(count),
        b: new Int32Array(count),
        weight: new Float64Array(count),
      };
      let e = 0;
      for (const row of this.sql("SELECT id, kind, a, b, weight FROM edges WHERE id > ? ORDER BY id").iterate(
        marks.edge,
      ) as IterableIterator<{ id: number; kind: number; a: number; b: number; weight: number }>) {
        edges.ids[e] = row.id;
        edges.kind[e] = row.kind;
        edges.a[e] = row.a;
        edges.b[e] = row.b;
        edges.weight[e++] = row.weight;
      }
      // An earlier edge changes weight only when a new chunk adds to it (a fact edge), recorded in edge_sources.
      const weights = this.sql(
        // By edge_sources' chunk index: planned from edges, SQLite walked every earlier edge (114 ms at
        // 4× LoCoMo for a run with nothing new).
        "SELECT e.id AS id, e.weight AS weight FROM (SELECT DISTINCT edge_id FROM edge_sources INDEXED BY edge_sources_chunk WHERE chunk_id > ?) s CROSS JOIN edges e ON e.id = s.edge_id WHERE s.edge_id <= ?",
      ).all(marks.chunk, marks.edge) as { id: number; weight: number }[];
      // A synonym edge changes weight when a newcomer pushes it out of both ends' lists, or brings it back.
      weights.push(
        ...(this.sql(
          "SELECT c.edge_id AS id, e.weight AS weight FROM synonym_changes c JOIN edges e ON e.id = c.edge_id WHERE c.chunk > ? AND c.edge_id <= ? ORDER BY c.edge_id",
        ).all(marks.chunk, marks.edge) as { id: number; weight: number }[]),
      );
      return {
        generation: this.generation(),
        marks: now,
        dim: dim || factDim,
        chunks: chunkRows.map((r) => ({
          id: r.id,
          sessionId: r.session_id,
          text: r.text,
          graphSource: r.graph_source,
          turns: turnsOf.get(r.id) ?? [],
        })),
        chunkVectors,
        sessionTails,
        entityIds: (
          this.sql("SELECT id FROM entities WHERE id > ? ORDER BY id").values(marks.entity) as [number][]
        ).map(([id]) => id),
        facts: factRows.map(({ id, subject, object, text }) => ({ id, subject, object, text })),
        factVectors,
        edges,
        weights,
      };
    })();
  }

  /**
   * Every row a recall snapshot holds, handed to `visit` in ascending id order and in slices of at most
   * `slice` chunks or facts, inside one read transaction: a snapshot built from nothing then never holds
   * all rows, nor an object per row, at once (the 100,000-record store's build from one delta of every
   * row peaked at 16 GB). Undefined when a vector is not of `model` (as snapshotDelta).
   */
  snapshotRows(
    model: string,
    visit: SnapshotRowVisitor,
    slice = 4096,
  ): { generation: number; marks: SnapshotMarks } | undefined {
    return this.db.transaction(() => {
      const foreign = this.sql(
        "SELECT (SELECT count(*) FROM chunks WHERE model != ?1) + (SELECT count(*) FROM facts WHERE model != ?1) AS n",
      ).get(model) as { n: number };
      if (foreign.n > 0) return undefined;
      const max = (table: string) =>
        (this.sql(`SELECT coalesce(max(id), 0) AS n FROM ${table}`).get() as { n: number }).n;
      const count = (table: string) =>
        (this.sql(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      const marks: SnapshotMarks = {
        chunk: max("chunks"),
        entity: max("entities"),
        fact: max("facts"),
        edge: max("edges"),
        deletions: this.deletions(),
        store: this.storeId(),
      };
      visit.counts({ chunks: count("chunks"), facts: count("facts"), edges: count("edges") });
      const chunkSlice = this.sql(
        "SELECT id, session_id, text, graph_source, vector FROM chunks WHERE id > ? ORDER BY id LIMIT ?",
      );
      const turnSlice = this.sql(
        "SELECT chunk_id, role, start, end FROM turns WHERE chunk_id BETWEEN ? AND ? ORDER BY chunk_id, ord",
      );
      for (let after = 0; ; ) {
        const rows = chunkSlice.all(after, slice) as {
          id: number;
          session_id: string;
          text: string;
          graph_source: string;
          vector: Uint8Array;
        }[];
        if (!rows.length) break;
        const last = rows[rows.length - 1].id;
        const turnsOf = new Map<number, SnapshotDelta["chunks"][number]["turns"]>();
        for (const t of turnSlice.all(rows[0].id, last) as {
          chunk_id: number;
          role: "user" | "assistant";
          start: number;
          end: number;
        }[]) {
          let list = turnsOf.get(t.chunk_id);
          if (!list) turnsOf.set(t.chunk_id, (list = []));
          list.push({ role: t.role, start: t.start, end: t.end });
        }
        const { dim, vectors } = readVectors(rows);
        visit.chunks(
          rows.map((r) => ({
            id: r.id,
            sessionId: r.session_id,
            text: r.text,
            graphSource: r.graph_source,
            turns: turnsOf.get(r.id) ?? [],
          })),
          vectors,
          dim,
        );
        after = last;
      }
      visit.entities(
        Int32Array.from(this.sql("SELECT id FROM entities ORDER BY id").values() as [number][], ([id]) => id),
      );
      const factSlice = this.sql(
        `SELECT f.id, f.subject, f.object, s.label || ' ' || f.predicate || ' ' || o.label AS text, f.vector
         FROM facts f JOIN entities s ON s.id = f.subject JOIN entities o ON o.id = f.object WHERE f.id > ? ORDER BY f.id LIMIT ?`,
      );
      for (let after = 0; ; ) {
        const rows = factSlice.all(after, slice) as {
          id: number;
          subject: number;
          object: number;
          text: string;
          vector: Uint8Array;
        }[];
        if (!rows.length) break;
        const { dim, vectors } = readVectors(rows);
        visit.facts(
          rows.map(({ id, subject, object, text }) => ({ id, subject, object, text })),
          vectors,
          dim,
        );
        after = rows[rows.length - 1].id;
      }
      const edges = count("edges");
      const out = {
        ids: new Int32Array(edges),
        kind: new Uint8Array(edges),
        a: new Int32Array(edges),
        b: new Int32Array(edges),
        weight: new Float64Array(edges),
      };
      let e = 0;
      for (const row of this.sql(
        "SELECT id, kind, a, b, weight FROM edges ORDER BY id",
      ).iterate() as IterableIterator<{
        id: number;
        kind: number;
        a: number;
        b: number;
        weight: number;
      }>) {
        out.ids[e] = row.id;
        out.kind[e] = row.kind;
        out.a[e] = row.a;
        out.b[e] = row.b;
        out.weight[e++] = row.weight;
      }
      visit.edges(out);
      return { generation: this.generation(), marks };
    })();
  }

  /** A session's chunks, with their turns, in row id order (browsing a session). */
  chunksOfSession(sessionId: string): StoreSnapshot["chunks"] {
    const ids = this.sql("SELECT id FROM chunks WHERE session_id = ? ORDER BY id").values(sessionId) as [
      number,
    ][];
    return this.chunksById(ids.map(([id]) => id));
  }

  /** The chunk with row id `id`, with its turns; undefined when no chunk has it. */
  chunkById(id: number): StoreSnapshot["chunks"][number] | undefined {
    return this.sql("SELECT 1 FROM chunks WHERE id = ?").get(id) ? this.chunksById([id])[0] : undefined;
  }

  /** Chunks by row id, with their turns, in the order asked (recall reads its hits' text this way). */
  chunksById(ids: number[]): StoreSnapshot["chunks"] {
    const chunk = this.sql("SELECT id, session_id, ts, text, graph_source FROM chunks WHERE id = ?");
    const turns = this.sql("SELECT uuid, role, ts, start, end FROM turns WHERE chunk_id = ? ORDER BY ord");
    return ids.map((id) => {
      const r = chunk.get(id) as {
        id: number;
        session_id: string;
        ts: string;
        text: string;
        graph_source: GraphSource;
      } | null;
      if (!r) throw new StoreCorruptError(`${this.path}: chunk ${id} is missing`);
      return {
        id: r.id,
        sessionId: r.session_id,
        ts: r.ts,
        text: r.text,
        graphSource: r.graph_source,
        turns: turns.all(id) as Turn[],
      };
    });
  }

  /** Chunks, sessions and the last index run alone: status's other counts read every edge. */
  counts(): { chunks: number; sessions: number; lastIndexed: string | null } {
    const count = (sql: string) => (this.sql(sql).get() as { n: number }).n;
    return {
      chunks: count("SELECT count(*) AS n FROM chunks"),
      sessions: count("SELECT count(DISTINCT session_id) AS n FROM chunks"),
      lastIndexed: this.meta("last_indexed") ?? null,
    };
  }

  async status(): Promise<StoreStatus> {
    const counted = this.rowCounts() ?? this.countedRows();
    const { chunks, sessions, lastIndexed } = this.counts();
    return {
      chunks,
      sessions,
      entities: counted.entities,
      facts: counted.facts,
      edges: {
        fact: counted[`edges:${EDGE_KIND.fact}`],
        context: counted[`edges:${EDGE_KIND.context}`],
        synonym: counted[`edges:${EDGE_KIND.synonym}`],
      },
      lastIndexed,
      llmUsage: await this.usage(),
      llmUsageThisMonth: this.usageOfMonth(new Date().toISOString().slice(0, 7)),
      pendingLlm: counted["chunks:llm-pending"],
    };
  }

  /** The triggers' counts; undefined for a store whose counts were never filled (or made before them). */
  private rowCounts(): Record<string, number> | undefined {
    const table = this.db
      .query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'row_counts'")
      .get();
    if (!table) return undefined;
    const rows = this.sql("SELECT name, n FROM row_counts").values() as [string, number][];
    const found = new Map(rows);
    if (!COUNTED.every((name) => found.has(name))) return undefined;
    return Object.fromEntries(COUNTED.map((name) => [name, found.get(name)!]));
  }

  /** The same counts by scanning the tables. A dropped synonym edge keeps its row at weight 0 (see addSynonyms). */
  countedRows(): Record<string, number> {
    const count = (sql: string, ...args: (string | number)[]) =>
      (this.sql(sql).get(...args) as { n: number }).n;
    return {
      entities: count("SELECT count(*) AS n FROM entities"),
      facts: count("SELECT count(*) AS n FROM facts"),
      ...Object.fromEntries(
        Object.values(EDGE_KIND).map((kind) => [
          `edges:${kind}`,
          count("SELECT count(*) AS n FROM edges WHERE kind = ? AND weight > 0", kind),
        ]),
      ),
      "chunks:llm-pending": count("SELECT count(*) AS n FROM chunks WHERE graph_source = 'llm-pending'"),
    };
  }

  /** Fills row_counts from a scan, once (the indexer; a store made before the triggers, or in a new store). */
  fillRowCounts(): void {
    if (this.rowCounts()) return;
    this.guarded(() => {
      const set = this.sql("INSERT OR REPLACE INTO row_counts(name, n) VALUES (?, ?)");
      for (const [name, n] of Object.entries(this.countedRows())) set.run(name, n);
    });
  }

  /** Calls and tokens of one month (`YYYY-MM`); none for a store made before months were counted. */
  private usageOfMonth(month: string): StoreStatus["llmUsage"] {
    const counted = this.db
      .query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'llm_usage_months'")
      .get();
    if (!counted) return [];
    return this.usageRows("llm_usage_months WHERE month = ?", month);
  }

  async usage(): Promise<StoreStatus["llmUsage"]> {
    return this.usageRows("llm_usage");
  }

  /** The usage rows of `from` (a table, with a WHERE clause over `params` if need be), by provider and model. */
  private usageRows(from: string, ...params: string[]): StoreStatus["llmUsage"] {
    return (
      this.sql(
        `SELECT provider, model, calls, input_tokens, output_tokens FROM ${from} ORDER BY provider, model`,
      ).all(...params) as Record<string, string & number>[]
    ).map((r) => ({
      provider: r.provider,
      model: r.model,
      calls: r.calls,
      inputTokens: r.input_tokens,
      outputTokens: r.output_tokens,
    }));
  }

  /** UsageSink: every LLM call's tokens, summed per provider and model, in all and per month. */
  record(usage: LlmUsage): void {
    this.sql(
      `INSERT INTO llm_usage(provider, model, calls, input_tokens, output_tokens) VALUES (?, ?, 1, ?, ?)
       ON CONFLICT(provider, model) DO UPDATE SET calls = calls + 1, input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens`,
    ).run(usage.provider, usage.model, usage.inputTokens, usage.outputTokens);
    this.sql(
      `INSERT INTO llm_usage_months(month, provider, model, calls, input_tokens, output_tokens) VALUES (?, ?, ?, 1, ?, ?)
       ON CONFLICT(month, provider, model) DO UPDATE SET calls = calls + 1, input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens`,
    ).run(
      new Date().toISOString().slice(0, 7),
      usage.provider,
      usage.model,
      usage.inputTokens,
      usage.outputTokens,
    );
  }

  close(): void {
    for (const s of this.statements.values()) s.finalize();
    this.statements.clear();
    this.db.close();
  }
}
