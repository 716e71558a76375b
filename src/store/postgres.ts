/**
 * The memory store in Postgres (a server through Bun.sql, PGlite in the tests, InsForge's database): the
 * same tables and the same behaviour as the SQLite store, so recall reads an identical snapshot and runs
 * PPR in the process. Every method is a few set-based statements (rows travel as one JSON parameter),
 * not a round trip per row. Writes take a per-project advisory lock, and every key is natural (chunk
 * hash, turn uuid, phrase, fact triple), so several machines indexing one project at once never lose
 * or duplicate a chunk. The chats.jsonl offset is kept per writer: each machine captures its own log.
 */
import type { LlmUsage } from "../llm/usage.ts";
import type { SqlClient } from "./pg-client.ts";
import { lockKey, migrateSchema, projectSchema } from "./pg-schema.ts";
import {
  changedWeightsSql,
  emptyChanges,
  marksOf,
  marksSql,
  pullBase,
  pulledChanges,
  SqlStoreBase,
  snapshotOf,
  usageStatements,
} from "./pg-store.ts";
import type { MirrorMarks, RemoteChanges, RemoteMarks, RemoteStore } from "./remote.ts";
import { addEdge, EDGE_EPSILON, type EdgeDeltas, factKey, ordered, readVectors } from "./sqlite.ts";
import {
  type ChunkGraph,
  EDGE_KIND,
  type ForgetResult,
  type GraphSource,
  type IndexBatch,
  type IndexState,
  type StoreSnapshot,
  type SummaryRewrite,
} from "./types.ts";

function toBase64(vector: Float32Array): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString("base64");
}

function pgvectorText(vector: Float32Array): string {
  return `[${Array.from(vector).join(",")}]`;
}

const json = (rows: unknown) => JSON.stringify(rows);

export { WRITER_KEYS, writerMetaKey } from "./pg-store.ts";

export interface PgStoreOptions {
  /** The project's name in the database (one Postgres schema each). */
  project: string;
  /** Who writes (this machine and checkout): the chats.jsonl offset is kept per writer. */
  writer: string;
  backend?: string;
  /** Where the database is, without its password (status, doctor). */
  location?: string;
  /** Only reads (recall, status): the schema is not created or migrated and the LLM cache not loaded. */
  reader?: boolean;
  /** false: the LLM cache is not loaded (a writer that only pushes finished batches never asks it). */
  llmCache?: boolean;
}

export class PgMemoryStore extends SqlStoreBase implements RemoteStore {
  readonly backend: string;
  readonly location: string;
  private readonly indexedDims = new Set<number>();

  private constructor(
    private readonly client: SqlClient,
    options: PgStoreOptions,
    readonly pgvector: boolean,
  ) {
    super(client, options.project, options.writer);
    this.backend = options.backend ?? "postgres";
    this.location = options.location ?? options.backend ?? "postgres";
  }

  /** Creates or migrates the project's schema and loads the LLM cache (get/set are synchronous). */
  static async open(client: SqlClient, options: PgStoreOptions): Promise<PgMemoryStore> {
    if (options.reader) return new PgMemoryStore(client, options, false);
    const { pgvector } = await migrateSchema(client, projectSchema(options.project));
    const store = new PgMemoryStore(client, options, pgvector);
    const s = store.schema;
    await client.query(
      `INSERT INTO ${s}.meta(key, value) VALUES ('store_id', $1) ON CONFLICT (key) DO NOTHING`,
      [crypto.randomUUID()],
    );
    if (options.llmCache !== false) await store.loadCache();
    return store;
  }

  private async meta(key: string, tx: SqlClient = this.client): Promise<string | undefined> {
    const [row] = await tx.query<{ value: string }>(`SELECT value FROM ${this.schema}.meta WHERE key = $1`, [
      this.metaKey(key),
    ]);
    return row?.value;
  }

