/**
 * `triforge migrate`: copies a project's memory between backends row for row (the Postgres tables are the
 * SQLite ones), verifies every table by count and SHA-256 of its rows, and only then switches the
 * project's config. The source is only read. An interrupted copy resumes: rows already there are
 * skipped (every table has a key), tables already equal are not copied again, and nothing switches
 * until all of them verify. A target that holds rows the source lacks (another memory) is refused
 * before anything is written.
 */
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { configPath } from "../project/config.ts";
import { InsforgeClient } from "./insforge-client.ts";
import type { SqlClient } from "./pg-client.ts";
import { migrateSchema, projectSchema } from "./pg-schema.ts";
import { WRITER_KEYS, writerMetaKey } from "./postgres.ts";
import type { StorageTarget } from "./settings.ts";
import { SqliteMemoryStore } from "./sqlite.ts";

type ColumnType = "int" | "real" | "text" | "blob";

interface Table {
  name: string;
  columns: [name: string, type: ColumnType][];
  /** How many leading columns form the key. */
  key: number;
  /** Has a serial `id` (Postgres's sequence is moved past the copied ids). */
  serial?: boolean;
}

export const TABLES: Table[] = [
  {
    name: "chunks",
    key: 1,
    serial: true,
    columns: [
      ["id", "int"],
      ["hash", "text"],
      ["session_id", "text"],
      ["ts", "text"],
      ["text", "text"],
      ["graph_source", "text"],
      ["model", "text"],
      ["vector", "blob"],
    ],
  },
  {
    name: "turns",
    key: 1,
    columns: [
      ["uuid", "text"],
      ["chunk_id", "int"],
      ["ord", "int"],
      ["role", "text"],
      ["ts", "text"],
      ["start", "int"],
      ["end", "int"],
    ],
  },
  {
    name: "entities",
    key: 1,
    serial: true,
    columns: [
      ["id", "int"],
      ["phrase", "text"],
      ["label", "text"],
      ["model", "text"],
      ["vector", "blob"],
    ],
  },
  {
    name: "facts",
    key: 1,
    serial: true,
    columns: [
      ["id", "int"],
      ["subject", "int"],
      ["predicate", "text"],
      ["object", "int"],
      ["model", "text"],
      ["vector", "blob"],
    ],
  },
  {
    name: "fact_sources",
    key: 2,
    columns: [
      ["fact_id", "int"],
      ["chunk_id", "int"],
    ],
  },
  {
    name: "edges",
    key: 1,
    serial: true,
    columns: [
      ["id", "int"],
      ["kind", "int"],
      ["a", "int"],
      ["b", "int"],
      ["weight", "real"],
    ],
  },
  {
    name: "edge_sources",
    key: 2,
    columns: [
      ["edge_id", "int"],
      ["chunk_id", "int"],
      ["amount", "real"],
    ],
  },
  {
    name: "llm_cache",
    key: 1,
    columns: [
      ["key", "text"],
      ["chunk_hash", "text"],
      ["value", "text"],
    ],
  },
  {
    name: "summaries",
    key: 1,
    serial: true,
    columns: [
      ["id", "int"],
      ["session_id", "text"],
      ["date", "text"],
      ["ts", "text"],
      ["text", "text"],
      ["source", "text"],
    ],
  },
  {
    name: "forgotten",
    key: 1,
    columns: [
      ["session_id", "text"],
      ["at", "text"],
    ],
  },
  {
    name: "forgotten_records",
    key: 1,
    columns: [
      ["uuid", "text"],
      ["at", "text"],
    ],
  },
  {
    name: "llm_usage",
    key: 2,
    columns: [
      ["provider", "text"],
      ["model", "text"],
      ["calls", "int"],
      ["input_tokens", "int"],
      ["output_tokens", "int"],
    ],
  },
  {
    name: "llm_usage_months",
    key: 3,
    columns: [
      ["month", "text"],
      ["provider", "text"],
      ["model", "text"],
      ["calls", "int"],
      ["input_tokens", "int"],
      ["output_tokens", "int"],
    ],
  },
  {
    name: "meta",
    key: 1,
    columns: [
      ["key", "text"],
      ["value", "text"],
    ],
  },
];

