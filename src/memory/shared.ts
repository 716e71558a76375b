/**
 * A project's memory shared by a team (`storage: postgres`): every machine indexes into its own local
 * SQLite store as before (fast, crash-safe, rebuilt from chats.jsonl), then pushes the run's new chunks
 * to the shared store by natural keys (chunk hash, turn uuid, phrase, fact triple), so machines pushing
 * at once lose and duplicate nothing and a push cut off is redone whole by the next run. Recall, status
 * and the prelude read the shared store through a local mirror (`shared.db`, a SQLite store holding the
 * shared rows under their shared row ids) that is pulled by row id since its marks, so a recall reads
 * only what changed since the last one, and the recall arrays (`shared-recall.bin`) are built over it
 * exactly as over the local store.
 */
import { Database } from "bun:sqlite";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { logError } from "../home/log.ts";
import {
  mirrorLockPath,
  mirrorSnapshotPath,
  mirrorStorePath,
  pushStatePath,
  snapshotFiles,
  storePath,
  summaryPath,
} from "../home/paths.ts";
import { TABLES } from "../store/migrate.ts";
import {
  type ChunkRow,
  type Connect,
  GRAPH_TABLES,
  type MirrorMarks,
  type RemoteStore,
  type RemoteTarget,
} from "../store/remote.ts";
import { factKey, type SqliteMemoryStore } from "../store/sqlite.ts";
import type {
  IndexBatch,
  NewChunk,
  StoreStatus,
  SummaryEntry,
  SummaryRewrite,
  SynonymEdge,
  Turn,
} from "../store/types.ts";
import { tryLock, waitForLock } from "./lock.ts";
import { writeSummaryFile } from "./summary.ts";

/** The mirror's recall snapshot and its additions, removed: the next refresh builds them anew. */
function removeSnapshotFiles(snapshot: string): void {
  for (const file of snapshotFiles(snapshot)) rmSync(file, { force: true });
}

/** Chunks per pushed batch (one transaction in the shared store), as the indexer's batches. */
const PUSH_BATCH_CHUNKS = 256;
/** How long the indexer and forget wait for another pull of the mirror (recall does not wait). */
const MIRROR_LOCK_WAIT_MS = 15_000;

/** The shared store the project's config names, or undefined for `storage: local`. Throws one line on missing settings. */
export async function sharedTarget(projectRoot: string): Promise<RemoteTarget | undefined> {
  const { readProjectConfig, configPath } = await import("../project/config.ts");
  if (!existsSync(configPath(projectRoot))) return undefined;
  const config = readProjectConfig(projectRoot);
  if (config.storage === "local") return undefined;
  const { storageTarget } = await import("../store/settings.ts");
  return storageTarget(config.storage, config, projectRoot) as RemoteTarget;
}

export interface SharedOptions {
  /** How to reach the shared store (tests: a PGlite client); default the target's driver. */
  connect?: Connect;
}

/** Opens the configured shared store (`reader`: no schema migration, no LLM cache). */
export async function openShared(
  projectRoot: string,
  target: RemoteTarget,
  options: SharedOptions & { reader?: boolean; llmCache?: boolean } = {},
): Promise<RemoteStore> {
  const [{ openRemoteStore }, { writerName }] = await Promise.all([
    import("../store/remote.ts"),
    import("../store/settings.ts"),
  ]);
  return openRemoteStore(target, {
    writer: writerName(projectRoot),
    connect: options.connect,
    reader: options.reader,
    llmCache: options.llmCache,
  });
}

// ---------------------------------------------------------------------------------------------------
// Push: the local store's new chunks into the shared store.

/** What this machine pushed: local chunk and summary ids up to these, from this local store into that shared one. */
interface PushState {
  local: string;
  remote: string;
  chunk: number;
  summary: number;
  /** Local edge id up to which synonym edges were sent. */
  edge: number;
}

function readPushState(projectRoot: string): PushState | undefined {
  try {
    const state = JSON.parse(readFileSync(pushStatePath(projectRoot), "utf8")) as PushState;
    return typeof state.chunk === "number" ? { ...state, edge: state.edge ?? 0 } : undefined;
  } catch {
    return undefined;
  }
}

function writePushState(projectRoot: string, state: PushState): void {
  const file = pushStatePath(projectRoot);
  writeFileSync(`${file}.${process.pid}.tmp`, JSON.stringify(state));
  renameSync(`${file}.${process.pid}.tmp`, file);
}

/** The local chunk id pushing starts after: 0 when the local store or the shared store is another one than last time. */
function pushedUpTo(projectRoot: string, localId: string, remoteId: string): PushState {
  const state = readPushState(projectRoot);
  if (state && state.local === localId && state.remote === remoteId) return state;
  return { local: localId, remote: remoteId, chunk: 0, summary: 0, edge: 0 };
}