  private async setMeta(tx: SqlClient, key: string, value: string): Promise<void> {
    await tx.query(
      `INSERT INTO ${this.schema}.meta(key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [this.metaKey(key), value],
    );
  }

  private async bump(tx: SqlClient, key: "generation" | "deletions"): Promise<void> {
    await tx.query(
      `INSERT INTO ${this.schema}.meta(key, value) VALUES ($1, '1') ON CONFLICT (key) DO UPDATE SET value = (${this.schema}.meta.value::bigint + 1)::text`,
      [key],
    );
  }

  /** A write transaction: one writer per project at a time (the advisory lock), pending cache writes first. */
  private async write<T>(work: (tx: SqlClient) => Promise<T>): Promise<T> {
    await this.flush();
    return this.client.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock($1)", [lockKey(this.schema)]);
      return work(tx);
    });
  }

  async generation(): Promise<number> {
    return Number((await this.meta("generation")) ?? 0);
  }

  async setState(state: Partial<IndexState>): Promise<void> {
    await this.flush();
    await this.client.transaction(async (tx) => {
      if (state.offset !== undefined) await this.setMeta(tx, "offset", String(state.offset));
      if (state.offsetCheck !== undefined) await this.setMeta(tx, "offset_check", state.offsetCheck);
      if (state.lastIndexed) await this.setMeta(tx, "last_indexed", state.lastIndexed);
      if (state.reviewSwept !== undefined)
        await this.setMeta(tx, "review_swept", state.reviewSwept ? "1" : "0");
    });
  }

  async entityVectors(): Promise<{ phrases: string[]; vectors: Float32Array; models: string[] }> {
    const rows = await this.client.query<{ phrase: string; model: string; vector: Uint8Array }>(
      `SELECT phrase, model, vector FROM ${this.schema}.entities ORDER BY id`,
    );
    const { vectors } = readVectors(rows);
    return { phrases: rows.map((r) => r.phrase), vectors, models: rows.map((r) => r.model) };
  }

  async writeBatch(batch: IndexBatch): Promise<void> {
    const s = this.schema;
    await this.write(async (tx) => {
      // A record deleted on some machine (forgetRecords) is stored by no writer again.
      const uuids = batch.chunks.flatMap((c) => c.turns.map((t) => t.uuid));
      const blocked = uuids.length
        ? new Set(
            (
              await tx.query<{ uuid: string }>(
                `SELECT f.uuid FROM ${s}.forgotten_records f JOIN jsonb_array_elements_text($1::text::jsonb) u(uuid) ON u.uuid = f.uuid`,
                [json(uuids)],
              )
            ).map((r) => r.uuid),
          )
        : new Set<string>();
      const allowed = blocked.size
        ? batch.chunks.filter((c) => !c.turns.some((t) => blocked.has(t.uuid)))
        : batch.chunks;
      const embedding = this.pgvector ? ", embedding" : "";
      const embeddingValue = this.pgvector ? ", x.embedding::vector" : "";
      const inserted = await tx.query<{ id: number; hash: string }>(
        `INSERT INTO ${s}.chunks(hash, session_id, ts, text, graph_source, model, vector${embedding})
         SELECT x.hash, x.session_id, x.ts, x.text, x.graph_source, $2, decode(x.vector, 'base64')${embeddingValue}
         FROM jsonb_to_recordset($1::text::jsonb) AS x(i integer, hash text, session_id text, ts text, text text,
           graph_source text, vector text, embedding text)
         ORDER BY x.i ON CONFLICT (hash) DO NOTHING RETURNING id, hash`,
        [
          json(
            allowed.map((c, i) => ({
              i,
              hash: c.hash,
              session_id: c.sessionId,
              ts: c.ts,
              text: c.text,
              graph_source: c.graphSource,
              vector: toBase64(c.vector),
              embedding: this.pgvector ? pgvectorText(c.vector) : null,
            })),
          ),
          batch.model,
        ],
      );
      const idOf = new Map(inserted.map((r) => [r.hash, Number(r.id)]));
      // Already indexed (by another writer, or before a crash): idempotent by chunk hash.
      const fresh = allowed.filter((c) => idOf.has(c.hash));
      const turns = fresh.flatMap((c) =>
        c.turns.map((t, ord) => ({ ...t, ord, chunk_id: idOf.get(c.hash) })),
      );
      if (turns.length)
        await tx.query(
          `INSERT INTO ${s}.turns(uuid, chunk_id, ord, role, ts, start, "end")
           SELECT x.uuid, x.chunk_id, x.ord, x.role, x.ts, x.start, x."end"
           FROM jsonb_to_recordset($1::text::jsonb) AS x(uuid text, chunk_id integer, ord integer, role text, ts text,
             start integer, "end" integer)
           ON CONFLICT (uuid) DO NOTHING`,
          [json(turns)],
        );
      await this.addGraphs(
        tx,
        fresh.map((c) => ({ chunkId: idOf.get(c.hash) as number, graph: c.graph })),
        batch,
      );
      // A batch another writer stored first (every chunk already there) adds no second summary entry.
      const freshSessions = new Set(fresh.map((c) => c.sessionId));
      const summaries = batch.chunks.length
        ? batch.summaries.filter((e) => freshSessions.has(e.sessionId))
        : batch.summaries;
      if (summaries.length)
        await tx.query(
          `INSERT INTO ${s}.summaries(session_id, date, ts, text, source)
           SELECT x.session_id, x.date, x.ts, x.text, x.source
           FROM jsonb_to_recordset($1::text::jsonb) AS x(i integer, session_id text, date text, ts text, text text, source text)
           ORDER BY x.i`,
          [json(summaries.map((e, i) => ({ i, session_id: e.sessionId, ...e })))],
        );
      await this.indexEmbeddings(tx, batch);
      await this.bump(tx, "generation");
    });
  }

  /** An HNSW index over chunk embeddings of each dimension stored (pgvector needs a fixed dimension). */
  private async indexEmbeddings(tx: SqlClient, batch: IndexBatch): Promise<void> {
    if (!this.pgvector || !batch.chunks.length) return;
    const dim = batch.chunks[0].vector.length;
    if (this.indexedDims.has(dim) || !Number.isInteger(dim) || dim <= 0) return;
    await tx.query(
      `CREATE INDEX IF NOT EXISTS chunks_embedding_hnsw_${dim} ON ${this.schema}.chunks
       USING hnsw ((embedding::vector(${dim})) vector_cosine_ops) WHERE vector_dims(embedding) = ${dim}`,
    );
    this.indexedDims.add(dim);
  }

  /** Row ids by natural key, for the phrases asked. */
  private async phraseIds(tx: SqlClient, phrases: string[]): Promise<Map<string, number>> {
    if (!phrases.length) return new Map();
    const rows = await tx.query<{ id: number; phrase: string }>(
      `SELECT e.id, e.phrase FROM ${this.schema}.entities e JOIN jsonb_array_elements_text($1::text::jsonb) p(phrase) ON e.phrase = p.phrase`,
      [json(phrases)],
    );
    return new Map(rows.map((r) => [r.phrase, Number(r.id)]));
  }

  /**
   * The graph contributions of chunks already stored (their rows exist), as the SQLite store adds them,
   * in the same order so row ids come out the same: phrases, facts, edges summed per edge, synonyms.
   */
  private async addGraphs(
    tx: SqlClient,
    items: { chunkId: number; graph: ChunkGraph }[],
    vectors: Pick<IndexBatch, "model" | "entityVectors" | "factVectors" | "synonyms" | "synonymsDropped">,
  ): Promise<void> {
    const s = this.schema;
    const labels = new Map<string, string>();
    for (const { graph } of items)
      for (const e of graph.entities) if (!labels.has(e.phrase)) labels.set(e.phrase, e.label);
    const newPhrases = [...labels].filter(([phrase]) => vectors.entityVectors.has(phrase));
    if (newPhrases.length)
      await tx.query(
        `INSERT INTO ${s}.entities(phrase, label, model, vector)
         SELECT x.phrase, x.label, $2, decode(x.vector, 'base64')
         FROM jsonb_to_recordset($1::text::jsonb) AS x(i integer, phrase text, label text, vector text)
         ORDER BY x.i ON CONFLICT (phrase) DO NOTHING`,
        [
          json(
            newPhrases.map(([phrase, label], i) => ({
              i,
              phrase,
              label,
              vector: toBase64(vectors.entityVectors.get(phrase) as Float32Array),
            })),
          ),
          vectors.model,
        ],
      );
    const synonymPhrases = [...vectors.synonyms, ...(vectors.synonymsDropped ?? [])].flatMap((p) => [
      p.a,
      p.b,
    ]);
    const ids = await this.phraseIds(tx, [...new Set([...labels.keys(), ...synonymPhrases])]);
    for (const phrase of labels.keys())
      if (!ids.has(phrase)) throw new Error(`no vector for new phrase '${phrase}'`);

    const deltas: EdgeDeltas = new Map();
    // Facts by (subject id, predicate, object id), in the order chunks state them.
    const facts = new Map<string, { s: number; p: string; o: number; vector?: Float32Array }>();
    const stated = new Map<string, { chunkId: number; key: string }>();
    for (const { chunkId, graph } of items) {
      const local = new Map<string, number>();
      for (const e of graph.entities) {
        if (local.has(e.phrase)) continue;
        const id = ids.get(e.phrase) as number;
        local.set(e.phrase, id);
        addEdge(deltas, EDGE_KIND.context, chunkId, id, 1, chunkId);
      }
      for (const f of graph.facts) {
        const sId = local.get(f.subject);
        const oId = local.get(f.object);
        if (sId === undefined || oId === undefined || sId === oId) continue;
        const key = `${sId}\u0001${f.predicate}\u0001${oId}`;
        if (!facts.has(key))
          facts.set(key, {
            s: sId,
            p: f.predicate,
            o: oId,
            vector: vectors.factVectors.get(factKey(f.subject, f.predicate, f.object)),
          });
        // A chunk stating the same fact twice counts once; each distinct fact adds 1 to its phrase pair's edge.
        if (stated.has(`${chunkId}:${key}`)) continue;
        stated.set(`${chunkId}:${key}`, { chunkId, key });
        addEdge(deltas, EDGE_KIND.fact, ...ordered(sId, oId), 1, chunkId);
      }
    }
    const factIds = new Map<string, number>();
    if (facts.size) {
      const list = [...facts.values()].map((f, i) => ({
        i,
        s: f.s,
        p: f.p,
        o: f.o,
        vector: f.vector ? toBase64(f.vector) : null,
      }));
      await tx.query(
        `INSERT INTO ${s}.facts(subject, predicate, object, model, vector)
         SELECT x.s, x.p, x.o, $2, decode(x.vector, 'base64')
         FROM jsonb_to_recordset($1::text::jsonb) AS x(i integer, s integer, p text, o integer, vector text)
         WHERE x.vector IS NOT NULL ORDER BY x.i ON CONFLICT (subject, predicate, object) DO NOTHING`,
        [json(list), vectors.model],
      );
      for (const r of await tx.query<{ id: number; subject: number; predicate: string; object: number }>(
        `SELECT f.id, f.subject, f.predicate, f.object FROM ${s}.facts f
         JOIN jsonb_to_recordset($1::text::jsonb) AS x(s integer, p text, o integer)
           ON f.subject = x.s AND f.predicate = x.p AND f.object = x.o`,
        [json(list.map(({ s: subject, p, o }) => ({ s: subject, p, o })))],
      ))
        factIds.set(`${r.subject}\u0001${r.predicate}\u0001${r.object}`, Number(r.id));
      for (const [key, f] of facts)
        if (!factIds.has(key)) throw new Error(`no vector for new fact '${f.s} ${f.p} ${f.o}'`);
    }
    const sources = [...stated.values()].map(({ chunkId, key }) => ({
      fact_id: factIds.get(key),
      chunk_id: chunkId,
    }));
    if (sources.length)
      await tx.query(
        `INSERT INTO ${s}.fact_sources(fact_id, chunk_id) SELECT x.fact_id, x.chunk_id
         FROM jsonb_to_recordset($1::text::jsonb) AS x(fact_id integer, chunk_id integer) ON CONFLICT DO NOTHING`,
        [json(sources)],
      );
    if (deltas.size) {
      const list = [...deltas.values()];
      const rows = await tx.query<{ id: number; kind: number; a: number; b: number }>(
        `INSERT INTO ${s}.edges(kind, a, b, weight) SELECT x.kind, x.a, x.b, x.w
         FROM jsonb_to_recordset($1::text::jsonb) AS x(i integer, kind smallint, a integer, b integer, w double precision)
         ORDER BY x.i ON CONFLICT (kind, a, b) DO UPDATE SET weight = ${s}.edges.weight + excluded.weight
         RETURNING id, kind, a, b`,
        [json(list.map((d, i) => ({ i, kind: d.kind, a: d.a, b: d.b, w: d.amount })))],
      );
      const edgeId = new Map(rows.map((r) => [`${r.kind}:${r.a}:${r.b}`, Number(r.id)]));
      const shares = list.flatMap((d) =>
        [...d.sources].map(([chunkId, amount]) => ({
          edge_id: edgeId.get(`${d.kind}:${d.a}:${d.b}`),
          chunk_id: chunkId,
          amount,
        })),
      );
      if (shares.length)
        await tx.query(
          `INSERT INTO ${s}.edge_sources(edge_id, chunk_id, amount) SELECT x.edge_id, x.chunk_id, x.amount
           FROM jsonb_to_recordset($1::text::jsonb) AS x(edge_id integer, chunk_id integer, amount double precision)
           ON CONFLICT (edge_id, chunk_id) DO UPDATE SET amount = ${s}.edge_sources.amount + excluded.amount`,
          [json(shares)],
        );
    }
    const synonyms: { kind: number; a: number; b: number; w: number; i: number }[] = [];
    for (const p of vectors.synonyms) {
      const a = ids.get(p.a);
      const b = ids.get(p.b);
      if (a === undefined || b === undefined || a === b) continue;
      const [x, y] = ordered(a, b);
      synonyms.push({ i: synonyms.length, kind: EDGE_KIND.synonym, a: x, b: y, w: p.score });
    }
    const dropped: { a: number; b: number }[] = [];
    for (const p of vectors.synonymsDropped ?? []) {
      const a = ids.get(p.a);
      const b = ids.get(p.b);
      if (a === undefined || b === undefined || a === b) continue;
      const [x, y] = ordered(a, b);
      dropped.push({ a: x, b: y });
    }
    if (!synonyms.length && !dropped.length) return;
    // As the SQLite store: an edge added again takes the new weight (revived), a dropped one keeps its row
    // at weight 0. A change to an existing row is noted with the generation this write commits.
    const [{ top }] = await tx.query<{ top: number }>(`SELECT coalesce(max(id), 0) AS top FROM ${s}.edges`);
    const changed: number[] = [];
    if (synonyms.length)
      for (const r of await tx.query<{ id: number }>(
        `INSERT INTO ${s}.edges(kind, a, b, weight) SELECT x.kind, x.a, x.b, x.w
         FROM jsonb_to_recordset($1::text::jsonb) AS x(i integer, kind smallint, a integer, b integer, w double precision)
         ORDER BY x.i ON CONFLICT (kind, a, b) DO UPDATE SET weight = excluded.weight RETURNING id`,
        [json(synonyms)],
      ))
        if (Number(r.id) <= Number(top)) changed.push(Number(r.id));
    if (dropped.length)
      for (const r of await tx.query<{ id: number }>(
        `UPDATE ${s}.edges e SET weight = 0 FROM jsonb_to_recordset($1::text::jsonb) AS x(a integer, b integer)
         WHERE e.kind = ${EDGE_KIND.synonym} AND e.a = x.a AND e.b = x.b RETURNING e.id`,
        [json(dropped)],
      ))
        changed.push(Number(r.id));
    if (changed.length)
      await tx.query(
        `INSERT INTO ${s}.synonym_updates(edge_id, generation)
         SELECT value::integer, coalesce((SELECT value::bigint FROM ${s}.meta WHERE key = 'generation'), 0) + 1
         FROM jsonb_array_elements_text($1::text::jsonb)
         ON CONFLICT (edge_id) DO UPDATE SET generation = excluded.generation`,
        [json(changed)],
      );
  }

  async replaceChunkGraph(
    chunkId: number,
    graph: ChunkGraph,
    source: GraphSource,
    vectors: Omit<IndexBatch, "chunks" | "summaries">,
  ): Promise<void> {
    await this.write(async (tx) => {
      await this.removeChunkGraph(tx, [chunkId]);
      await this.addGraphs(tx, [{ chunkId, graph }], vectors);
      await tx.query(`UPDATE ${this.schema}.chunks SET graph_source = $1 WHERE id = $2`, [source, chunkId]);
      await this.bump(tx, "generation");
    });
  }

  /** What `chunkIds` contributed, subtracted exactly (see SqliteMemoryStore.removeChunkGraph). */
  private async removeChunkGraph(tx: SqlClient, chunkIds: number[]): Promise<Omit<ForgetResult, "chunks">> {
    const s = this.schema;
    await this.bump(tx, "deletions");
    const ids = json(chunkIds);
    const chunkSet = `(SELECT value::integer FROM jsonb_array_elements_text($1::text::jsonb))`;
    const sourceRows = await tx.query<{ id: number; chunk_id: number; amount: number }>(
      `SELECT s.edge_id AS id, s.chunk_id, s.amount FROM ${s}.edge_sources s WHERE s.chunk_id IN ${chunkSet}`,
      [ids],
    );
    // The SQLite store lowers an edge chunk by chunk: each share lowers it, the one that takes it to zero removes it.
    const order = new Map(chunkIds.map((id, i) => [id, i]));
    const byEdge = new Map<number, { chunk: number; amount: number }[]>();
    for (const r of sourceRows) {
      let list = byEdge.get(Number(r.id));
      if (!list) byEdge.set(Number(r.id), (list = []));
      list.push({ chunk: Number(r.chunk_id), amount: r.amount });
    }
    let edgesRemoved = 0;
    let edgesLowered = 0;
    const lowered: { id: number; amount: number }[] = [];
    for (const [id, shares] of byEdge) {
      shares.sort((x, y) => (order.get(x.chunk) ?? 0) - (order.get(y.chunk) ?? 0));
      lowered.push({ id, amount: shares.reduce((sum, x) => sum + x.amount, 0) });
    }
    const touchedEntities = new Set<number>();
    if (lowered.length) {
      const after = await tx.query<{ id: number; weight: number }>(
        `UPDATE ${s}.edges e SET weight = e.weight - x.amount
         FROM jsonb_to_recordset($1::text::jsonb) AS x(id integer, amount double precision) WHERE e.id = x.id
         RETURNING e.id, e.weight`,
        [json(lowered)],
      );
      const gone = after.filter((r) => r.weight <= EDGE_EPSILON).map((r) => Number(r.id));
      for (const r of after) {
        const shares = (byEdge.get(Number(r.id)) ?? []).length;
        if (r.weight <= EDGE_EPSILON) {
          edgesRemoved++;
          edgesLowered += shares - 1;
        } else edgesLowered += shares;
      }
      if (gone.length)
        await tx.query(
          `DELETE FROM ${s}.edges WHERE id IN (SELECT value::integer FROM jsonb_array_elements_text($1::text::jsonb))`,
          [json(gone)],
        );
    }
    await tx.query(`DELETE FROM ${s}.edge_sources WHERE chunk_id IN ${chunkSet}`, [ids]);
    const context = await tx.query<{ b: number }>(
      `DELETE FROM ${s}.edges WHERE kind = ${EDGE_KIND.context} AND a IN ${chunkSet} RETURNING b`,
      [ids],
    );
    for (const { b } of context) touchedEntities.add(Number(b));
    edgesRemoved += context.length;
    const touchedFacts = await tx.query<{ fact_id: number }>(
      `DELETE FROM ${s}.fact_sources WHERE chunk_id IN ${chunkSet} RETURNING fact_id`,
      [ids],
    );
    let facts = 0;
    if (touchedFacts.length)
      facts += (
        await tx.query(
          `DELETE FROM ${s}.facts f WHERE f.id IN (SELECT value::integer FROM jsonb_array_elements_text($1::text::jsonb))
           AND NOT EXISTS (SELECT 1 FROM ${s}.fact_sources x WHERE x.fact_id = f.id) RETURNING id`,
          [json([...new Set(touchedFacts.map((r) => Number(r.fact_id)))])],
        )
      ).length;
    let entities = 0;
    if (touchedEntities.size) {
      // No passage mentions these phrases any more: they go, with their synonym and fact edges and facts.
      const orphans = (
        await tx.query<{ id: number }>(
          `DELETE FROM ${s}.entities e WHERE e.id IN (SELECT value::integer FROM jsonb_array_elements_text($1::text::jsonb))
           AND NOT EXISTS (SELECT 1 FROM ${s}.edges x WHERE x.kind = ${EDGE_KIND.context} AND x.b = e.id) RETURNING id`,
          [json([...touchedEntities])],
        )
      ).map((r) => Number(r.id));
      entities = orphans.length;
      if (orphans.length) {
        const set = json(orphans);
        const orphanSet = `(SELECT value::integer FROM jsonb_array_elements_text($1::text::jsonb))`;
        const gone = await tx.query<{ id: number }>(
          `DELETE FROM ${s}.edges WHERE kind != ${EDGE_KIND.context} AND (a IN ${orphanSet} OR b IN ${orphanSet}) RETURNING id`,
          [set],
        );
        edgesRemoved += gone.length;
        if (gone.length)
          await tx.query(
            `DELETE FROM ${s}.edge_sources WHERE edge_id IN (SELECT value::integer FROM jsonb_array_elements_text($1::text::jsonb))`,
            [json(gone.map((r) => Number(r.id)))],
          );
        facts += (
          await tx.query(
            `DELETE FROM ${s}.facts WHERE subject IN ${orphanSet} OR object IN ${orphanSet} RETURNING id`,
            [set],
          )
        ).length;
      }
    }
    return { facts, entities, edgesRemoved, edgesLowered };
  }

  async forgetSession(sessionId: string): Promise<ForgetResult> {
    const s = this.schema;
    return this.write(async (tx) => {
      await tx.query(`INSERT INTO ${s}.forgotten(session_id, at) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
        sessionId,
        new Date().toISOString(),
      ]);
      const chunks = await tx.query<{ id: number; hash: string }>(
        `SELECT id, hash FROM ${s}.chunks WHERE session_id = $1 ORDER BY id`,
        [sessionId],
      );
      const ids = chunks.map((c) => Number(c.id));
      const removed = await this.removeChunkGraph(tx, ids);
      const set = `(SELECT value::integer FROM jsonb_array_elements_text($1::text::jsonb))`;
      await tx.query(`DELETE FROM ${s}.turns WHERE chunk_id IN ${set}`, [json(ids)]);
      await tx.query(
        `DELETE FROM ${s}.llm_cache WHERE chunk_hash IN (SELECT value FROM jsonb_array_elements_text($1::text::jsonb))`,
        [json(chunks.map((c) => c.hash))],
      );
      await tx.query(`DELETE FROM ${s}.chunks WHERE id IN ${set}`, [json(ids)]);
      await tx.query(`DELETE FROM ${s}.summaries WHERE session_id = $1`, [sessionId]);
      await this.bump(tx, "generation");
      this.dropCached(new Set(chunks.map((c) => c.hash)));
      return { chunks: chunks.length, ...removed };
    });
  }

  /**
   * Records deleted one by one on some machine (the web page's Delete): every chunk holding one goes as
   * SQLite's forgetChunk removes it (its graph weight exactly, turns, cached LLM results, the summary
   * lines `rewrite` traces to it), and the uuids are remembered, so no writer stores them again. How
   * many chunks went.
   */
  async forgetRecords(uuids: string[], rewrite: SummaryRewrite): Promise<number> {
    if (!uuids.length) return 0;
    const s = this.schema;
    return this.write(async (tx) => {
      const at = new Date().toISOString();
      const chunks = await tx.query<{ id: number; hash: string; session_id: string; text: string }>(
        `SELECT DISTINCT c.id, c.hash, c.session_id, c.text FROM ${s}.chunks c JOIN ${s}.turns t ON t.chunk_id = c.id
         JOIN jsonb_array_elements_text($1::text::jsonb) u(uuid) ON u.uuid = t.uuid ORDER BY c.id`,
        [json(uuids)],
      );
      const ids = chunks.map((c) => Number(c.id));
      const set = `(SELECT value::integer FROM jsonb_array_elements_text($1::text::jsonb))`;
      // The chunks' other records go with them, as a chunk deleted here takes all its turns.
      await tx.query(
        `INSERT INTO ${s}.forgotten_records(uuid, at)
         SELECT value, $2 FROM jsonb_array_elements_text($1::text::jsonb)
         UNION SELECT uuid, $2 FROM ${s}.turns WHERE chunk_id IN (SELECT value::integer FROM jsonb_array_elements_text($3::text::jsonb))
         ON CONFLICT DO NOTHING`,
        [json(uuids), at, json(ids)],
      );
      if (!ids.length) return 0;
      await this.removeChunkGraph(tx, ids);
      await tx.query(`DELETE FROM ${s}.turns WHERE chunk_id IN ${set}`, [json(ids)]);
      await tx.query(
        `DELETE FROM ${s}.llm_cache WHERE chunk_hash IN (SELECT value FROM jsonb_array_elements_text($1::text::jsonb))`,
        [json(chunks.map((c) => c.hash))],
      );
      await tx.query(`DELETE FROM ${s}.chunks WHERE id IN ${set}`, [json(ids)]);
      for (const chunk of chunks) {
        const kept = (
          await tx.query<{ text: string }>(`SELECT text FROM ${s}.chunks WHERE session_id = $1`, [
            chunk.session_id,
          ])
        ).map((r) => r.text);
        for (const row of await tx.query<{ id: number; text: string }>(
          `SELECT id, text FROM ${s}.summaries WHERE session_id = $1 ORDER BY id`,
          [chunk.session_id],
        )) {
          const text = rewrite(row.text, chunk.text, kept);
          if (text === row.text) continue;
          if (text.trim())
            await tx.query(`UPDATE ${s}.summaries SET text = $1 WHERE id = $2`, [text, row.id]);
          else await tx.query(`DELETE FROM ${s}.summaries WHERE id = $1`, [row.id]);
        }
      }
      await this.bump(tx, "generation");
      this.dropCached(new Set(chunks.map((c) => c.hash)));
      return ids.length;
    });
  }

  async replaceSummaryLine(sessionId: string, line: string, replacement: string): Promise<number> {
    const s = this.schema;
    return this.write(async (tx) => {
      let entries = 0;
      for (const row of await tx.query<{ id: number; text: string }>(
        `SELECT id, text FROM ${s}.summaries WHERE session_id = $1 ORDER BY id`,
        [sessionId],
      )) {
        const lines = row.text.split("\n");
        const at = lines.indexOf(line);
        if (at < 0) continue;
        lines[at] = replacement;
        await tx.query(`UPDATE ${s}.summaries SET text = $1 WHERE id = $2`, [lines.join("\n"), row.id]);
        entries++;
      }
      if (entries) await this.bump(tx, "generation");
      return entries;
    });
  }

  async snapshot(): Promise<StoreSnapshot> {
    const s = this.schema;
    return this.client.transaction(async (tx) => {
      // One consistent view of every table, whatever another writer commits meanwhile.
      await tx.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
      const generation = Number((await this.meta("generation", tx)) ?? 0);
      const read = (sql: string) => tx.query<Record<string, unknown>>(sql);
      return snapshotOf(generation, {
        chunks: await read(
          `SELECT id, session_id, ts, text, graph_source, model, vector FROM ${s}.chunks ORDER BY id`,
        ),
        turns: await read(
          `SELECT uuid, chunk_id, role, ts, start, "end" FROM ${s}.turns ORDER BY chunk_id, ord`,
        ),
        entities: await read(`SELECT id, phrase, label FROM ${s}.entities ORDER BY id`),
        facts: await read(`SELECT id, subject, predicate, object, model, vector FROM ${s}.facts ORDER BY id`),
        edges: await read(`SELECT kind, a, b, weight FROM ${s}.edges ORDER BY id`),
      });
    });
  }

  /** Whether the project's tables exist yet (a reader opens without creating them). */
  private async exists(tx: SqlClient = this.client): Promise<boolean> {
    const [row] = await tx.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [
      `${this.schema}.meta`,
    ]);
    return Boolean(row?.ok);
  }

  /** One round trip outside a transaction (a project not created yet fails the read: no marks). */
  async marks(tx?: SqlClient): Promise<RemoteMarks> {
    const none = { store: "", generation: 0, deletions: 0 };
    const read = marksSql(this.schema);
    let rows: { key: string; value: string }[];
    if (tx) {
      // In a transaction a failed statement would abort it: asked first.
      if (!(await this.exists(tx))) return none;
      rows = await tx.query(read);
    } else
      try {
        rows = await this.client.query(read);
      } catch (error) {
        if (!(await this.exists())) return none;
        throw error;
      }
    return marksOf(rows);
  }

  async schemaVersion(): Promise<number> {
    if (!(await this.exists())) return 0;
    const [row] = await this.client.query<{ v: number | null }>(
      `SELECT max(version) AS v FROM ${this.schema}.schema_version`,
    );
    return Number(row?.v ?? 0);
  }

  /**
   * The rows a mirror pulled at `since` lacks, read in one consistent view. Row ids grow in commit
   * order (every write holds the project's advisory lock), so "above the mark" misses nothing; a
   * deletion anywhere (forget, a replaced LLM graph) makes the next pull whole.
   */
  async changesSince(since: MirrorMarks | undefined): Promise<RemoteChanges> {
    const s = this.schema;
    return this.client.transaction(async (tx) => {
      await tx.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
      const marks = await this.marks(tx);
      const pull = pullBase(since, marks);
      const { base } = pull;
      if (!marks.store) return emptyChanges(marks, pull);
      const read = (sql: string, params: unknown[] = []) => tx.query<Record<string, unknown>>(sql, params);
      const numeric = (rows: Record<string, unknown>[], columns: string[]) => {
        for (const r of rows) for (const c of columns) r[c] = Number(r[c]);
        return rows;
      };
      const rows: RemoteChanges["rows"] = {
        chunks: numeric(
          await read(
            `SELECT id, hash, session_id, ts, text, graph_source, model, vector FROM ${s}.chunks WHERE id > $1 ORDER BY id`,
            [base.chunk],
          ),
          ["id"],
        ),
        turns: numeric(
          await read(
            `SELECT uuid, chunk_id, ord, role, ts, start, "end" FROM ${s}.turns WHERE chunk_id > $1 ORDER BY chunk_id, ord`,
            [base.chunk],
          ),
          ["chunk_id", "ord", "start", "end"],
        ),
        entities: numeric(
          await read(`SELECT id, phrase, label, model, vector FROM ${s}.entities WHERE id > $1 ORDER BY id`, [
            base.entity,
          ]),
          ["id"],
        ),
        facts: numeric(
          await read(
            `SELECT id, subject, predicate, object, model, vector FROM ${s}.facts WHERE id > $1 ORDER BY id`,
            [base.fact],
          ),
          ["id", "subject", "object"],
        ),
        fact_sources: numeric(
          await read(`SELECT fact_id, chunk_id FROM ${s}.fact_sources WHERE chunk_id > $1`, [base.chunk]),
          ["fact_id", "chunk_id"],
        ),
        edges: numeric(
          await read(`SELECT id, kind, a, b, weight FROM ${s}.edges WHERE id > $1 ORDER BY id`, [base.edge]),
          ["id", "kind", "a", "b", "weight"],
        ),
        edge_sources: numeric(
          await read(`SELECT edge_id, chunk_id, amount FROM ${s}.edge_sources WHERE chunk_id > $1`, [
            base.chunk,
          ]),
          ["edge_id", "chunk_id", "amount"],
        ),
        summaries: numeric(
          await read(`SELECT id, session_id, date, ts, text, source FROM ${s}.summaries ORDER BY id`),
          ["id"],
        ),
        forgotten: await read(`SELECT session_id, at FROM ${s}.forgotten`),
      };
      const weights = pull.whole
        ? []
        : await read(changedWeightsSql(s), [base.edge, base.chunk, since?.generation ?? 0]);
      return pulledChanges(marks, pull, rows, weights);
    });
  }

  record(usage: LlmUsage): void {
    this.later(
      this.client.transaction(async (tx) => {
        for (const statement of usageStatements(this.schema, usage)) await tx.query(statement);
      }),
    );
  }
}