/**
 * SQLite tables the copy leaves out: derived from the rows above, and rebuilt by the SQLite store when they
 * are missing (a store without its `synonym_rule` recomputes its synonym graph, bands and all).
 */
export const DERIVED_TABLES = [
  "row_counts",
  "phrase_keys",
  "phrase_buckets",
  "phrase_bands",
  "synonym_changes",
];

/** A row as comparable data: numbers, strings, blobs as base64, in column order. */
type Row = (string | number | null)[];

/** One side of a copy: the rows of a table, and (for the target) a way to add some. */
interface Side {
  read(table: Table): Promise<Row[]>;
  write(table: Table, rows: Row[]): Promise<void>;
  close(): Promise<void>;
}

function canonical(value: unknown, type: ColumnType): string | number | null {
  if (value === null || value === undefined) return null;
  if (type === "blob") return Buffer.from(value as Uint8Array).toString("base64");
  if (type === "int" || type === "real") return Number(value);
  return String(value);
}

const q = (name: string) => `"${name}"`;

/**
 * Meta keys the copy carries, and how: the chats.jsonl offset is this writer's in Postgres (`offset@w`)
 * and plain in SQLite; the file's identity, schema version and check time stay with each store.
 */
const SHARED_KEYS = ["last_indexed", "generation", "deletions"];

function metaRows(rows: Row[], from: "sqlite" | "postgres", writer: string): Row[] {
  const value = new Map(rows.map((r) => [String(r[0]), r[1]]));
  const out: Row[] = [];
  for (const key of SHARED_KEYS) if (value.has(key)) out.push([key, value.get(key) ?? null]);
  for (const key of WRITER_KEYS) {
    const stored = value.get(from === "sqlite" ? key : writerMetaKey(key, writer));
    if (stored !== undefined) out.push([key, stored]);
  }
  return out;
}

function sqliteSide(path: string, options: { readonly: boolean; writer: string }): Side {
  const db = new Database(path, options.readonly ? { readonly: true } : { readwrite: true, create: false });
  db.run("PRAGMA busy_timeout = 5000");
  return {
    async read(table) {
      const rows = db
        .query(`SELECT ${table.columns.map(([c]) => q(c)).join(", ")} FROM ${table.name}`)
        .values() as unknown[][];
      const out = rows.map((r) => r.map((v, i) => canonical(v, table.columns[i][1])));
      return table.name === "meta" ? metaRows(out, "sqlite", options.writer) : out;
    },
    async write(table, rows) {
      const columns = table.columns.map(([c]) => q(c)).join(", ");
      const verb = table.name === "meta" ? "INSERT OR REPLACE" : "INSERT OR IGNORE";
      const insert = db.prepare(
        `${verb} INTO ${table.name}(${columns}) VALUES (${table.columns.map(() => "?").join(", ")})`,
      );
      try {
        db.transaction(() => {
          for (const row of rows)
            insert.run(
              ...row.map((v, i) =>
                table.columns[i][1] === "blob" && v !== null ? Buffer.from(String(v), "base64") : v,
              ),
            );
        })();
      } finally {
        insert.finalize();
      }
    },
    async close() {
      // The copy is moved into place as one file: no WAL beside it.
      if (!options.readonly) db.run("PRAGMA journal_mode = DELETE");
      db.close(true);
    },
  };
}

const PG_TYPES: Record<ColumnType, string> = {
  int: "bigint",
  real: "double precision",
  text: "text",
  blob: "text",
};

/** Rows per statement (one JSON parameter each) and per committed step of a copy. */
const STEP_ROWS = 2000;