/** Local chunks not pushed yet (status): those above the push mark, when it is this store's. */
export function unpushedChunks(projectRoot: string, localId: string): number {
  const path = storePath(projectRoot);
  if (!existsSync(path)) return 0;
  const state = readPushState(projectRoot);
  const from = state && state.local === localId ? state.chunk : 0;
  const db = new Database(path, { readonly: true });
  try {
    return (db.query("SELECT count(*) AS n FROM chunks WHERE id > ?").get(from) as { n: number }).n;
  } finally {
    db.close();
  }
}

export interface PushResult {
  /** Chunks sent (a chunk the shared store already held adds nothing there). */
  chunks: number;
  batches: number;
  /** Sessions forgotten here and now forgotten in the shared store too. */
  forgottenThere: number;
  /** Sessions forgotten on another machine, now forgotten here too. */
  forgottenHere: number;
  /** Chunks deleted one by one here (their records), now deleted in the shared store too. */
  chunksForgottenThere: number;
  /** Chunks deleted one by one on another machine, now deleted here too. */
  chunksForgottenHere: number;
}

/** Bytes of a float32 vector BLOB as a Float32Array (copied: the BLOB's buffer may be unaligned). */
function vectorOf(blob: Uint8Array): Float32Array {
  const copy = new Uint8Array(blob);
  return new Float32Array(copy.buffer, 0, copy.byteLength / 4);
}

/**
 * Pushes the local store's chunks above the push mark, in id order, as batches the shared store applies
 * by natural keys; each chunk's graph contribution is read back from the local rows (its context edges'
 * phrases, its facts) and the synonym edges the local store added since go with the last batch. One
 * machine's shared store is therefore its local graph; synonym edges between phrases only different
 * machines hold are not computed (each machine computes its own). Sessions forgotten on either side are
 * forgotten on the other first, and never pushed.
 */
