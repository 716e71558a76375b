/**
 * What the two shared stores over one Postgres schema have in common (postgres.ts over a connection that
 * runs transactions, insforge.ts over InsForge's raw-SQL endpoint that runs one script per call): the
 * reads, the counts, the LLM cache and usage, and the pure steps of a pull and a snapshot, so a fix lands
 * once. How a write is made atomic stays in each backend's own file.
 */
import type { LlmUsage } from "../llm/usage.ts";
import { lit, projectSchema } from "./pg-schema.ts";
import { MIRROR_TABLES, type MirrorMarks, type RemoteChanges, type RemoteMarks } from "./remote.ts";
import { readVectors } from "./sqlite.ts";
import type { GraphSource, IndexState, StoreSnapshot, StoreStatus, SummaryEntry, Turn } from "./types.ts";

/** What the shared reads ask of a connection: one statement with positional `$n` parameters. */
export interface SqlReader {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** Per-writer meta keys: each machine reads its own chats.jsonl, so its offset is its own. */
export const WRITER_KEYS = new Set(["offset", "offset_check", "review_swept"]);

/** The meta row a key is stored under in Postgres: `offset@<writer>` for a per-writer key. */
export function writerMetaKey(key: string, writer: string): string {
  return WRITER_KEYS.has(key) ? `${key}@${writer}` : key;
}

/** The two usage counters one LLM call adds to (all time, and this month), as statements of literals. */
export function usageStatements(schema: string, usage: LlmUsage): string[] {
  const add = (table: string) =>
    `calls = ${table}.calls + 1, input_tokens = ${table}.input_tokens + excluded.input_tokens, output_tokens = ${table}.output_tokens + excluded.output_tokens`;
  const [provider, model] = [lit(usage.provider), lit(usage.model)];
  const [input, output] = [Math.trunc(usage.inputTokens), Math.trunc(usage.outputTokens)];
  return [
    `INSERT INTO ${schema}.llm_usage(provider, model, calls, input_tokens, output_tokens) VALUES (${provider}, ${model}, 1, ${input}, ${output})
     ON CONFLICT (provider, model) DO UPDATE SET ${add(`${schema}.llm_usage`)}`,
    `INSERT INTO ${schema}.llm_usage_months(month, provider, model, calls, input_tokens, output_tokens)
     VALUES (${lit(new Date().toISOString().slice(0, 7))}, ${provider}, ${model}, 1, ${input}, ${output})
     ON CONFLICT (month, provider, model) DO UPDATE SET ${add(`${schema}.llm_usage_months`)}`,
  ];
}

/** The read of a store's marks (a project not created yet fails it). */
export const marksSql = (schema: string) =>
  `SELECT key, value FROM ${schema}.meta WHERE key IN ('store_id', 'generation', 'deletions')`;

export function marksOf(rows: { key: string; value: string }[]): RemoteMarks {
  const value = (key: string) => rows.find((r) => r.key === key)?.value;
  return {
    store: value("store_id") ?? "",
    generation: Number(value("generation") ?? 0),
    deletions: Number(value("deletions") ?? 0),
  };
}

/** Where a pull at `since` starts: from nothing when the store is another or something was deleted since. */
export function pullBase(since: MirrorMarks | undefined, marks: RemoteMarks) {
  const whole = !since || since.store !== marks.store || since.deletions !== marks.deletions;
  const base = whole || !since ? { chunk: 0, entity: 0, fact: 0, edge: 0 } : since;
  return { whole, base };
}

/** A pull from a project not created yet: no rows. */
export function emptyChanges(marks: RemoteMarks, pull: ReturnType<typeof pullBase>): RemoteChanges {
  return {
    marks: { ...marks, ...pull.base },
    whole: pull.whole,
    weights: [],
    rows: Object.fromEntries(MIRROR_TABLES.map((t) => [t, []])) as unknown as RemoteChanges["rows"],
  };
}

/**
 * The weights of edges a mirror already holds that changed since: those a new chunk added to, and the
 * synonym edges a later batch revived or dropped ($1 the edge mark, $2 the chunk mark, $3 the generation).
 */
export const changedWeightsSql = (s: string) =>
  `SELECT e.id, e.weight FROM ${s}.edges e WHERE e.id <= $1
   AND (e.id IN (SELECT edge_id FROM ${s}.edge_sources WHERE chunk_id > $2)
     OR e.id IN (SELECT edge_id FROM ${s}.synonym_updates WHERE generation > $3))`;

/** A pull's answer: the rows read above `pull.base`, with the marks they bring the mirror to. */
export function pulledChanges(
  marks: RemoteMarks,
  pull: ReturnType<typeof pullBase>,
  rows: RemoteChanges["rows"],
  weights: Record<string, unknown>[],
): RemoteChanges {
  const { base, whole } = pull;
  const top = (list: Record<string, unknown>[], mark: number) =>
    list.reduce((max, r) => Math.max(max, r.id as number), mark);
  return {
    marks: {
      ...marks,
      chunk: top(rows.chunks, base.chunk),
      entity: top(rows.entities, base.entity),
      fact: top(rows.facts, base.fact),
      edge: top(rows.edges, base.edge),
    },
    whole,
    rows,
    weights: weights.map((r) => ({ id: Number(r.id), weight: Number(r.weight) })),
  };
}

type Rows = Record<string, unknown>[];

/** What recall needs, from the rows of chunks, turns, entities, facts and edges (vectors as bytes), in id order. */
export function snapshotOf(
  generation: number,
  rows: { chunks: Rows; turns: Rows; entities: Rows; facts: Rows; edges: Rows },
): StoreSnapshot {
  const turnsOf = new Map<number, Turn[]>();
  for (const t of rows.turns) {
    const chunkId = Number(t.chunk_id);
    let list = turnsOf.get(chunkId);
    if (!list) turnsOf.set(chunkId, (list = []));
    list.push({
      uuid: t.uuid as string,
      role: t.role as Turn["role"],
      ts: t.ts as string,
      start: t.start as number,
      end: t.end as number,
    });
  }
  const chunkRows = rows.chunks as { vector: Uint8Array; model: string }[];
  const { dim, vectors: chunkVectors } = readVectors(chunkRows);
  const factRows = rows.facts as { vector: Uint8Array; model: string }[];
  const { dim: factDim, vectors: factVectors } = readVectors(factRows, dim);
  const n = rows.edges.length;
  const edges = {
    kind: new Uint8Array(n),
    a: new Int32Array(n),
    b: new Int32Array(n),
    weight: new Float64Array(n),
  };
  rows.edges.forEach((r, i) => {
    edges.kind[i] = r.kind as number;
    edges.a[i] = r.a as number;
    edges.b[i] = r.b as number;
    edges.weight[i] = r.weight as number;
  });
  return {
    generation,
    dim: dim || factDim,
    chunks: rows.chunks.map((r) => ({
      id: Number(r.id),
      sessionId: r.session_id as string,
      ts: r.ts as string,
      text: r.text as string,
      graphSource: r.graph_source as GraphSource,
      turns: turnsOf.get(Number(r.id)) ?? [],
    })),
    chunkVectors,
    chunkModels: chunkRows.map((r) => r.model),
    entities: rows.entities.map((r) => ({
      id: Number(r.id),
      phrase: r.phrase as string,
      label: r.label as string,
    })),
    facts: rows.facts.map((r) => ({
      id: Number(r.id),
      subject: r.subject as number,
      predicate: r.predicate as string,
      object: r.object as number,
    })),
    factVectors,
    factModels: factRows.map((r) => r.model),
    edges,
  };
}

/**
 * The reads, counts, LLM cache and usage both shared stores answer alike, over `db`; the LLM cache is
 * kept in memory and written through, its writes (and usage's) awaited before the next write.
 */
export abstract class SqlStoreBase {
  readonly schema: string;
  protected readonly cache = new Map<string, string>();
  /** Cache and usage writes not yet confirmed: awaited before the next write, and by flush(). */
  private pending: Promise<unknown>[] = [];
  private failure: unknown;

