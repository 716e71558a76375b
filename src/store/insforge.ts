/**
 * The shared memory store in an InsForge project's database, over its REST API (insforge-client.ts): the
 * same tables as the Postgres store (pg-schema.ts, one Postgres schema per project), so `migrate`, the
 * mirror and recall read the same rows. InsForge runs no transaction across calls, so every write is ONE
 * call: a script that Postgres runs as one implicit transaction. Row ids cannot come back from inside it,
 * so each statement finds the rows it needs by natural key (chunk hash, phrase, fact triple), and the
 * process plans the script from one consistent read made just before. The script starts by taking the
 * project's advisory lock and checking that the write generation is still the one that read saw; if
 * another writer came in between, it fails as a whole and is planned again. A script cut off anywhere
 * (a dropped connection, a killed server) leaves nothing, and one that ran but whose answer was lost is
 * found out by the same check when it is sent again.
 */
import type { LlmUsage } from "../llm/usage.ts";
import { type InsforgeClient, InsforgeSqlError } from "./insforge-client.ts";
import { StoreUnavailableError } from "./pg-client.ts";
import { lit, lockKey, migrationStatements, newerSchemaError, PG_SCHEMA_VERSION } from "./pg-schema.ts";
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
import { EDGE_EPSILON, factKey, readVectors } from "./sqlite.ts";
import {
  type ChunkGraph,
  EDGE_KIND,
  type ForgetResult,
  type GraphSource,
  type IndexBatch,
  type IndexState,
  type NewChunk,
  type StoreSnapshot,
  type SummaryRewrite,
} from "./types.ts";

/**
 * A JSON value inlined in a script: base64, so no text of the memory can end the literal, and none of
 * it trips InsForge's raw-text checks (it refuses any query mentioning `set_config`).
 */
function data(value: unknown): string {
  return `convert_from(decode('${Buffer.from(JSON.stringify(value)).toString("base64")}', 'base64'), 'UTF8')::jsonb`;
}

const base64 = (vector: Float32Array) =>
  Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString("base64");

const CONFLICT = "triforge-conflict";

/** A statement that fails the whole script unless `expression` (one text value) equals `expected`. */
function guard(expression: string, expected: string): string {
  return `SELECT (CASE WHEN coalesce((${expression}), '') = ${lit(expected)} THEN '0' ELSE '${CONFLICT}' END)::int`;
}

function isConflict(error: unknown): boolean {
  return error instanceof InsforgeSqlError && error.message.includes(CONFLICT);
}

/** How often a write is planned again when other writers keep coming in between. */
const MAX_PLANS = 20;

/** Rows a pull asks for at once (and chunks per window of their turns and sources): answers of a few MB. */
const PAGE_ROWS = 5000;

/**
 * Creates or migrates the project's tables: the Postgres store's steps, each batch of them one script
 * that checks the version it starts from (two machines opening the project at once apply a step once).
 * pgvector is left out: the rows carry the exact float32 bytes, and recall ranks in the process.
 */