function postgresSide(client: SqlClient, schema: string, writer: string): Side {
  return {
    async read(table) {
      const rows = await client.query(
        `SELECT ${table.columns.map(([c]) => q(c)).join(", ")} FROM ${schema}.${table.name}`,
      );
      const out = rows.map((r) => table.columns.map(([c, type]) => canonical(r[c], type)));
      return table.name === "meta" ? metaRows(out, "postgres", writer) : out;
    },
    async write(table, rows) {
      const names = table.columns.map(([c]) => c);
      const values = table.columns.map(([c, type]) =>
        type === "blob" ? `decode(x.${q(c)}, 'base64')` : `x.${q(c)}`,
      );
      const record = table.columns.map(([c, type]) => `${q(c)} ${PG_TYPES[type]}`).join(", ");
      const conflict =
        table.name === "meta"
          ? `ON CONFLICT (key) DO UPDATE SET value = excluded.value`
          : "ON CONFLICT DO NOTHING";
      for (let i = 0; i < rows.length; i += STEP_ROWS) {
        const part = rows.slice(i, i + STEP_ROWS).map((row) => {
          const object: Record<string, unknown> = {};
          row.forEach((v, c) => {
            const name = names[c];
            object[name] = table.name === "meta" && c === 0 ? writerMetaKey(String(v), writer) : v;
          });
          return object;
        });
        await client.query(
          `INSERT INTO ${schema}.${table.name}(${names.map(q).join(", ")})
           SELECT ${values.join(", ")} FROM jsonb_to_recordset($1::text::jsonb) AS x(${record}) ${conflict}`,
          [JSON.stringify(part)],
        );
      }
      if (table.serial)
        await client.query(
          `SELECT setval(pg_get_serial_sequence($1, 'id'), greatest((SELECT max(id) FROM ${schema}.${table.name}), 1))`,
          [`${schema}.${table.name}`],
        );
    },
    async close() {
      await client.close();
    },
  };
}

/** Count and SHA-256 of a table's rows, in key order (sorted here: the backends collate text differently). */
function digest(rows: Row[]): { rows: number; sha256: string } {
  const lines = rows.map((r) => JSON.stringify(r)).sort();
  const hash = createHash("sha256");
  for (const line of lines) hash.update(line).update("\n");
  return { rows: rows.length, sha256: hash.digest("hex") };
}

export interface MigrateOptions {
  /** Opens a Postgres (or InsForge) connection; the caller owns the driver. */
  connect: (target: Exclude<StorageTarget, { kind: "local" }>) => Promise<SqlClient>;
  /** This checkout's writer name (its chats.jsonl offset). */
  writer: string;
  /** Called after each table is verified. */
  onTable?: (table: string, rows: number, copied: number) => void;
}

export interface MigrateReport {
  from: StorageTarget["kind"];
  to: StorageTarget["kind"];
  tables: { name: string; rows: number; copied: number; sha256: string }[];
}

/** A copy that did not verify or could not start; the config is unchanged and the source untouched. */
export class MigrateError extends Error {}

async function openSide(
  target: StorageTarget,
  role: "source" | "target",
  paths: { store: string; staging: string },
  options: MigrateOptions,
): Promise<Side> {
  if (target.kind === "local") {
    if (role === "source") {
      if (!existsSync(paths.store))
        throw new MigrateError(`there is no local memory store to copy (${paths.store})`);
      return sqliteSide(paths.store, { readonly: true, writer: options.writer });
    }
    // The local target is built beside the store and moved into place only after it verifies.
    if (!existsSync(paths.staging)) new SqliteMemoryStore(paths.staging).close();
    return sqliteSide(paths.staging, { readonly: false, writer: options.writer });
  }
  const client = await options.connect(target);
  const schema = projectSchema(target.project);
  // InsForge runs no transaction across calls: its tables are made by scripts (insforge.ts).
  if (client instanceof InsforgeClient)
    await (await import("./insforge.ts")).ensureInsforgeSchema(client, schema);
  else await migrateSchema(client, schema);
  return postgresSide(client, schema, options.writer);
}