  protected constructor(
    private readonly db: SqlReader,
    project: string,
    private readonly writer: string,
  ) {
    this.schema = projectSchema(project);
  }

  protected metaKey(key: string): string {
    return writerMetaKey(key, this.writer);
  }

  /** Loads the LLM cache (get/set are synchronous). */
  protected async loadCache(): Promise<void> {
    for (const r of await this.db.query<{ key: string; value: string }>(
      `SELECT key, value FROM ${this.schema}.llm_cache`,
    ))
      this.cache.set(r.key, r.value);
  }

  /** Waits for the cache and usage writes made so far; throws the first that failed. */
  async flush(): Promise<void> {
    const pending = this.pending;
    this.pending = [];
    await Promise.all(pending);
    if (this.failure) {
      const failure = this.failure;
      this.failure = undefined;
      throw failure;
    }
  }

  protected later(write: Promise<unknown>): void {
    this.pending.push(
      write.catch((error) => {
        this.failure ??= error;
      }),
    );
  }

  /** Forgets the cached LLM results of chunks that went. */
  protected dropCached(hashes: Set<string>): void {
    for (const key of this.cache.keys())
      if (hashes.has(key.slice(key.lastIndexOf(":") + 1))) this.cache.delete(key);
  }

  async state(): Promise<IndexState> {
    const keys = ["offset", "offset_check", "last_indexed", "generation", "review_swept"].map((k) =>
      this.metaKey(k),
    );
    const rows = await this.db.query<{ key: string; value: string }>(
      `SELECT key, value FROM ${this.schema}.meta WHERE key IN (SELECT jsonb_array_elements_text($1::text::jsonb))`,
      [JSON.stringify(keys)],
    );
    const value = (key: string) => rows.find((r) => r.key === this.metaKey(key))?.value;
    return {
      offset: Number(value("offset") ?? 0),
      offsetCheck: value("offset_check") ?? "",
      lastIndexed: value("last_indexed") ?? null,
      generation: Number(value("generation") ?? 0),
      reviewSwept: value("review_swept") === "1",
    };
  }