export async function ensureInsforgeSchema(client: InsforgeClient, schema: string): Promise<void> {
  // Already at this version (every open after the first): one read, and no DDL text, after which InsForge
  // would reload PostgREST's schema.
  const [known] = await client
    .sql<{ v: number | null }>(`SELECT max(version) AS v FROM ${schema}.schema_version`)
    .catch(() => [undefined]);
  if (known && Number(known.v) === PG_SCHEMA_VERSION) return;
  const lock = `SELECT pg_advisory_xact_lock(${lockKey(schema)})`;
  await client.script([
    lock,
    `CREATE SCHEMA IF NOT EXISTS ${schema}`,
    `CREATE TABLE IF NOT EXISTS ${schema}.schema_version(version integer PRIMARY KEY, applied_at text NOT NULL)`,
  ]);
  for (let plan = 0; plan < MAX_PLANS; plan++) {
    const [row] = await client.sql<{ v: number | null }>(
      `SELECT max(version) AS v FROM ${schema}.schema_version`,
    );
    const current = Number(row?.v ?? 0);
    if (current > PG_SCHEMA_VERSION) throw newerSchemaError(schema, current);
    if (current === PG_SCHEMA_VERSION) return;
    const statements = [
      lock,
      guard(`SELECT max(version)::text FROM ${schema}.schema_version`, current ? String(current) : ""),
      ...migrationStatements(schema, false, current),
    ];
    try {
      await client.script(statements);
      return;
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
  }
  throw new StoreUnavailableError(`the tables in ${schema} kept changing while this triforge created them`);
}

interface EdgeDelta {
  kind: number;
  /** A context edge: its chunk's hash; a fact or synonym edge: one of its two phrases. */
  a: string;
  b: string;
  amount: number;
  /** Each chunk's share, by hash (fact edges only: a context edge belongs to its passage). */
  sources: Map<string, number>;
}

/** What a graph addition needs to know of the store, read just before it is planned. */
interface Known {
  phrases: Set<string>;
  /** factKey(subject phrase, predicate, object phrase) of facts already stored. */
  facts: Set<string>;
}

/** What `chunkIds` contributed, as read in one statement before a removal is planned. */
interface RemovalRead {
  sources: [edge: number, chunk: number, amount: number, weight: number][];
  context: [edge: number, entity: number][];
  /** Facts the chunks state, with how many other chunks state them too. */
  facts: [fact: number, others: number][];
  /** Phrases the chunks mention, with how many other passages mention them. */
  entities: [entity: number, others: number, phrase: string][];
  /** Fact and synonym edges at those phrases; facts about them. */
  entityEdges: [edge: number, a: number, b: number][];
  entityFacts: [fact: number, subject: number, object: number, key: string][];
}

export interface InsforgeStoreOptions {
  project: string;
  writer: string;
  /** Only reads (recall, status): the tables are not created and the LLM cache not loaded. */
  reader?: boolean;
  /** false: the LLM cache is not loaded (a writer that only pushes finished batches never asks it). */
  llmCache?: boolean;
  /** Rows per answer of a pull (PAGE_ROWS; tests make it small). */
  pageRows?: number;
}

export class InsforgeMemoryStore extends SqlStoreBase implements RemoteStore {
  readonly backend = "insforge";
  readonly location: string;

  private constructor(
    private readonly client: InsforgeClient,
    private readonly options: InsforgeStoreOptions,
  ) {
    super(client, options.project, options.writer);
    this.location = client.location;
  }

  static async open(client: InsforgeClient, options: InsforgeStoreOptions): Promise<InsforgeMemoryStore> {
    const store = new InsforgeMemoryStore(client, options);
    if (options.reader) return store;
    const s = store.schema;
    await ensureInsforgeSchema(client, s);
    await client.sql(`INSERT INTO ${s}.meta(key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, [
      "store_id",
      crypto.randomUUID(),
    ]);
    if (options.llmCache !== false) await store.loadCache();
    return store;
  }

  private lock(): string {
    return `SELECT pg_advisory_xact_lock(${lockKey(this.schema)})`;
  }

  private bump(key: "generation" | "deletions"): string {
    const s = this.schema;
    return `INSERT INTO ${s}.meta(key, value) VALUES (${lit(key)}, '1') ON CONFLICT (key) DO UPDATE SET value = (${s}.meta.value::bigint + 1)::text`;
  }

  private setMeta(key: string, value: string): string {
    return `INSERT INTO ${this.schema}.meta(key, value) VALUES (${lit(this.metaKey(key))}, ${lit(value)})
      ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
  }

  private generationOf = () => `SELECT value FROM ${this.schema}.meta WHERE key = 'generation'`;

  /**
   * One write: `plan` reads what it needs (with the generation it saw) and returns the statements; they
   * are sent as one script behind the lock and the generation check, planned again when another writer
   * changed the memory meanwhile. Every write bumps the generation.
   */
  private async write<T>(
    plan: () => Promise<{ generation: string; statements: string[]; result: T }>,
  ): Promise<T> {
    await this.flush();
    for (let attempt = 0; attempt < MAX_PLANS; attempt++) {
      const { generation, statements, result } = await plan();
      try {
        await this.client.script([
          this.lock(),
          guard(this.generationOf(), generation),
          ...statements,
          this.bump("generation"),
        ]);
        return result;
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
    }
    throw new StoreUnavailableError(
      `insforge at ${this.location}: other writers kept changing the memory; try again`,
    );
  }

  async setState(state: Partial<IndexState>): Promise<void> {
    await this.flush();
    const statements: string[] = [];
    if (state.offset !== undefined) statements.push(this.setMeta("offset", String(state.offset)));
    if (state.offsetCheck !== undefined) statements.push(this.setMeta("offset_check", state.offsetCheck));
    if (state.lastIndexed) statements.push(this.setMeta("last_indexed", state.lastIndexed));
    if (state.reviewSwept !== undefined)
      statements.push(this.setMeta("review_swept", state.reviewSwept ? "1" : "0"));
    if (statements.length) await this.client.script(statements);
  }

  async entityVectors(): Promise<{ phrases: string[]; vectors: Float32Array; models: string[] }> {
    const rows = vectorRows(
      await this.client.sql<{ phrase: string; model: string; vector: string }>(
        `SELECT phrase, model, encode(vector, 'base64') AS vector FROM ${this.schema}.entities ORDER BY id`,
      ),
    );
    return {
      phrases: rows.map((r) => r.phrase),
      vectors: readVectors(rows).vectors,
      models: rows.map((r) => r.model),
    };
  }

  /**
   * In one statement: the generation, which of `hashes` are stored, and which phrases and facts of the
   * graphs (and synonym phrases) are stored already.
   */
  private async readKnown(
    hashes: string[],
    graphs: ChunkGraph[],
    synonyms: string[],
    uuids: string[] = [],
  ): Promise<{ generation: string; hashes: Set<string>; known: Known; blocked: Set<string> }> {
    const s = this.schema;
    const phrases = [...new Set([...graphs.flatMap((g) => g.entities.map((e) => e.phrase)), ...synonyms])];
    const facts = graphs.flatMap((g) => g.facts.map((f) => ({ s: f.subject, p: f.predicate, o: f.object })));
    const [row] = await this.client.sql<{
      generation: string | null;
      hashes: string[];
      phrases: string[];
      facts: string[][];
      blocked: string[];
    }>(
      `SELECT (${this.generationOf()}) AS generation,
        (SELECT coalesce(json_agg(c.hash), '[]'::json) FROM ${s}.chunks c
          WHERE c.hash IN (SELECT jsonb_array_elements_text($1::text::jsonb))) AS hashes,
        (SELECT coalesce(json_agg(e.phrase), '[]'::json) FROM ${s}.entities e
          WHERE e.phrase IN (SELECT jsonb_array_elements_text($2::text::jsonb))) AS phrases,
        (SELECT coalesce(json_agg(json_build_array(x.s, x.p, x.o)), '[]'::json)
          FROM (SELECT DISTINCT * FROM jsonb_to_recordset($3::text::jsonb) AS r(s text, p text, o text)) x
          JOIN ${s}.entities es ON es.phrase = x.s JOIN ${s}.entities eo ON eo.phrase = x.o
          JOIN ${s}.facts f ON f.subject = es.id AND f.predicate = x.p AND f.object = eo.id) AS facts,
        (SELECT coalesce(json_agg(f.uuid), '[]'::json) FROM ${s}.forgotten_records f
          WHERE f.uuid IN (SELECT jsonb_array_elements_text($4::text::jsonb))) AS blocked`,
      [JSON.stringify(hashes), JSON.stringify(phrases), JSON.stringify(facts), JSON.stringify(uuids)],
    );
    return {
      generation: row?.generation ?? "",
      hashes: new Set(row?.hashes ?? []),
      known: {
        phrases: new Set(row?.phrases ?? []),
        facts: new Set((row?.facts ?? []).map(([subject, p, o]) => factKey(subject, p, o))),
      },
      blocked: new Set(row?.blocked ?? []),
    };
  }

  async writeBatch(batch: IndexBatch): Promise<void> {
    const s = this.schema;
    await this.write(async () => {
      const { generation, hashes, known, blocked } = await this.readKnown(
        batch.chunks.map((c) => c.hash),
        batch.chunks.map((c) => c.graph),
        [...batch.synonyms, ...(batch.synonymsDropped ?? [])].flatMap((p) => [p.a, p.b]),
        batch.chunks.flatMap((c) => c.turns.map((t) => t.uuid)),
      );
      // Already stored (by another writer, or before a crash): a chunk adds nothing the second time. A
      // record deleted on some machine (forgetRecords) is stored by no writer again.
      const fresh: NewChunk[] = [];
      const seen = new Set(hashes);
      for (const c of batch.chunks) {
        if (seen.has(c.hash) || c.turns.some((t) => blocked.has(t.uuid))) continue;
        seen.add(c.hash);
        fresh.push(c);
      }
      const statements: string[] = [];
      if (fresh.length) {
        statements.push(
          `INSERT INTO ${s}.chunks(hash, session_id, ts, text, graph_source, model, vector)
           SELECT x.hash, x.session_id, x.ts, x.text, x.graph_source, ${lit(batch.model)}, decode(x.vector, 'base64')
           FROM jsonb_to_recordset(${data(
             fresh.map((c, i) => ({
               i,
               hash: c.hash,
               session_id: c.sessionId,
               ts: c.ts,
               text: c.text,
               graph_source: c.graphSource,
               vector: base64(c.vector),
             })),
           )}) AS x(i integer, hash text, session_id text, ts text, text text, graph_source text, vector text)
           ORDER BY x.i`,
        );
        const turns = fresh.flatMap((c) => c.turns.map((t, ord) => ({ ...t, ord, hash: c.hash })));
        if (turns.length)
          statements.push(
            `INSERT INTO ${s}.turns(uuid, chunk_id, ord, role, ts, start, "end")
             SELECT x.uuid, c.id, x.ord, x.role, x.ts, x.start, x."end"
             FROM jsonb_to_recordset(${data(turns)}) AS x(uuid text, hash text, ord integer, role text, ts text,
               start integer, "end" integer)
             JOIN ${s}.chunks c ON c.hash = x.hash ON CONFLICT (uuid) DO NOTHING`,
          );
      }
      statements.push(
        ...this.addGraphs(
          fresh.map((c) => ({ hash: c.hash, graph: c.graph })),
          batch,
          known,
          Number(generation || 0) + 1,
        ),
      );
      // A batch another writer stored first (every chunk already there) adds no second summary entry.
      const freshSessions = new Set(fresh.map((c) => c.sessionId));
      const summaries = batch.chunks.length
        ? batch.summaries.filter((e) => freshSessions.has(e.sessionId))
        : batch.summaries;
      if (summaries.length)
        statements.push(
          `INSERT INTO ${s}.summaries(session_id, date, ts, text, source)
           SELECT x.session_id, x.date, x.ts, x.text, x.source
           FROM jsonb_to_recordset(${data(summaries.map((e, i) => ({ i, session_id: e.sessionId, ...e })))})
             AS x(i integer, session_id text, date text, ts text, text text, source text)
           ORDER BY x.i`,
        );
      return { generation, statements, result: undefined };
    });
  }

  /**
   * The statements that add chunks' graph contributions (the chunks' rows exist by then, found by hash):
   * the Postgres store's addGraphs, in the same order so row ids come out the same as SQLite's, with
   * phrases, facts and edges named by their natural keys instead of row ids.
   */
  private addGraphs(
    items: { hash: string; graph: ChunkGraph }[],
    vectors: Pick<IndexBatch, "model" | "entityVectors" | "factVectors" | "synonyms" | "synonymsDropped">,
    known: Known,
    /** The generation this write commits (synonym edges it changes are noted with it). */
    generation: number,
  ): string[] {
    const s = this.schema;
    const statements: string[] = [];
    const labels = new Map<string, string>();
    for (const { graph } of items)
      for (const e of graph.entities) if (!labels.has(e.phrase)) labels.set(e.phrase, e.label);
    const newPhrases = [...labels].filter(([phrase]) => !known.phrases.has(phrase));
    for (const [phrase] of newPhrases)
      if (!vectors.entityVectors.has(phrase)) throw new Error(`no vector for new phrase '${phrase}'`);
    if (newPhrases.length)
      statements.push(
        `INSERT INTO ${s}.entities(phrase, label, model, vector)
         SELECT x.phrase, x.label, ${lit(vectors.model)}, decode(x.vector, 'base64')
         FROM jsonb_to_recordset(${data(
           newPhrases.map(([phrase, label], i) => ({
             i,
             phrase,
             label,
             vector: base64(vectors.entityVectors.get(phrase) as Float32Array),
           })),
         )}) AS x(i integer, phrase text, label text, vector text)
         ORDER BY x.i`,
      );
    const stored = (phrase: string) => known.phrases.has(phrase) || labels.has(phrase);

    const deltas = new Map<string, EdgeDelta>();
    const add = (kind: number, a: string, b: string, hash: string) => {
      const key = `${kind}\u0001${a}\u0001${b}`;
      let delta = deltas.get(key);
      if (!delta) deltas.set(key, (delta = { kind, a, b, amount: 0, sources: new Map() }));
      delta.amount += 1;
      if (kind !== EDGE_KIND.context) delta.sources.set(hash, (delta.sources.get(hash) ?? 0) + 1);
    };
    // Facts by (subject, predicate, object) phrase, in the order chunks state them.
    const facts = new Map<string, { s: string; p: string; o: string; vector?: Float32Array }>();
    const stated: { key: string; hash: string }[] = [];
    for (const { hash, graph } of items) {
      const local = new Set<string>();
      for (const e of graph.entities) {
        if (local.has(e.phrase)) continue;
        local.add(e.phrase);
        add(EDGE_KIND.context, hash, e.phrase, hash);
      }
      const statedHere = new Set<string>();
      for (const f of graph.facts) {
        if (!local.has(f.subject) || !local.has(f.object) || f.subject === f.object) continue;
        const key = factKey(f.subject, f.predicate, f.object);
        if (!facts.has(key))
          facts.set(key, { s: f.subject, p: f.predicate, o: f.object, vector: vectors.factVectors.get(key) });
        if (statedHere.has(key)) continue;
        statedHere.add(key);
        stated.push({ key, hash });
        // Undirected: one edge per phrase pair whichever way the fact runs (the SQL orders it by row id).
        const [a, b] = f.subject < f.object ? [f.subject, f.object] : [f.object, f.subject];
        add(EDGE_KIND.fact, a, b, hash);
      }
    }
    const newFacts = [...facts].filter(([key]) => !known.facts.has(key));
    for (const [, f] of newFacts)
      if (!f.vector) throw new Error(`no vector for new fact '${f.s} ${f.p} ${f.o}'`);
    if (newFacts.length)
      statements.push(
        `INSERT INTO ${s}.facts(subject, predicate, object, model, vector)
         SELECT es.id, x.p, eo.id, ${lit(vectors.model)}, decode(x.vector, 'base64')
         FROM jsonb_to_recordset(${data(
           newFacts.map(([, f], i) => ({
             i,
             s: f.s,
             p: f.p,
             o: f.o,
             vector: base64(f.vector as Float32Array),
           })),
         )}) AS x(i integer, s text, p text, o text, vector text)
         JOIN ${s}.entities es ON es.phrase = x.s JOIN ${s}.entities eo ON eo.phrase = x.o
         ORDER BY x.i`,
      );
    if (stated.length)
      statements.push(
        `INSERT INTO ${s}.fact_sources(fact_id, chunk_id)
         SELECT f.id, c.id FROM jsonb_to_recordset(${data(
           stated.map(({ key, hash }) => {
             const f = facts.get(key) as { s: string; p: string; o: string };
             return { s: f.s, p: f.p, o: f.o, hash };
           }),
         )}) AS x(s text, p text, o text, hash text)
         JOIN ${s}.entities es ON es.phrase = x.s JOIN ${s}.entities eo ON eo.phrase = x.o
         JOIN ${s}.facts f ON f.subject = es.id AND f.predicate = x.p AND f.object = eo.id
         JOIN ${s}.chunks c ON c.hash = x.hash ON CONFLICT DO NOTHING`,
      );
    // An edge by natural key: a context edge is (chunk, phrase), others a phrase pair ordered by row id.
    // Rows travel as arrays and chunks as their place in `items` (the edges are most of a batch's bytes).
    const chunkOf = new Map(items.map(({ hash }, i) => [hash, i]));
    const resolved = (
      rows: (string | number | null)[][],
    ) => `h AS MATERIALIZED (SELECT (t.ord - 1)::int AS ci, c.id
        FROM jsonb_array_elements_text(${data(items.map((item) => item.hash))}) WITH ORDINALITY AS t(hash, ord)
        JOIN ${s}.chunks c ON c.hash = t.hash),
      x AS MATERIALIZED (SELECT (v->>0)::int AS i, (v->>1)::smallint AS kind, v->>2 AS a, v->>3 AS b,
          (v->>4)::double precision AS w, (v->>5)::int AS ci FROM jsonb_array_elements(${data(rows)}) AS v),
      r AS (SELECT x.i, x.kind, x.w, x.ci,
          CASE WHEN x.kind = ${EDGE_KIND.context} THEN h.id ELSE least(ea.id, eb.id) END AS a,
          CASE WHEN x.kind = ${EDGE_KIND.context} THEN eb.id ELSE greatest(ea.id, eb.id) END AS b
        FROM x JOIN ${s}.entities eb ON eb.phrase = x.b
        LEFT JOIN h ON h.ci = x.ci
        LEFT JOIN ${s}.entities ea ON ea.phrase = x.a)`;
    const absent = `NOT EXISTS (SELECT 1 FROM ${s}.edges e WHERE e.kind = r.kind AND e.a = r.a AND e.b = r.b)`;
    const ends = (d: EdgeDelta) =>
      d.kind === EDGE_KIND.context ? [null, d.b, chunkOf.get(d.a) as number] : [d.a, d.b, null];
    if (deltas.size) {
      const list = [...deltas.values()].map((d, i) => {
        const [a, b, ci] = ends(d);
        return [i, d.kind, a, b, d.amount, ci];
      });
      // Existing edges first, then the new ones in order: no sequence value is spent on a conflict.
      statements.push(
        `WITH ${resolved(list)} UPDATE ${s}.edges e SET weight = e.weight + r.w FROM r
         WHERE e.kind = r.kind AND e.a = r.a AND e.b = r.b`,
        `WITH ${resolved(list)} INSERT INTO ${s}.edges(kind, a, b, weight)
         SELECT r.kind, r.a, r.b, r.w FROM r WHERE ${absent} ORDER BY r.i`,
      );
      const shares = [...deltas.values()].flatMap((d) =>
        [...d.sources].map(([hash, amount]) => [0, d.kind, d.a, d.b, amount, chunkOf.get(hash) as number]),
      );
      if (shares.length)
        statements.push(
          `WITH ${resolved(shares)} INSERT INTO ${s}.edge_sources(edge_id, chunk_id, amount)
           SELECT e.id, h.id, r.w FROM r JOIN ${s}.edges e ON e.kind = r.kind AND e.a = r.a AND e.b = r.b
           JOIN h ON h.ci = r.ci
           ON CONFLICT (edge_id, chunk_id) DO UPDATE SET amount = ${s}.edge_sources.amount + excluded.amount`,
        );
    }
    // As the SQLite store: a synonym edge added again takes its new weight (revived), a dropped one keeps
    // its row at weight 0, and each change to an existing row is noted with the generation it commits.
    const pairs = new Set<string>();
    const synonymRows = (list: { a: string; b: string; score?: number }[]) => {
      const rows: (string | number | null)[][] = [];
      for (const p of list) {
        if (!stored(p.a) || !stored(p.b) || p.a === p.b) continue;
        const pair = p.a < p.b ? `${p.a}\u0001${p.b}` : `${p.b}\u0001${p.a}`;
        if (pairs.has(pair)) continue;
        pairs.add(pair);
        rows.push([rows.length, EDGE_KIND.synonym, p.a, p.b, p.score ?? 0, null]);
      }
      return rows;
    };
    const noted = (changed: string) =>
      `INSERT INTO ${s}.synonym_updates(edge_id, generation) SELECT id, ${generation} FROM ${changed}
       ON CONFLICT (edge_id) DO UPDATE SET generation = excluded.generation`;
    const setWeight = (rows: (string | number | null)[][], weight: string) =>
      `WITH ${resolved(rows)}, changed AS (UPDATE ${s}.edges e SET weight = ${weight} FROM r
         WHERE e.kind = r.kind AND e.a = r.a AND e.b = r.b RETURNING e.id) ${noted("changed")}`;
    const synonyms = synonymRows(vectors.synonyms);
    if (synonyms.length)
      statements.push(
        setWeight(synonyms, "r.w"),
        `WITH ${resolved(synonyms)} INSERT INTO ${s}.edges(kind, a, b, weight)
         SELECT r.kind, r.a, r.b, r.w FROM r WHERE ${absent} ORDER BY r.i`,
      );
    pairs.clear();
    const dropped = synonymRows(vectors.synonymsDropped ?? []);
    if (dropped.length) statements.push(setWeight(dropped, "0"));
    return statements;
  }

  /** What chunks contributed, with what the removal needs to plan (one statement: one consistent view). */
  private async readRemoval(
    chunkSet: string,
    params: unknown[],
  ): Promise<{ generation: string; removal: RemovalRead }> {
    const s = this.schema;
    const touched = `(SELECT b FROM ${s}.edges WHERE kind = ${EDGE_KIND.context} AND a IN ${chunkSet})`;
    const [row] = await this.client.sql<Record<string, unknown>>(
      `SELECT (${this.generationOf()}) AS generation,
        (SELECT coalesce(json_agg(json_build_array(x.edge_id, x.chunk_id, x.amount, e.weight)), '[]'::json)
          FROM ${s}.edge_sources x JOIN ${s}.edges e ON e.id = x.edge_id WHERE x.chunk_id IN ${chunkSet}) AS sources,
        (SELECT coalesce(json_agg(json_build_array(id, b)), '[]'::json)
          FROM ${s}.edges WHERE kind = ${EDGE_KIND.context} AND a IN ${chunkSet}) AS context,
        (SELECT coalesce(json_agg(json_build_array(f.fact_id,
            (SELECT count(*) FROM ${s}.fact_sources o WHERE o.fact_id = f.fact_id AND o.chunk_id NOT IN ${chunkSet}))), '[]'::json)
          FROM ${s}.fact_sources f WHERE f.chunk_id IN ${chunkSet}) AS facts,
        (SELECT coalesce(json_agg(json_build_array(e.id,
            (SELECT count(*) FROM ${s}.edges o WHERE o.kind = ${EDGE_KIND.context} AND o.b = e.id AND o.a NOT IN ${chunkSet}),
            e.phrase)), '[]'::json)
          FROM ${s}.entities e WHERE e.id IN ${touched}) AS entities,
        (SELECT coalesce(json_agg(json_build_array(id, a, b)), '[]'::json) FROM ${s}.edges
          WHERE kind <> ${EDGE_KIND.context} AND (a IN ${touched} OR b IN ${touched})) AS entity_edges,
        (SELECT coalesce(json_agg(json_build_array(f.id, f.subject, f.object, es.phrase || chr(1) || f.predicate || chr(1) || eo.phrase)), '[]'::json)
          FROM ${s}.facts f JOIN ${s}.entities es ON es.id = f.subject JOIN ${s}.entities eo ON eo.id = f.object
          WHERE f.subject IN ${touched} OR f.object IN ${touched}) AS entity_facts`,
      params,
    );
    const list = <T>(value: unknown) => (value ?? []) as T[];
    return {
      generation: (row?.generation as string | null) ?? "",
      removal: {
        sources: list<RemovalRead["sources"][number]>(row?.sources).map((r) => r.map(Number) as never),
        context: list<RemovalRead["context"][number]>(row?.context).map((r) => r.map(Number) as never),
        facts: list<RemovalRead["facts"][number]>(row?.facts).map((r) => r.map(Number) as never),
        entities: list<[number, number, string]>(row?.entities).map(([id, n, phrase]) => [
          Number(id),
          Number(n),
          phrase,
        ]),
        entityEdges: list<RemovalRead["entityEdges"][number]>(row?.entity_edges).map(
          (r) => r.map(Number) as never,
        ),
        entityFacts: list<[number, number, number, string]>(row?.entity_facts).map(([id, a, b, key]) => [
          Number(id),
          Number(a),
          Number(b),
          key,
        ]),
      },
    };
  }

  /**
   * The statements that subtract exactly what `chunkIds` contributed (the Postgres store's
   * removeChunkGraph, decided here from the read instead of from RETURNING rows), its counts, and what
   * it removes that a graph added in the same script must not take as stored.
   */
  private removeChunkGraph(
    chunkIds: number[],
    read: RemovalRead,
  ): {
    statements: string[];
    result: Omit<ForgetResult, "chunks">;
    gonePhrases: Set<string>;
    goneFacts: Set<string>;
  } {
    const s = this.schema;
    const ids = (list: Iterable<number>) => `(${[...list].join(", ") || "NULL"})`;
    const statements = [this.bump("deletions")];
    const order = new Map(chunkIds.map((id, i) => [id, i]));
    const byEdge = new Map<number, { chunk: number; amount: number; weight: number }[]>();
    for (const [edge, chunk, amount, weight] of read.sources) {
      let list = byEdge.get(edge);
      if (!list) byEdge.set(edge, (list = []));
      list.push({ chunk, amount, weight });
    }
    let edgesRemoved = 0;
    let edgesLowered = 0;
    const lowered: { id: number; w: number }[] = [];
    const goneEdges = new Set<number>();
    for (const [id, shares] of byEdge) {
      shares.sort((x, y) => (order.get(x.chunk) ?? 0) - (order.get(y.chunk) ?? 0));
      const weight = shares[0].weight - shares.reduce((sum, x) => sum + x.amount, 0);
      if (weight <= EDGE_EPSILON) {
        goneEdges.add(id);
        edgesRemoved++;
        edgesLowered += shares.length - 1;
      } else {
        lowered.push({ id, w: weight });
        edgesLowered += shares.length;
      }
    }
    if (lowered.length)
      statements.push(
        `UPDATE ${s}.edges e SET weight = x.w FROM jsonb_to_recordset(${data(lowered)}) AS x(id integer, w double precision)
         WHERE e.id = x.id`,
      );
    if (goneEdges.size) statements.push(`DELETE FROM ${s}.edges WHERE id IN ${ids(goneEdges)}`);
    const chunks = ids(chunkIds);
    statements.push(
      `DELETE FROM ${s}.edge_sources WHERE chunk_id IN ${chunks}`,
      `DELETE FROM ${s}.edges WHERE kind = ${EDGE_KIND.context} AND a IN ${chunks}`,
      `DELETE FROM ${s}.fact_sources WHERE chunk_id IN ${chunks}`,
    );
    edgesRemoved += read.context.length;
    const goneFactIds = new Set(read.facts.filter(([, others]) => others === 0).map(([fact]) => fact));
    let facts = goneFactIds.size;
    const orphans = read.entities.filter(([, others]) => others === 0);
    const orphanIds = new Set(orphans.map(([id]) => id));
    // No passage mentions these phrases any more: they go, with their synonym and fact edges and facts.
    const orphanEdges = read.entityEdges
      .filter(([id, a, b]) => !goneEdges.has(id) && (orphanIds.has(a) || orphanIds.has(b)))
      .map(([id]) => id);
    edgesRemoved += orphanEdges.length;
    const orphanFacts = read.entityFacts.filter(
      ([id, a, b]) => !goneFactIds.has(id) && (orphanIds.has(a) || orphanIds.has(b)),
    );
    facts += orphanFacts.length;
    for (const [id] of orphanFacts) goneFactIds.add(id);
    if (goneFactIds.size) statements.push(`DELETE FROM ${s}.facts WHERE id IN ${ids(goneFactIds)}`);
    if (orphanIds.size) statements.push(`DELETE FROM ${s}.entities WHERE id IN ${ids(orphanIds)}`);
    if (orphanEdges.length)
      statements.push(
        `DELETE FROM ${s}.edges WHERE id IN ${ids(orphanEdges)}`,
        `DELETE FROM ${s}.edge_sources WHERE edge_id IN ${ids(orphanEdges)}`,
      );
    const goneFactKeys = new Set(
      read.entityFacts.filter(([id]) => goneFactIds.has(id)).map(([, , , key]) => key),
    );
    return {
      statements,
      result: { facts, entities: orphanIds.size, edgesRemoved, edgesLowered },
      gonePhrases: new Set(orphans.map(([, , phrase]) => phrase)),
      goneFacts: goneFactKeys,
    };
  }

  async replaceChunkGraph(
    chunkId: number,
    graph: ChunkGraph,
    source: GraphSource,
    vectors: Omit<IndexBatch, "chunks" | "summaries">,
  ): Promise<void> {
    const s = this.schema;
    await this.write(async () => {
      const id = Math.trunc(Number(chunkId));
      const [chunk] = await this.client.sql<{ hash: string }>(`SELECT hash FROM ${s}.chunks WHERE id = $1`, [
        id,
      ]);
      if (!chunk) throw new Error(`no chunk ${chunkId} in the memory`);
      const { generation, removal } = await this.readRemoval(`(${id})`, []);
      const { known } = await this.readKnown(
        [],
        [graph],
        [...vectors.synonyms, ...(vectors.synonymsDropped ?? [])].flatMap((p) => [p.a, p.b]),
      );
      const removed = this.removeChunkGraph([id], removal);
      // A fact whose phrases outlive the removal is still stored only if the removal keeps it.
      for (const phrase of removed.gonePhrases) known.phrases.delete(phrase);
      for (const key of removed.goneFacts) known.facts.delete(key);
      const statements = [
        ...removed.statements,
        ...this.addGraphs([{ hash: chunk.hash, graph }], vectors, known, Number(generation || 0) + 1),
        `UPDATE ${s}.chunks SET graph_source = ${lit(source)} WHERE id = ${id}`,
      ];
      return { generation, statements, result: undefined };
    });
  }

  async forgetSession(sessionId: string): Promise<ForgetResult> {
    const s = this.schema;
    const result = await this.write(async () => {
      const chunks = await this.client.sql<{ id: number; hash: string }>(
        `SELECT id, hash FROM ${s}.chunks WHERE session_id = $1 ORDER BY id`,
        [sessionId],
      );
      const ids = chunks.map((c) => Number(c.id));
      const { generation, removal } = await this.readRemoval(
        `(SELECT id FROM ${s}.chunks WHERE session_id = $1)`,
        [sessionId],
      );
      // The chunks read first must be the ones the removal read saw (no writer in between).
      const removed = this.removeChunkGraph(ids, removal);
      const set = `(${ids.join(", ") || "NULL"})`;
      const statements = [
        `INSERT INTO ${s}.forgotten(session_id, at) VALUES (${lit(sessionId)}, ${lit(new Date().toISOString())})
         ON CONFLICT DO NOTHING`,
        guard(
          `SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM ${s}.chunks WHERE session_id = ${lit(sessionId)}`,
          ids.join(","),
        ),
        ...removed.statements,
        `DELETE FROM ${s}.turns WHERE chunk_id IN ${set}`,
        `DELETE FROM ${s}.llm_cache WHERE chunk_hash IN (SELECT jsonb_array_elements_text(${data(chunks.map((c) => c.hash))}))`,
        `DELETE FROM ${s}.chunks WHERE id IN ${set}`,
        `DELETE FROM ${s}.summaries WHERE session_id = ${lit(sessionId)}`,
      ];
      return {
        generation,
        statements,
        result: { result: { chunks: chunks.length, ...removed.result }, hashes: chunks.map((c) => c.hash) },
      };
    });
    this.dropCached(new Set(result.hashes));
    return result.result;
  }

  /**
   * Records deleted one by one on some machine (the web page's Delete): every chunk holding one goes as
   * SQLite's forgetChunk removes it (its graph weight exactly, turns, cached LLM results, the summary
   * lines `rewrite` traces to it), and the uuids are remembered, so no writer stores them again. How
   * many chunks went. `rewrite` runs here, on the entries read with the chunks.
   */
  async forgetRecords(uuids: string[], rewrite: SummaryRewrite): Promise<number> {
    if (!uuids.length) return 0;
    const s = this.schema;
    const result = await this.write(async () => {
      const [row] = await this.client.sql<{
        generation: string | null;
        chunks: [number, string, string, string][] | null;
        turns: string[] | null;
        summaries: [number, string, string][] | null;
        texts: [number, string, string][] | null;
      }>(
        `WITH gone AS (SELECT DISTINCT c.id, c.hash, c.session_id, c.text FROM ${s}.chunks c
            JOIN ${s}.turns t ON t.chunk_id = c.id WHERE t.uuid IN (SELECT jsonb_array_elements_text($1::text::jsonb)))
         SELECT (${this.generationOf()}) AS generation,
          (SELECT json_agg(json_build_array(id, hash, session_id, text) ORDER BY id) FROM gone) AS chunks,
          (SELECT json_agg(uuid) FROM ${s}.turns WHERE chunk_id IN (SELECT id FROM gone)) AS turns,
          (SELECT json_agg(json_build_array(id, session_id, text) ORDER BY id) FROM ${s}.summaries
            WHERE session_id IN (SELECT session_id FROM gone)) AS summaries,
          (SELECT json_agg(json_build_array(id, session_id, text) ORDER BY id) FROM ${s}.chunks
            WHERE session_id IN (SELECT session_id FROM gone)) AS texts`,
        [JSON.stringify(uuids)],
      );
      const generation = row?.generation ?? "";
      const chunks = (row?.chunks ?? []).map(([id, hash, sessionId, text]) => ({
        id: Number(id),
        hash,
        sessionId,
        text,
      }));
      const ids = chunks.map((c) => c.id);
      // The chunks' other records go with them, as a chunk deleted here takes all its turns.
      const at = new Date().toISOString();
      const statements = [
        `INSERT INTO ${s}.forgotten_records(uuid, at)
         SELECT DISTINCT value, ${lit(at)} FROM jsonb_array_elements_text(${data([...uuids, ...(row?.turns ?? [])])})
         ON CONFLICT DO NOTHING`,
      ];
      if (ids.length) {
        const { removal } = await this.readRemoval(`(${ids.join(", ")})`, []);
        statements.push(...this.removeChunkGraph(ids, removal).statements);
        const set = `(${ids.join(", ")})`;
        statements.push(
          `DELETE FROM ${s}.turns WHERE chunk_id IN ${set}`,
          `DELETE FROM ${s}.llm_cache WHERE chunk_hash IN (SELECT jsonb_array_elements_text(${data(chunks.map((c) => c.hash))}))`,
          `DELETE FROM ${s}.chunks WHERE id IN ${set}`,
        );
        // The session's summary entries as the Postgres store rewrites them, one removed chunk after another.
        const removed = new Set(ids);
        const summaries = new Map(
          (row?.summaries ?? []).map(([id, sessionId, text]) => [Number(id), { sessionId, text }]),
        );
        const before = new Map([...summaries].map(([id, e]) => [id, e.text]));
        for (const chunk of chunks) {
          const kept = (row?.texts ?? [])
            .filter(([id, sessionId]) => sessionId === chunk.sessionId && !removed.has(Number(id)))
            .map(([, , text]) => text);
          for (const [id, entry] of summaries) {
            if (entry.sessionId !== chunk.sessionId) continue;
            const text = rewrite(entry.text, chunk.text, kept);
            if (text === entry.text) continue;
            if (text.trim()) entry.text = text;
            else summaries.delete(id);
          }
        }
        const changed = [...summaries].filter(([id, e]) => e.text !== before.get(id));
        const deleted = [...before.keys()].filter((id) => !summaries.has(id));
        if (changed.length)
          statements.push(
            `UPDATE ${s}.summaries x SET text = y.text FROM jsonb_to_recordset(${data(
              changed.map(([id, e]) => ({ id, text: e.text })),
            )}) AS y(id integer, text text) WHERE x.id = y.id`,
          );
        if (deleted.length) statements.push(`DELETE FROM ${s}.summaries WHERE id IN (${deleted.join(", ")})`);
      }
      return { generation, statements, result: chunks };
    });
    this.dropCached(new Set(result.map((c) => c.hash)));
    return result.length;
  }

  async replaceSummaryLine(sessionId: string, line: string, replacement: string): Promise<number> {
    const s = this.schema;
    return this.write(async () => {
      const [row] = await this.client.sql<{ generation: string | null; entries: [number, string][] | null }>(
        `SELECT (${this.generationOf()}) AS generation,
          (SELECT json_agg(json_build_array(id, text) ORDER BY id) FROM ${s}.summaries WHERE session_id = $1) AS entries`,
        [sessionId],
      );
      const changed: { id: number; text: string }[] = [];
      for (const [id, text] of row?.entries ?? []) {
        const lines = text.split("\n");
        const at = lines.indexOf(line);
        if (at < 0) continue;
        lines[at] = replacement;
        changed.push({ id: Number(id), text: lines.join("\n") });
      }
      const statements = changed.length
        ? [
            `UPDATE ${s}.summaries x SET text = y.text FROM jsonb_to_recordset(${data(changed)}) AS y(id integer, text text)
             WHERE x.id = y.id`,
          ]
        : [];
      return { generation: row?.generation ?? "", statements, result: changed.length };
    });
  }

  /** One call: recall asks for the marks before every pull. A project not created yet has none. */
  async marks(): Promise<RemoteMarks> {
    let rows: { key: string; value: string }[];
    try {
      rows = await this.client.sql<{ key: string; value: string }>(marksSql(this.schema));
    } catch (error) {
      if (error instanceof InsforgeSqlError && /does not exist/.test(error.message))
        return { store: "", generation: 0, deletions: 0 };
      throw error;
    }
    return marksOf(rows);
  }

  async schemaVersion(): Promise<number> {
    const [row] = await this.client.sql<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [
      `${this.schema}.schema_version`,
    ]);
    if (!row?.ok) return 0;
    const [version] = await this.client.sql<{ v: number | null }>(
      `SELECT max(version) AS v FROM ${this.schema}.schema_version`,
    );
    return Number(version?.v ?? 0);
  }

  /**
   * The rows a mirror pulled at `since` lacks (see RemoteStore). InsForge gives no consistent view across
   * calls, so the tables are read one call each between two readings of the marks, and read again when
   * a write came in between (every write bumps the generation).
   */
  async changesSince(since: MirrorMarks | undefined): Promise<RemoteChanges> {
    for (let attempt = 0; attempt < MAX_PLANS; attempt++) {
      const marks = await this.marks();
      const changes = await this.readChanges(since, marks);
      const after = await this.marks();
      if (
        after.generation === marks.generation &&
        after.deletions === marks.deletions &&
        after.store === marks.store
      )
        return changes;
    }
    throw new StoreUnavailableError(
      `insforge at ${this.location}: the memory kept changing while it was read; try again`,
    );
  }

  private async readChanges(since: MirrorMarks | undefined, marks: RemoteMarks): Promise<RemoteChanges> {
    const s = this.schema;
    const pull = pullBase(since, marks);
    const { base } = pull;
    if (!marks.store) return emptyChanges(marks, pull);
    const read = async (sql: string, params: unknown[], numbers: string[]) => {
      const rows = await this.client.sql<Record<string, unknown>>(sql, params);
      for (const r of rows) {
        for (const c of numbers) r[c] = Number(r[c]);
        if (typeof r.vector === "string") r.vector = new Uint8Array(Buffer.from(r.vector, "base64"));
      }
      return rows;
    };
    // Bounded answers, whatever the memory's size: rows by id in pages, a chunk's rows by windows of chunks.
    const page = this.options.pageRows ?? PAGE_ROWS;
    const byId = async (columns: string, table: string, after: number, numbers: string[]) => {
      const out: Record<string, unknown>[] = [];
      for (let cursor = after; ; ) {
        const rows = await read(
          `SELECT ${columns} FROM ${s}.${table} WHERE id > $1 ORDER BY id LIMIT ${page}`,
          [cursor],
          numbers,
        );
        out.push(...rows);
        if (rows.length < page) return out;
        cursor = rows[rows.length - 1].id as number;
      }
    };
    const chunks = await byId(
      "id, hash, session_id, ts, text, graph_source, model, encode(vector, 'base64') AS vector",
      "chunks",
      base.chunk,
      ["id"],
    );
    const windows: [number, number][] = [];
    for (let i = 0; i < chunks.length; i += page)
      windows.push([
        i ? (chunks[i - 1].id as number) : base.chunk,
        chunks[Math.min(i + page, chunks.length) - 1].id as number,
      ]);
    // One window after another: the tables' reads together keep a handful of calls in flight, not one per window.
    const byChunk = async (columns: string, table: string, order: string, numbers: string[]) => {
      const out: Record<string, unknown>[] = [];
      for (const [after, last] of windows)
        out.push(
          ...(await read(
            `SELECT ${columns} FROM ${s}.${table} WHERE chunk_id > $1 AND chunk_id <= $2 ORDER BY ${order}`,
            [after, last],
            numbers,
          )),
        );
      return out;
    };
    // The tables at once: the marks read before and after tell whether a write came between.
    const [turns, entities, facts, factSources, edges, edgeSources, summaries, forgotten, weights] =
      await Promise.all([
        byChunk('uuid, chunk_id, ord, role, ts, start, "end"', "turns", "chunk_id, ord", [
          "chunk_id",
          "ord",
          "start",
          "end",
        ]),
        byId("id, phrase, label, model, encode(vector, 'base64') AS vector", "entities", base.entity, ["id"]),
        byId(
          "id, subject, predicate, object, model, encode(vector, 'base64') AS vector",
          "facts",
          base.fact,
          ["id", "subject", "object"],
        ),
        byChunk("fact_id, chunk_id", "fact_sources", "chunk_id, fact_id", ["fact_id", "chunk_id"]),
        byId("id, kind, a, b, weight", "edges", base.edge, ["id", "kind", "a", "b", "weight"]),
        byChunk("edge_id, chunk_id, amount", "edge_sources", "chunk_id, edge_id", [
          "edge_id",
          "chunk_id",
          "amount",
        ]),
        read(`SELECT id, session_id, date, ts, text, source FROM ${s}.summaries ORDER BY id`, [], ["id"]),
        read(`SELECT session_id, at FROM ${s}.forgotten`, [], []),
        pull.whole
          ? []
          : read(changedWeightsSql(s), [base.edge, base.chunk, since?.generation ?? 0], ["id", "weight"]),
      ]);
    const rows: RemoteChanges["rows"] = {
      chunks,
      turns,
      entities,
      facts,
      fact_sources: factSources,
      edges,
      edge_sources: edgeSources,
      summaries,
      forgotten,
    };
    return pulledChanges(marks, pull, rows, weights);
  }

  /** Everything recall needs, built from one whole pull (the shared store's recall reads a mirror instead). */
  async snapshot(): Promise<StoreSnapshot> {
    const { marks, rows } = await this.changesSince(undefined);
    return snapshotOf(marks.generation, rows);
  }

  /** Both counters in one script; not sent again after a failure that leaves unknown whether it ran (it adds). */
  record(usage: LlmUsage): void {
    this.later(this.client.script(usageStatements(this.schema, usage), { retrySafe: false }));
  }
}

/** Rows whose `vector` came as base64 text, with it as bytes. */
function vectorRows<T extends { vector: string }>(rows: T[]): (Omit<T, "vector"> & { vector: Uint8Array })[] {
  return rows.map((r) => ({ ...r, vector: new Uint8Array(Buffer.from(r.vector, "base64")) }));
}
