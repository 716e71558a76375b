/**
 * The Postgres store's tables, one Postgres schema per project (`triforge_<project>`), created and
 * migrated by the binary: `schema_version` lists every step applied, and a step runs once, under an
 * advisory lock, so processes opening the same project at once never race on it.
 */
import type { SqlClient } from "./pg-client.ts";
import { StoreUnavailableError } from "./pg-client.ts";

/** The highest step this version knows; a database migrated further by a newer triforge is refused. */
export const PG_SCHEMA_VERSION = 3;

/** A project name as a Postgres identifier: lower-case letters, digits and `_`, quoted. */
export function projectSchema(project: string): string {
  const name = project
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 50);
  if (!name) throw new Error(`'${project}' cannot name a project in Postgres: use letters or digits`);
  return `"triforge_${name}"`;
}

/** The advisory-lock key of a schema (Postgres takes a bigint; a 31-bit hash of the name is enough). */
export function lockKey(schema: string): number {
  let h = 0;
  for (let i = 0; i < schema.length; i++) h = (Math.imul(h, 31) + schema.charCodeAt(i)) | 0;
  return h;
}

/** The schema's steps in order (step n is `[n - 1]`); InsForge's store applies the same ones (insforge.ts). */
export function schemaSteps(s: string, pgvector: boolean): string[] {
  return [
    // 1: the same tables as the SQLite store, so a copy between them is row for row.
    `CREATE TABLE ${s}.meta(key text PRIMARY KEY, value text NOT NULL);
     CREATE TABLE ${s}.chunks(id serial PRIMARY KEY, hash text NOT NULL UNIQUE, session_id text NOT NULL,
       ts text NOT NULL, text text NOT NULL, graph_source text NOT NULL, model text NOT NULL, vector bytea NOT NULL);
     CREATE INDEX ON ${s}.chunks(session_id);
     CREATE TABLE ${s}.turns(uuid text PRIMARY KEY, chunk_id integer NOT NULL, ord integer NOT NULL,
       role text NOT NULL, ts text NOT NULL, start integer NOT NULL, "end" integer NOT NULL);
     CREATE INDEX ON ${s}.turns(chunk_id);
     CREATE TABLE ${s}.entities(id serial PRIMARY KEY, phrase text NOT NULL UNIQUE, label text NOT NULL,
       model text NOT NULL, vector bytea NOT NULL);
     CREATE TABLE ${s}.facts(id serial PRIMARY KEY, subject integer NOT NULL, predicate text NOT NULL,
       object integer NOT NULL, model text NOT NULL, vector bytea NOT NULL, UNIQUE(subject, predicate, object));
     CREATE TABLE ${s}.fact_sources(fact_id integer NOT NULL, chunk_id integer NOT NULL, PRIMARY KEY(fact_id, chunk_id));
     CREATE INDEX ON ${s}.fact_sources(chunk_id);
     CREATE TABLE ${s}.edges(id serial PRIMARY KEY, kind smallint NOT NULL, a integer NOT NULL, b integer NOT NULL,
       weight double precision NOT NULL, UNIQUE(kind, a, b));
     CREATE INDEX ON ${s}.edges(b);
     CREATE TABLE ${s}.edge_sources(edge_id integer NOT NULL, chunk_id integer NOT NULL,
       amount double precision NOT NULL, PRIMARY KEY(edge_id, chunk_id));
     CREATE INDEX ON ${s}.edge_sources(chunk_id);
     CREATE TABLE ${s}.llm_cache(key text PRIMARY KEY, chunk_hash text NOT NULL, value text NOT NULL);
     CREATE INDEX ON ${s}.llm_cache(chunk_hash);
     CREATE TABLE ${s}.summaries(id serial PRIMARY KEY, session_id text NOT NULL, date text NOT NULL,
       ts text NOT NULL, text text NOT NULL, source text NOT NULL);
     CREATE INDEX ON ${s}.summaries(session_id);
     CREATE TABLE ${s}.forgotten(session_id text PRIMARY KEY, at text NOT NULL);
     CREATE TABLE ${s}.llm_usage(provider text NOT NULL, model text NOT NULL, calls bigint NOT NULL,
       input_tokens bigint NOT NULL, output_tokens bigint NOT NULL, PRIMARY KEY(provider, model));
     CREATE TABLE ${s}.llm_usage_months(month text NOT NULL, provider text NOT NULL, model text NOT NULL,
       calls bigint NOT NULL, input_tokens bigint NOT NULL, output_tokens bigint NOT NULL,
       PRIMARY KEY(month, provider, model));`,
    // 2: chunk embeddings as pgvector values beside the exact float32 bytes (HNSW indexes per dimension
    // are made when the first vectors of that dimension arrive). Nothing where pgvector is absent.
    pgvector ? `ALTER TABLE ${s}.chunks ADD COLUMN embedding vector;` : "SELECT 1;",
    // 3: the records of chunks deleted one by one (as SQLite's forgotten_records), and the synonym edges
    // whose weight a later batch changed (revived, or dropped to 0), with the generation it committed:
    // how a mirror pulled at an older generation learns of them.
    `CREATE TABLE ${s}.forgotten_records(uuid text PRIMARY KEY, at text NOT NULL);
     CREATE TABLE ${s}.synonym_updates(edge_id integer PRIMARY KEY, generation bigint NOT NULL);
     CREATE INDEX ON ${s}.synonym_updates(generation);`,
  ];
}