  async indexedRecords(uuids: string[]): Promise<Set<string>> {
    if (!uuids.length) return new Set();
    const rows = await this.db.query<{ uuid: string }>(
      `SELECT u.uuid FROM jsonb_array_elements_text($1::text::jsonb) AS u(uuid)
       WHERE EXISTS (SELECT 1 FROM ${this.schema}.turns t WHERE t.uuid = u.uuid)
          OR EXISTS (SELECT 1 FROM ${this.schema}.forgotten_records f WHERE f.uuid = u.uuid)`,
      [JSON.stringify(uuids)],
    );
    return new Set(rows.map((r) => r.uuid));
  }

  async forgottenSessions(): Promise<Set<string>> {
    const rows = await this.db.query<{ session_id: string }>(
      `SELECT session_id FROM ${this.schema}.forgotten`,
    );
    return new Set(rows.map((r) => r.session_id));
  }

  /** Record uuids some machine deleted one by one (their chunks gone, never stored again). */
  async forgottenRecords(): Promise<Set<string>> {
    const rows = await this.db.query<{ uuid: string }>(`SELECT uuid FROM ${this.schema}.forgotten_records`);
    return new Set(rows.map((r) => r.uuid));
  }

  async hasSession(sessionId: string): Promise<boolean> {
    const rows = await this.db.query(
      `SELECT 1 AS ok FROM ${this.schema}.chunks WHERE session_id = $1 LIMIT 1`,
      [sessionId],
    );
    return rows.length > 0;
  }

  get(key: string): string | undefined {
    return this.cache.get(key);
  }