/**
 * Copies the project's memory from `from` to `to`, verifies it, and switches `.triforge/config.json` to
 * `to`. The caller holds the project's index lock, so no indexer writes the source meanwhile.
 */
export async function migrateStore(
  projectRoot: string,
  storePath: string,
  from: StorageTarget,
  to: StorageTarget,
  options: MigrateOptions,
): Promise<MigrateReport> {
  if (from.kind === to.kind && (from.kind === "local" || JSON.stringify(from) === JSON.stringify(to)))
    throw new MigrateError(`the memory is already stored in ${to.kind}`);
  const paths = { store: storePath, staging: `${storePath}.migrating` };
  const source = await openSide(from, "source", paths, options);
  let target: Side | undefined;
  const report: MigrateReport = { from: from.kind, to: to.kind, tables: [] };
  try {
    target = await openSide(to, "target", paths, options);
    const sourceRows = new Map<string, Row[]>();
    // Refuse before writing anything when the target holds rows this memory does not: another memory.
    for (const table of TABLES) {
      const rows = await source.read(table);
      sourceRows.set(table.name, rows);
      if (table.name === "meta") continue;
      const have = new Set(rows.map((r) => JSON.stringify(r)));
      const foreign = (await target.read(table)).filter((r) => !have.has(JSON.stringify(r))).length;
      if (foreign)
        throw new MigrateError(
          `the ${to.kind} target already holds another memory for this project (${foreign} ${table.name} rows this one lacks); nothing was copied. Index into it instead: switch storage and run triforge index`,
        );
    }
    for (const table of TABLES) {
      const rows = sourceRows.get(table.name) ?? [];
      const want = digest(rows);
      let copied = 0;
      const held = await target.read(table);
      if (digest(held).sha256 !== want.sha256) {
        const have = new Set(held.map((r) => JSON.stringify(r)));
        const missing = rows.filter((r) => !have.has(JSON.stringify(r)));
        for (let i = 0; i < missing.length; i += STEP_ROWS)
          await target.write(table, missing.slice(i, i + STEP_ROWS));
        copied = missing.length;
      }
      const got = digest(await target.read(table));
      if (got.rows !== want.rows || got.sha256 !== want.sha256)
        throw new MigrateError(
          `${table.name}: the copy does not match (${got.rows} rows, sha256 ${got.sha256.slice(0, 12)}; the source has ${want.rows}, ${want.sha256.slice(0, 12)}); the config is unchanged`,
        );
      report.tables.push({ name: table.name, rows: want.rows, copied, sha256: want.sha256 });
      options.onTable?.(table.name, want.rows, copied);
    }
  } finally {
    await source.close();
    await target?.close();
  }
  if (to.kind === "local") {
    // The verified copy replaces the local store; an older local store is kept aside, never deleted.
    for (const suffix of ["-wal", "-shm"]) rmSync(paths.store + suffix, { force: true });
    if (existsSync(paths.store)) renameSync(paths.store, `${paths.store}.before-migrate`);
    renameSync(paths.staging, paths.store);
    for (const suffix of ["-wal", "-shm"]) rmSync(paths.staging + suffix, { force: true });
  }
  switchStorage(projectRoot, to);
  return report;
}

/** Sets `storage` (and the project's name in the database) in the config; the URL and key stay where they are. */
function switchStorage(projectRoot: string, to: StorageTarget): void {
  const file = configPath(projectRoot);
  const config = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  config.storage = to.kind;
  if (to.kind !== "local") {
    const section = (config[to.kind] ?? {}) as Record<string, unknown>;
    config[to.kind] = { ...section, project: to.project };
  }
  writeFileSync(`${file}.tmp`, `${JSON.stringify(config, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}