/** A SQL string literal (standard_conforming_strings: only the quote is doubled). */
export function lit(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** A database at a schema version newer than this triforge's steps: refused, it would be misread. */
export function newerSchemaError(schema: string, current: number): StoreUnavailableError {
  return new StoreUnavailableError(
    `the memory in ${schema} is at schema version ${current}, newer than this triforge knows (${PG_SCHEMA_VERSION}): upgrade triforge`,
  );
}

/** The statements that take a schema from version `current` to PG_SCHEMA_VERSION, each step noted as applied. */
export function migrationStatements(schema: string, pgvector: boolean, current: number): string[] {
  const steps = schemaSteps(schema, pgvector);
  const now = new Date().toISOString();
  const statements: string[] = [];
  for (let version = current + 1; version <= PG_SCHEMA_VERSION; version++) {
    for (const statement of steps[version - 1].split(";").map((t) => t.trim()))
      if (statement) statements.push(statement);
    statements.push(
      `INSERT INTO ${schema}.schema_version(version, applied_at) VALUES (${version}, ${lit(now)})`,
    );
  }
  return statements;
}

/** Whether pgvector is installed in this database, installing it where the server has it and we may. */
async function ensurePgvector(client: SqlClient): Promise<boolean> {
  const installed = async () =>
    (await client.query("SELECT 1 AS ok FROM pg_extension WHERE extname = 'vector'")).length > 0;
  if (await installed()) return true;
  const available = await client.query("SELECT 1 AS ok FROM pg_available_extensions WHERE name = 'vector'");
  if (!available.length) return false;
  try {
    await client.query("CREATE EXTENSION IF NOT EXISTS vector");
  } catch {
    // No privilege to install it: the store works without (recall computes similarity in the process).
  }
  return installed();
}

/** Creates or migrates the project's schema; returns whether chunks carry a pgvector column. */
export async function migrateSchema(client: SqlClient, schema: string): Promise<{ pgvector: boolean }> {
  // Already at this version (every open after the first): one read, no lock.
  const [current] = await client
    .query<{ v: number | null; pgvector: boolean }>(
      `SELECT (SELECT max(version) FROM ${schema}.schema_version) AS v, EXISTS (SELECT 1 FROM information_schema.columns
         WHERE table_schema = $1 AND table_name = 'chunks' AND column_name = 'embedding') AS pgvector`,
      [schema.slice(1, -1)],
    )
    .catch(() => [undefined]);
  if (current && Number(current.v) === PG_SCHEMA_VERSION) return { pgvector: Boolean(current.pgvector) };
  const pgvector = await ensurePgvector(client);
  return client.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [lockKey(schema)]);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.schema_version(version integer PRIMARY KEY, applied_at text NOT NULL)`,
    );
    const [row] = await tx.query<{ v: number | null }>(
      `SELECT max(version) AS v FROM ${schema}.schema_version`,
    );
    const current = Number(row?.v ?? 0);
    if (current > PG_SCHEMA_VERSION) throw newerSchemaError(schema, current);
    for (const statement of migrationStatements(schema, pgvector, current)) await tx.query(statement);
    const column = await tx.query(
      "SELECT 1 AS ok FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'chunks' AND column_name = 'embedding'",
      [schema.slice(1, -1)],
    );
    return { pgvector: column.length > 0 };
  });
}