  /** Kept in memory at once, written through (awaited before the next write and by flush()). */
  set(key: string, value: string): void {
    this.cache.set(key, value);
    this.later(
      this.db.query(
        `INSERT INTO ${this.schema}.llm_cache(key, chunk_hash, value) VALUES ($1, $2, $3)
         ON CONFLICT (key) DO UPDATE SET chunk_hash = excluded.chunk_hash, value = excluded.value`,
        [key, key.slice(key.lastIndexOf(":") + 1), value],
      ),
    );
  }

  async pendingLlmChunks(limit: number): Promise<{ id: number; hash: string; text: string }[]> {
    const rows = await this.db.query<{ id: number; hash: string; text: string }>(
      `SELECT id, hash, text FROM ${this.schema}.chunks WHERE graph_source = 'llm-pending' ORDER BY id LIMIT $1`,
      [limit],
    );
    return rows.map((r) => ({ ...r, id: Number(r.id) }));
  }

  async summaries(): Promise<SummaryEntry[]> {
    const rows = await this.db.query<Record<string, string>>(
      `SELECT session_id, date, ts, text, source FROM ${this.schema}.summaries ORDER BY ts, id`,
    );
    return rows.map((r) => ({
      sessionId: r.session_id,
      date: r.date,
      ts: r.ts,
      text: r.text,
      source: r.source,
    }));
  }

  async status(): Promise<StoreStatus> {
    const s = this.schema;
    const [c] = await this.db.query<Record<string, number | string>>(
      `SELECT (SELECT count(*) FROM ${s}.chunks) AS chunks,
              (SELECT count(DISTINCT session_id) FROM ${s}.chunks) AS sessions,
              (SELECT count(*) FROM ${s}.entities) AS entities,
              (SELECT count(*) FROM ${s}.facts) AS facts,
              (SELECT count(*) FROM ${s}.edges WHERE kind = 0) AS fact_edges,
              (SELECT count(*) FROM ${s}.edges WHERE kind = 1) AS context_edges,
              (SELECT count(*) FROM ${s}.edges WHERE kind = 2) AS synonym_edges,
              (SELECT count(*) FROM ${s}.chunks WHERE graph_source = 'llm-pending') AS pending,
              (SELECT value FROM ${s}.meta WHERE key = 'last_indexed') AS last_indexed`,
    );
    return {
      chunks: Number(c.chunks),
      sessions: Number(c.sessions),
      entities: Number(c.entities),
      facts: Number(c.facts),
      edges: {
        fact: Number(c.fact_edges),
        context: Number(c.context_edges),
        synonym: Number(c.synonym_edges),
      },
      lastIndexed: (c.last_indexed as string | null) ?? null,
      llmUsage: await this.usage(),
      llmUsageThisMonth: await this.usageOf(`${s}.llm_usage_months WHERE month = $1`, [
        new Date().toISOString().slice(0, 7),
      ]),
      pendingLlm: Number(c.pending),
    };
  }

  private async usageOf(from: string, params: unknown[] = []): Promise<StoreStatus["llmUsage"]> {
    await this.flush();
    return (
      await this.db.query<Record<string, string | number>>(
        `SELECT provider, model, calls, input_tokens, output_tokens FROM ${from} ORDER BY provider, model`,
        params,
      )
    ).map((r) => ({
      provider: String(r.provider),
      model: String(r.model),
      calls: Number(r.calls),
      inputTokens: Number(r.input_tokens),
      outputTokens: Number(r.output_tokens),
    }));
  }

  async usage(): Promise<StoreStatus["llmUsage"]> {
    return this.usageOf(`${this.schema}.llm_usage`);
  }

  /** Waits for pending writes, then closes the connection (close() does the same without waiting). */
  async closeAsync(): Promise<void> {
    try {
      await this.flush();
    } finally {
      await this.db.close();
    }
  }

  close(): void {
    void this.closeAsync().catch(() => {});
  }
}
