/**
 * The shared store's behaviour suite (test/support/store-contract.ts) on Postgres: PGlite in-process
 * (with and without pgvector) and the server .ci/run starts (TRIFORGE_TEST_PG_URL). The SQLite store is
 * the reference. What only Postgres has (pgvector's column and index) is tested here.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connectPostgres, type SqlClient } from "../src/store/pg-client.ts";
import { PgMemoryStore } from "../src/store/postgres.ts";
import { tempDir } from "./support/helpers.ts";
import { pgliteClient } from "./support/pglite.ts";
import { fill, observed, referenceStore, storeContract } from "./support/store-contract.ts";

const dir = tempDir("triforge-store-");
let projects = 0;

/** A client shared by the tests of one backend: each store gets its own project (schema) in it. */
function shared(client: SqlClient): SqlClient {
  return { ...client, close: async () => {} };
}

interface Backend {
  name: string;
  /** Whether the store must find pgvector (undefined: whatever the server has). */
  pgvector?: boolean;
  connect(): Promise<SqlClient>;
}

const serverUrl = process.env.TRIFORGE_TEST_PG_URL;
const backends: Backend[] = [
  { name: "postgres on PGlite + pgvector", pgvector: true, connect: () => pgliteClient() },
  {
    name: "postgres on PGlite without pgvector",
    pgvector: false,
    connect: () => pgliteClient({ vectors: false }),
  },
];
if (serverUrl) backends.push({ name: "postgres server", connect: () => connectPostgres(serverUrl) });
else
  console.log(
    "store-backends: TRIFORGE_TEST_PG_URL is not set, so the Postgres server suite is skipped (.ci/run sets it)",
  );

for (const backend of backends) {
  describe(backend.name, () => {
    let client: SqlClient;
    beforeAll(async () => {
      client = await backend.connect();
    }, 120_000);
    afterAll(async () => {
      await client?.close();
    });
    const project = (tag = "p") => `${tag}-${++projects}-${Date.now()}`;
    const open = (name = project(), writer = "host:/a,b path") =>
      PgMemoryStore.open(shared(client), { project: name, writer });

    storeContract(() => ({
      open,
      project,
      sql: (text) => client.query(text),
    }));

    test("pgvector, where the database has it, holds the same vectors with an HNSW index for their dimension", async () => {
      const ref = referenceStore(dir);
      const store = await open();
      await fill(ref, 1);
      await fill(store, 1);
      expect(await observed(store)).toEqual(await observed(ref));
      if (backend.pgvector !== undefined) expect(store.pgvector).toBe(backend.pgvector);
      if (store.pgvector) {
        const rows = await client.query<{ id: number; embedding: string }>(
          `SELECT id, embedding::text AS embedding FROM ${store.schema}.chunks WHERE embedding IS NOT NULL ORDER BY id`,
        );
        const snapshot = await store.snapshot();
        expect(rows.map((r) => (JSON.parse(r.embedding) as number[]).map(Math.fround))).toEqual(
          snapshot.chunks.map((_, i) => Array.from(snapshot.chunkVectors.subarray(i * 8, i * 8 + 8))),
        );
        const indexes = await client.query<{ indexname: string }>(
          "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexdef LIKE '%hnsw%'",
          [store.schema.slice(1, -1)],
        );
        expect(indexes.map((i) => i.indexname)).toEqual(["chunks_embedding_hnsw_8"]);
        const [nearest] = await client.query<{ id: number }>(
          `SELECT id FROM ${store.schema}.chunks ORDER BY embedding::vector(8) <=> (SELECT embedding FROM ${store.schema}.chunks WHERE id = 5)::vector(8) LIMIT 1`,
        );
        expect(nearest.id).toBe(5);
      }
      ref.close();
      await store.closeAsync();
    }, 60_000);
  });
}