export async function pushToShared(
  projectRoot: string,
  local: SqliteMemoryStore,
  remote: RemoteStore,
  forgetHere: (sessionId: string) => Promise<void>,
): Promise<PushResult> {
  const result: PushResult = {
    chunks: 0,
    batches: 0,
    forgottenThere: 0,
    forgottenHere: 0,
    chunksForgottenThere: 0,
    chunksForgottenHere: 0,
  };
  const [here, there] = await Promise.all([local.forgottenSessions(), remote.forgottenSessions()]);
  for (const id of here)
    if (!there.has(id)) {
      await remote.forgetSession(id);
      result.forgottenThere++;
    }
  for (const id of there)
    if (!here.has(id) && (await local.hasSession(id))) {
      await forgetHere(id);
      result.forgottenHere++;
    }
  // Chunks deleted one by one here (the web page's Delete): deleted there too.
  if (remote.forgottenRecords && remote.forgetRecords) {
    const db = new Database(storePath(projectRoot), { readonly: true });
    let records: string[];
    try {
      records = (db.query("SELECT uuid FROM forgotten_records").all() as { uuid: string }[]).map(
        (r) => r.uuid,
      );
    } finally {
      db.close();
    }
    const done = await remote.forgottenRecords();
    const missing = records.filter((uuid) => !done.has(uuid));
    const { summaryWithout, forgetChunkHere } = await import("./forget-chunk.ts");
    if (missing.length) result.chunksForgottenThere = await remote.forgetRecords(missing, summaryWithout);
    // Deleted on another machine: this machine's chunks holding those records go too (store, chat log).
    const mine = new Set(records);
    const elsewhere = [...done].filter((uuid) => !mine.has(uuid));
    if (elsewhere.length) {
      const reader = new Database(storePath(projectRoot), { readonly: true });
      let ids: number[];
      try {
        ids = (
          reader
            .query("SELECT DISTINCT chunk_id FROM turns WHERE uuid IN (SELECT value FROM json_each(?))")
            .all(JSON.stringify(elsewhere)) as { chunk_id: number }[]
        ).map((r) => r.chunk_id);
      } finally {
        reader.close();
      }
      for (const id of ids) if (await forgetChunkHere(projectRoot, id)) result.chunksForgottenHere++;
      rememberRecords(projectRoot, elsewhere);
    }
  }
  const forgotten = new Set([...here, ...there]);
  const { store: remoteId } = await remote.marks();
  let state = pushedUpTo(projectRoot, local.storeId(), remoteId);
  const db = new Database(storePath(projectRoot), { readonly: true });
  try {
    const chunkRows = db
      .query(
        "SELECT id, hash, session_id, ts, text, graph_source, model, vector FROM chunks WHERE id > ? ORDER BY id",
      )
      .all(state.chunk) as ChunkRow[];
    const lastSummary =
      (db.query("SELECT max(id) AS id FROM summaries").get() as { id: number | null }).id ?? 0;
    const rows = chunkRows.filter((c) => !forgotten.has(c.session_id));
    // Synonym edges the local store added since the last push, and earlier ones a later batch changed
    // (revived, or dropped to weight 0: synonym_changes), as they are now; sent with the last batch, when
    // both phrases are in the shared store (an edge to a phrase it lacks is skipped there).
    // Two indexed reads (new rows by id, changed rows by synonym_changes' chunk), not a scan of every edge.
    const synonymRows = (where: string, mark: number) =>
      db
        .query(
          `SELECT e.id, x.phrase AS a, y.phrase AS b, e.weight AS score FROM edges e JOIN entities x ON x.id = e.a
           JOIN entities y ON y.id = e.b WHERE e.kind = 2 AND ${where}`,
        )
        .all(mark) as (SynonymEdge & { id: number })[];
    const byId = new Map<number, SynonymEdge>();
    for (const e of [
      ...synonymRows("e.id > ?", state.edge),
      ...synonymRows("e.id IN (SELECT edge_id FROM synonym_changes WHERE chunk > ?)", state.chunk),
    ])
      byId.set(e.id, { a: e.a, b: e.b, score: e.score });
    const changedSynonyms = [...byId.entries()].sort((x, y) => x[0] - y[0]).map(([, e]) => e);
    const synonyms = changedSynonyms.filter((e) => e.score > 0);
    const synonymsDropped = changedSynonyms.filter((e) => e.score <= 0).map(({ a, b }) => ({ a, b }));
    const lastEdge = (db.query("SELECT max(id) AS id FROM edges").get() as { id: number | null }).id ?? 0;
    const done = { chunk: chunkRows.at(-1)?.id ?? state.chunk, summary: lastSummary, edge: lastEdge };
    if (!rows.length) {
      // Nothing new to send but synonym edges (a forget elsewhere let a phrase keep more neighbours).
      if (changedSynonyms.length)
        await remote.writeBatch({
          model: "",
          chunks: [],
          entityVectors: new Map(),
          factVectors: new Map(),
          synonyms,
          synonymsDropped,
          summaries: [],
        });
      writePushState(projectRoot, { ...state, ...done });
      return result;
    }
    const from = state.chunk;
    const turnsOf = new Map<number, Turn[]>();
    for (const t of db
      .query(
        `SELECT uuid, chunk_id, role, ts, start, "end" FROM turns WHERE chunk_id > ? ORDER BY chunk_id, ord`,
      )
      .all(from) as (Turn & { chunk_id: number })[]) {
      let list = turnsOf.get(t.chunk_id);
      if (!list) turnsOf.set(t.chunk_id, (list = []));
      list.push({ uuid: t.uuid, role: t.role, ts: t.ts, start: t.start, end: t.end });
    }
    const entities = new Map<number, { phrase: string; label: string; vector: Float32Array }>();
    for (const e of db
      .query(
        `SELECT id, phrase, label, vector FROM entities WHERE id IN (SELECT b FROM edges WHERE kind = 1 AND a > ?)`,
      )
      .all(from) as { id: number; phrase: string; label: string; vector: Uint8Array }[])
      entities.set(e.id, { phrase: e.phrase, label: e.label, vector: vectorOf(e.vector) });
    const mentions = new Map<number, number[]>();
    for (const e of db.query("SELECT a, b FROM edges WHERE kind = 1 AND a > ? ORDER BY id").all(from) as {
      a: number;
      b: number;
    }[]) {
      let list = mentions.get(e.a);
      if (!list) mentions.set(e.a, (list = []));
      list.push(e.b);
    }
    const factsOf = new Map<
      number,
      { subject: number; predicate: string; object: number; vector: Float32Array }[]
    >();
    for (const f of db
      .query(
        `SELECT s.chunk_id, f.subject, f.predicate, f.object, f.vector FROM fact_sources s JOIN facts f ON f.id = s.fact_id
         WHERE s.chunk_id > ? ORDER BY s.chunk_id, f.id`,
      )
      .all(from) as {
      chunk_id: number;
      subject: number;
      predicate: string;
      object: number;
      vector: Uint8Array;
    }[]) {
      let list = factsOf.get(f.chunk_id);
      if (!list) factsOf.set(f.chunk_id, (list = []));
      list.push({ subject: f.subject, predicate: f.predicate, object: f.object, vector: vectorOf(f.vector) });
    }
    const summaries = (
      db
        .query("SELECT id, session_id, date, ts, text, source FROM summaries WHERE id > ? ORDER BY id")
        .all(state.summary) as (SummaryEntry & { id: number; session_id: string })[]
    ).map((s) => ({ sessionId: s.session_id, date: s.date, ts: s.ts, text: s.text, source: s.source }));

    const lastChunkOf = new Map(rows.map((c, i) => [c.session_id, i]));
    for (let start = 0; start < rows.length; ) {
      let end = start;
      while (end < rows.length && end - start < PUSH_BATCH_CHUNKS && rows[end].model === rows[start].model)
        end++;
      const part = rows.slice(start, end);
      const entityVectors = new Map<string, Float32Array>();
      const factVectors = new Map<string, Float32Array>();
      const chunks: NewChunk[] = part.map((c) => {
        const phrases = (mentions.get(c.id) ?? []).map((id) => entities.get(id)!);
        for (const p of phrases) entityVectors.set(p.phrase, p.vector);
        const facts = (factsOf.get(c.id) ?? []).map((f) => {
          const subject = entities.get(f.subject)!.phrase;
          const object = entities.get(f.object)!.phrase;
          factVectors.set(factKey(subject, f.predicate, object), f.vector);
          return { subject, predicate: f.predicate, object };
        });
        return {
          hash: c.hash,
          sessionId: c.session_id,
          ts: c.ts,
          text: c.text,
          turns: turnsOf.get(c.id) ?? [],
          vector: vectorOf(c.vector),
          graphSource: c.graph_source,
          graph: { entities: phrases.map(({ phrase, label }) => ({ phrase, label })), facts },
        };
      });
      // A session's summary entries travel with the batch holding its last chunk pushed now.
      const sessions = new Set(
        part.filter((c) => (lastChunkOf.get(c.session_id) ?? -1) < end).map((c) => c.session_id),
      );
      const batch: IndexBatch = {
        model: part[0].model,
        chunks,
        entityVectors,
        factVectors,
        synonyms: end === rows.length ? synonyms : [],
        synonymsDropped: end === rows.length ? synonymsDropped : [],
        summaries: summaries.filter((s) => sessions.has(s.sessionId)),
      };
      await remote.writeBatch(batch);
      result.chunks += part.length;
      result.batches++;
      state = { ...state, chunk: part.at(-1)!.id };
      writePushState(projectRoot, state);
      start = end;
    }
    writePushState(projectRoot, { ...state, ...done });
    return result;
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// Pull: the shared store's new rows into the local mirror.

/** The mirror's record of what it was pulled at (in its meta table). */
function mirrorMarks(db: Database): MirrorMarks | undefined {
  const row = db.query("SELECT value FROM meta WHERE key = 'remote_marks'").get() as { value: string } | null;
  return row ? (JSON.parse(row.value) as MirrorMarks) : undefined;
}

function insertRows(db: Database, table: string, rows: Record<string, unknown>[]): void {
  if (!rows.length) return;
  const spec = TABLES.find((t) => t.name === table)!;
  const names = spec.columns.map(([c]) => c);
  const insert = db.prepare(
    `INSERT OR IGNORE INTO ${table}(${names.map((c) => `"${c}"`).join(", ")}) VALUES (${names.map(() => "?").join(", ")})`,
  );
  try {
    for (const row of rows)
      insert.run(
        ...(names.map((c) => {
          const v = row[c];
          return v instanceof Uint8Array ? v : (v ?? null);
        }) as (string | number | Uint8Array | null)[]),
      );
  } finally {
    insert.finalize();
  }
}

/** The sessions the local store remembers as forgotten. */
function localForgotten(projectRoot: string): Set<string> {
  const path = storePath(projectRoot);
  if (!existsSync(path)) return new Set();
  const db = new Database(path, { readonly: true });
  try {
    return new Set(
      (db.query("SELECT session_id FROM forgotten").all() as { session_id: string }[]).map(
        (r) => r.session_id,
      ),
    );
  } finally {
    db.close();
  }
}

export type PullResult = "current" | "pulled" | "rebuilt" | "busy";

/**
 * Brings the mirror up to date: nothing when the shared store's marks are the mirror's, the rows above
 * its marks otherwise, and a new mirror file when the shared store is another one or deleted rows
 * (forget, a replaced LLM graph) — the file's new identity makes the recall arrays rebuild too. Then
 * the mirror's recall arrays and summary.md follow. One puller at a time (a lock); a busy one skips.
 */
export async function pullMirror(
  projectRoot: string,
  remote: RemoteStore,
  currentModel: () => Promise<string>,
  options: { wait?: boolean } = {},
): Promise<PullResult> {
  const lock = options.wait
    ? await waitForLock(mirrorLockPath(projectRoot), "pull the shared store", MIRROR_LOCK_WAIT_MS)
    : tryLock(mirrorLockPath(projectRoot), "pull the shared store");
  if (!lock) return "busy";
  try {
    const path = mirrorStorePath(projectRoot);
    const { SqliteMemoryStore } = await import("../store/sqlite.ts");
    let since: MirrorMarks | undefined;
    let forgotten = new Set<string>();
    if (existsSync(path)) {
      try {
        const db = new Database(path, { readonly: true });
        try {
          since = mirrorMarks(db);
          forgotten = new Set(
            (db.query("SELECT session_id FROM forgotten").all() as { session_id: string }[]).map(
              (r) => r.session_id,
            ),
          );
        } finally {
          db.close();
        }
      } catch (error) {
        // A damaged mirror is only a cache: pulled whole again.
        logError("shared store: local mirror unreadable, pulled again", error, projectRoot);
        since = undefined;
      }
    }
    // Sessions forgotten here while the shared store was unreachable: kept out until the push forgets them there.
    const forgottenHere = localForgotten(projectRoot);
    for (const id of forgottenHere) forgotten.add(id);
    const marks = await remote.marks();
    if (
      since &&
      since.store === marks.store &&
      since.generation === marks.generation &&
      since.deletions === marks.deletions
    )
      return "current";
    const changes = await remote.changesSince(since);
    const target = changes.whole ? `${path}.new` : path;
    if (changes.whole) {
      for (const suffix of ["", "-wal", "-shm"]) rmSync(target + suffix, { force: true });
      new SqliteMemoryStore(target).close();
      forgotten = new Set(forgottenHere);
    }
    let synonymsChanged = false;
    const db = new Database(target, { readwrite: true, create: false });
    try {
      db.run("PRAGMA busy_timeout = 5000");
      db.transaction(() => {
        for (const r of changes.rows.forgotten) forgotten.add(String(r.session_id));
        for (const table of GRAPH_TABLES) insertRows(db, table, changes.rows[table]);
        // Earlier edges whose weight changed: a fact edge a new chunk added to (found again through
        // edge_sources), or a synonym edge revived or dropped, noted in synonym_changes as the indexer
        // notes its own, so the recall arrays' extension picks it up.
        const setWeight = db.prepare("UPDATE edges SET weight = ? WHERE id = ? RETURNING kind");
        const noteSynonym = db.prepare(
          "INSERT OR REPLACE INTO synonym_changes(edge_id, chunk) VALUES (?, ?)",
        );
        for (const w of changes.weights) {
          const row = setWeight.get(w.weight, w.id) as { kind: number } | null;
          if (row?.kind === 2) {
            noteSynonym.run(w.id, changes.marks.chunk);
            synonymsChanged = true;
          }
        }
        setWeight.finalize();
        noteSynonym.finalize();
        // Summaries are edited in place (a person's correction): taken whole. A session forgotten here
        // and not yet in the shared store (it was down) stays out.
        db.run("DELETE FROM summaries");
        insertRows(
          db,
          "summaries",
          changes.rows.summaries.filter((s) => !forgotten.has(String(s.session_id))),
        );
        insertRows(db, "forgotten", changes.rows.forgotten);
        const meta = db.prepare(
          "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        );
        meta.run("remote_marks", JSON.stringify(changes.marks));
        const generation = db.query("SELECT value FROM meta WHERE key = 'generation'").get() as {
          value: string;
        } | null;
        meta.run("generation", String(Number(generation?.value ?? 0) + 1));
        meta.finalize();
      })();
      if (changes.whole) db.run("PRAGMA journal_mode = DELETE");
    } finally {
      db.close();
    }
    if (changes.whole) {
      for (const suffix of ["-wal", "-shm"]) rmSync(path + suffix, { force: true });
      renameSync(target, path);
    }
    // Changes noted at a chunk mark the recall arrays already cover (no new chunk came): rebuilt instead.
    if (changes.whole || (synonymsChanged && !changes.rows.chunks.length))
      removeSnapshotFiles(mirrorSnapshotPath(projectRoot));
    const mirror = new SqliteMemoryStore(path);
    try {
      for (const id of forgottenHere) if (await mirror.hasSession(id)) await mirror.forgetSession(id);
      const { refreshSnapshotFile } = await import("./recall/snapshot-file.ts");
      await refreshSnapshotFile(mirrorSnapshotPath(projectRoot), mirror, currentModel).catch((error) => {
        removeSnapshotFiles(mirrorSnapshotPath(projectRoot));
        logError("shared store: recall snapshot of the mirror not refreshed", error, projectRoot);
      });
      writeSummaryFile(summaryPath(projectRoot), await mirror.summaries());
    } finally {
      mirror.close();
    }
    return changes.whole ? "rebuilt" : "pulled";
  } finally {
    lock.release();
  }
}

const modelId = async () => (await (await import("../embed/source.ts")).loadModel()).id;

/**
 * Long-lived processes (the MCP server) keep one reading connection per shared store, so a warm recall
 * checks the shared store's marks in one round trip instead of connecting each time. A one-shot command
 * closes its connection at once, so it exits as soon as it has answered.
 */
let keepConnections = false;
const readers = new Map<string, Promise<RemoteStore>>();
/** Per mirror file: the shared store's marks it was last found current at, in this process. */
const seenAt = new Map<string, string>();
/**
 * A long-lived process asks the shared store for its marks at most this often: questions in a burst
 * (an agent's several rag_search calls) cost no round trip, and a push shows within a second.
 */
const CHECK_EVERY_MS = 1000;
const checkedAt = new Map<string, number>();

export function keepSharedConnections(): void {
  keepConnections = true;
}

/** Recall's reason for not reading the shared store, logged once per process (not at every question). */
const logged = new Set<string>();
function logOnce(projectRoot: string, error: unknown): void {
  const line = `${projectRoot}\u0000${(error as Error)?.message ?? String(error)}`;
  if (logged.has(line)) return;
  logged.add(line);
  logError("recall: shared store not read, answering from the local mirror", error, projectRoot);
}

/**
 * Recall's refresh of the mirror before it answers. The shared store down or refusing us is not a
 * failure: recall answers from the mirror as last pulled, and errors.log says why.
 */
export async function refreshMirror(projectRoot: string, options: SharedOptions = {}): Promise<void> {
  let target: RemoteTarget | undefined;
  try {
    target = await sharedTarget(projectRoot);
  } catch (error) {
    logOnce(projectRoot, error);
    return;
  }
  if (!target) return;
  const key = `${projectRoot}\u0000${JSON.stringify(target)}`;
  const kept = keepConnections && !options.connect;
  if (
    kept &&
    Date.now() - (checkedAt.get(key) ?? 0) < CHECK_EVERY_MS &&
    existsSync(mirrorStorePath(projectRoot))
  )
    return;
  let opening = kept ? readers.get(key) : undefined;
  if (!opening) {
    opening = openShared(projectRoot, target, { ...options, reader: true });
    if (kept) readers.set(key, opening);
  }
  let remote: RemoteStore | undefined;
  try {
    remote = await opening;
    // The shared store where this process last saw the mirror: nothing to pull, no file to open. (The
    // mirror only ever moves on to the shared store's state; a change made to it here is seen by recall.)
    const mirror = mirrorStorePath(projectRoot);
    const marks = JSON.stringify(await remote.marks());
    if (kept) checkedAt.set(key, Date.now());
    if (seenAt.get(mirror) === marks && existsSync(mirror)) return;
    if ((await pullMirror(projectRoot, remote, modelId)) !== "busy") seenAt.set(mirror, marks);
  } catch (error) {
    // A dropped connection is opened again at the next question.
    if (kept) readers.delete(key);
    if (kept) await remote?.closeAsync().catch(() => {});
    logOnce(projectRoot, error);
  } finally {
    if (!kept) await remote?.closeAsync().catch(() => {});
  }
}

export interface SyncResult {
  push?: PushResult;
  pull?: PullResult;
  /** The one line errors.log got when the shared store could not be reached or refused us. */
  error?: string;
}

/**
 * The indexer's last step: push this run's chunks, then pull everyone's into the mirror. Never throws:
 * a shared store that is down leaves the local index complete, and the next run pushes what is left.
 */
export async function syncShared(
  projectRoot: string,
  local: SqliteMemoryStore,
  forgetHere: (sessionId: string) => Promise<void>,
  options: SharedOptions = {},
): Promise<SyncResult> {
  let remote: RemoteStore | undefined;
  const result: SyncResult = {};
  try {
    const target = await sharedTarget(projectRoot);
    if (!target) return result;
    remote = await openShared(projectRoot, target, { ...options, llmCache: false });
    result.push = await pushToShared(projectRoot, local, remote, forgetHere);
    if (result.push.chunks) await remote.setState({ lastIndexed: new Date().toISOString() });
    result.pull = await pullMirror(projectRoot, remote, modelId, { wait: true });
  } catch (error) {
    result.error = (error as Error).message.split("\n")[0];
    logError("index: shared store not updated, the next run pushes what is left", result.error, projectRoot);
  } finally {
    await remote?.closeAsync().catch(() => {});
  }
  return result;
}

/** Whether the local mirror holds some chunk of the session (forget accepts another machine's session). */
export async function mirrorHasSession(projectRoot: string, sessionId: string): Promise<boolean> {
  const path = mirrorStorePath(projectRoot);
  if (!existsSync(path)) return false;
  const db = new Database(path, { readonly: true });
  try {
    return db.query("SELECT 1 FROM chunks WHERE session_id = ? LIMIT 1").get(sessionId) !== null;
  } catch {
    return false;
  } finally {
    db.close();
  }
}

/**
 * forget's part in the shared store: the session removed there (exactly, as here) and the mirror pulled
 * again. When the shared store cannot be reached, the session leaves the mirror at once and the next
 * index run forgets it there (the local store remembers it as forgotten). Undefined for a local project.
 */
export async function forgetInShared(
  projectRoot: string,
  sessionId: string,
  options: SharedOptions = {},
): Promise<"forgotten" | "pending" | undefined> {
  const target = await sharedTarget(projectRoot).catch(() => undefined);
  if (!target) return undefined;
  let remote: RemoteStore | undefined;
  try {
    remote = await openShared(projectRoot, target, options);
    await remote.forgetSession(sessionId);
    if ((await pullMirror(projectRoot, remote, modelId, { wait: true })) !== "busy") return "forgotten";
  } catch (error) {
    logError(
      "forget: shared store not reached, the next index run forgets the session there",
      error,
      projectRoot,
    );
  } finally {
    await remote?.closeAsync().catch(() => {});
  }
  await forgetInMirror(projectRoot, sessionId);
  return "pending";
}

/** Removes a session from the mirror (exactly) and rebuilds its recall arrays and summary.md. */
async function forgetInMirror(projectRoot: string, sessionId: string): Promise<void> {
  await inMirror(projectRoot, async (mirror) => {
    if (await mirror.hasSession(sessionId)) await mirror.forgetSession(sessionId);
  });
}

/** Changes the mirror (under its lock), then brings its recall arrays and summary.md up to date. */
async function inMirror(
  projectRoot: string,
  change: (mirror: SqliteMemoryStore & { chunkIdsOfRecords(uuids: string[]): number[] }) => Promise<void>,
): Promise<void> {
  const path = mirrorStorePath(projectRoot);
  if (!existsSync(path)) return;
  const { SqliteMemoryStore } = await import("../store/sqlite.ts");
  const lock = await waitForLock(mirrorLockPath(projectRoot), "change the mirror", MIRROR_LOCK_WAIT_MS);
  const mirror = Object.assign(new SqliteMemoryStore(path), {
    /** The mirror's chunks holding these records (read on a connection closed before any write). */
    chunkIdsOfRecords(uuids: string[]): number[] {
      const db = new Database(path, { readonly: true });
      try {
        return (
          db
            .query("SELECT DISTINCT chunk_id FROM turns WHERE uuid IN (SELECT value FROM json_each(?))")
            .all(JSON.stringify(uuids)) as { chunk_id: number }[]
        ).map((r) => r.chunk_id);
      } finally {
        db.close();
      }
    },
  });
  try {
    await change(mirror);
    const { refreshSnapshotFile } = await import("./recall/snapshot-file.ts");
    await refreshSnapshotFile(mirrorSnapshotPath(projectRoot), mirror, modelId).catch(() =>
      removeSnapshotFiles(mirrorSnapshotPath(projectRoot)),
    );
    writeSummaryFile(summaryPath(projectRoot), await mirror.summaries());
  } finally {
    mirror.close();
    lock?.release();
  }
}

/** What status says of a shared store: where it is, whether it answered, what this machine has still to push. */
export interface SharedStatus {
  backend: string;
  location: string;
  reachable: boolean;
  /** Why it was not read (one line, no secret). */
  problem?: string;
  schemaVersion?: number;
  /** This machine's local chunks, and how many of them are not pushed yet. */
  localChunks: number;
  pending: number;
  /** The shared store's counts (every machine's chunks); the mirror's when it did not answer. */
  store?: StoreStatus;
}

export async function sharedStatus(
  projectRoot: string,
  local: SqliteMemoryStore | undefined,
  options: SharedOptions = {},
): Promise<SharedStatus | undefined> {
  let target: RemoteTarget | undefined;
  try {
    target = await sharedTarget(projectRoot);
  } catch (error) {
    let config: { storage: string };
    try {
      config = (await import("../project/config.ts")).readProjectConfig(projectRoot);
    } catch {
      return undefined; // a config that does not parse: its own check (status, doctor) says so
    }
    return {
      backend: config.storage,
      location: "(not set)",
      reachable: false,
      problem: (error as Error).message,
      localChunks: local ? (await local.status()).chunks : 0,
      pending: local ? unpushedChunks(projectRoot, local.storeId()) : 0,
    };
  }
  if (!target) return undefined;
  const { describeTarget } = await import("../store/remote.ts");
  const status: SharedStatus = {
    backend: target.kind,
    location: describeTarget(target),
    reachable: false,
    localChunks: local ? (await local.status()).chunks : 0,
    pending: local ? unpushedChunks(projectRoot, local.storeId()) : 0,
  };
  let remote: RemoteStore | undefined;
  try {
    remote = await openShared(projectRoot, target, { ...options, reader: true });
    status.schemaVersion = await remote.schemaVersion();
    status.store = status.schemaVersion ? await remote.status() : undefined;
    status.reachable = true;
  } catch (error) {
    status.problem = (error as Error).message.split("\n")[0];
    const { openStoreFileForRead } = await import("../store/open.ts");
    const mirror = openStoreFileForRead(mirrorStorePath(projectRoot));
    try {
      status.store = await mirror?.status();
    } finally {
      mirror?.close();
    }
  } finally {
    await remote?.closeAsync().catch(() => {});
  }
  return status;
}

/**
 * A chunk of the mirror by its shared row id (what the web page lists with a shared store): the records
 * it was made of, its session, and the id this machine's store holds it under, if it does. Undefined for
 * a local project, or when the mirror has no such chunk.
 */
export async function mirroredChunk(
  projectRoot: string,
  chunkId: number,
): Promise<{ uuids: string[]; sessionId: string; localId?: number } | undefined> {
  const target = await sharedTarget(projectRoot).catch(() => undefined);
  const path = mirrorStorePath(projectRoot);
  if (!target || !existsSync(path)) return undefined;
  const mirror = new Database(path, { readonly: true });
  let uuids: string[];
  let sessionId: string;
  try {
    const chunk = mirror.query("SELECT session_id FROM chunks WHERE id = ?").get(chunkId) as {
      session_id: string;
    } | null;
    if (!chunk) return undefined;
    sessionId = chunk.session_id;
    uuids = (
      mirror.query("SELECT uuid FROM turns WHERE chunk_id = ? ORDER BY ord").all(chunkId) as {
        uuid: string;
      }[]
    ).map((t) => t.uuid);
  } finally {
    mirror.close();
  }
  if (!existsSync(storePath(projectRoot))) return { uuids, sessionId };
  const local = new Database(storePath(projectRoot), { readonly: true });
  try {
    const row = local
      .query("SELECT chunk_id FROM turns WHERE uuid IN (SELECT value FROM json_each(?)) LIMIT 1")
      .get(JSON.stringify(uuids)) as { chunk_id: number } | null;
    return { uuids, sessionId, localId: row?.chunk_id };
  } finally {
    local.close();
  }
}

/** Notes records as deleted in this machine's store: never indexed again, and the push carries them. */
function rememberRecords(projectRoot: string, uuids: string[]): void {
  if (!existsSync(storePath(projectRoot))) return;
  const local = new Database(storePath(projectRoot), { readwrite: true, create: false });
  try {
    local.run("PRAGMA busy_timeout = 5000");
    const at = new Date().toISOString();
    const remember = local.prepare("INSERT OR IGNORE INTO forgotten_records(uuid, at) VALUES (?, ?)");
    local.transaction(() => {
      for (const uuid of uuids) remember.run(uuid, at);
    })();
    remember.finalize();
  } finally {
    local.close();
  }
}

/**
 * A chunk's Delete in the shared store: its records remembered as forgotten here (so the next push
 * carries the deletion whatever happens now), the chunks holding them deleted there, and the mirror
 * pulled again. When the shared store cannot be reached they leave the mirror at once.
 */
export async function forgetRecordsInShared(
  projectRoot: string,
  uuids: string[],
  rewrite: SummaryRewrite,
  options: SharedOptions = {},
): Promise<"forgotten" | "pending" | undefined> {
  const target = await sharedTarget(projectRoot).catch(() => undefined);
  if (!target || !uuids.length) return undefined;
  rememberRecords(projectRoot, uuids);
  let remote: RemoteStore | undefined;
  try {
    remote = await openShared(projectRoot, target, options);
    if (!remote.forgetRecords) throw new Error(`${target.kind} cannot delete single chunks`);
    await remote.forgetRecords(uuids, rewrite);
    if ((await pullMirror(projectRoot, remote, modelId, { wait: true })) !== "busy") return "forgotten";
  } catch (error) {
    logError(
      "forget chunk: shared store not reached, the next index run deletes it there",
      error,
      projectRoot,
    );
  } finally {
    await remote?.closeAsync().catch(() => {});
  }
  await inMirror(projectRoot, async (mirror) => {
    for (const id of mirror.chunkIdsOfRecords(uuids)) await mirror.forgetChunk(id, rewrite);
  });
  return "pending";
}

/** Sessions forgotten in the shared store, as the mirror last pulled them (none without a mirror). */
export function mirrorForgottenSessions(projectRoot: string): Set<string> {
  const path = mirrorStorePath(projectRoot);
  if (!existsSync(path)) return new Set();
  let db: Database | undefined;
  try {
    db = new Database(path, { readonly: true });
    return new Set(
      (db.query("SELECT session_id FROM forgotten").all() as { session_id: string }[]).map(
        (r) => r.session_id,
      ),
    );
  } catch {
    return new Set(); // a damaged mirror is pulled again; the local list still holds
  } finally {
    db?.close();
  }
}
