/**
 * One store behaviour suite, run against every backend: the SQLite store is the reference, and each other
 * backend, given the same batches, must hold the same snapshot (row ids, vectors, weights), the same
 * status, summaries and forget results. Postgres runs on PGlite in-process (with and without pgvector) and
 * on the server .ci/run starts (TRIFORGE_TEST_PG_URL).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { connectPostgres, type SqlClient } from "../src/store/pg-client.ts";
import { PgMemoryStore } from "../src/store/postgres.ts";
import { SqliteMemoryStore } from "../src/store/sqlite.ts";
import type { MemoryStore } from "../src/store/types.ts";
import { tempDir } from "./support/helpers.ts";
import { pgliteClient } from "./support/pglite.ts";
import { storeBatches } from "./support/store-batches.ts";

const dir = tempDir("triforge-store-");
let projects = 0;

function sqliteStore(): SqliteMemoryStore {
  return new SqliteMemoryStore(join(dir, `ref-${++projects}.db`));
}

/** A client shared by the tests of one backend: each store gets its own project (schema) in it. */
function shared(client: SqlClient): SqlClient {
  return { ...client, close: async () => {} };
}

interface Backend {
  name: string;
  /** Whether the store must find pgvector (undefined: whatever the server has). */
  pgvector?: boolean;
  client?: SqlClient;
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

async function fill(store: MemoryStore, seed: number): Promise<void> {
  for (const batch of storeBatches(seed)) await store.writeBatch(batch);
}

/** What two stores must agree on, read through the interface. */
async function observed(store: MemoryStore) {
  const status = await store.status();
  return {
    snapshot: await store.snapshot(),
    status: { ...status, llmUsageThisMonth: status.llmUsageThisMonth.length },
    summaries: await store.summaries(),
    entityVectors: await store.entityVectors(),
    pending: await store.pendingLlmChunks(100),
    forgotten: [...(await store.forgottenSessions())].sort(),
  };
}

for (const backend of backends) {
  describe(backend.name, () => {
    let client: SqlClient;
    beforeAll(async () => {
      client = await backend.connect();
    }, 120_000);
    afterAll(async () => {
      await client?.close();
    });
    const open = (project = `p${++projects}-${Date.now()}`, writer = "host:/a,b path") =>
      PgMemoryStore.open(shared(client), { project, writer });

    test("the same batches give the same snapshot, status, summaries and vectors as SQLite", async () => {
      const reference = sqliteStore();
      const store = await open();
      await fill(reference, 1);
      await fill(store, 1);
      expect(await observed(store)).toEqual(await observed(reference));
      expect((await store.snapshot()).chunks.length).toBe(18);
      if (backend.pgvector !== undefined) expect(store.pgvector).toBe(backend.pgvector);
      if (store.pgvector) {
        // pgvector holds the same vectors, with an HNSW index for their dimension.
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
      reference.close();
      await store.closeAsync();
    }, 60_000);

    test("writing a batch again adds nothing (idempotent by chunk hash and turn uuid)", async () => {
      const store = await open();
      const batches = storeBatches(2);
      for (const batch of batches) await store.writeBatch(batch);
      const before = await store.snapshot();
      await store.writeBatch(batches[1]);
      const after = await store.snapshot();
      expect(after.chunks).toEqual(before.chunks);
      expect(after.edges).toEqual(before.edges);
      const uuids = batches.flatMap((b) => b.chunks.flatMap((c) => c.turns.map((t) => t.uuid)));
      expect((await store.indexedRecords([...uuids, "never-seen"])).size).toBe(uuids.length);
      await store.closeAsync();
    }, 60_000);

    test("forget removes a session exactly as SQLite does: the same counts and the same rows left", async () => {
      const reference = sqliteStore();
      const store = await open();
      await fill(reference, 3);
      await fill(store, 3);
      const forgotten = await reference.forgetSession("s3-1");
      expect(await store.forgetSession("s3-1")).toEqual(forgotten);
      expect(forgotten.chunks).toBeGreaterThan(0);
      expect(await store.hasSession("s3-1")).toBe(false);
      expect(await store.hasSession("s3-0")).toBe(true);
      expect(await observed(store)).toEqual(await observed(reference));
      reference.close();
      await store.closeAsync();
    }, 60_000);

    test("a retried LLM graph replaces the chunk's contribution as in SQLite", async () => {
      const reference = sqliteStore();
      const store = await open();
      await fill(reference, 4);
      await fill(store, 4);
      const [pending] = await store.pendingLlmChunks(1);
      expect(pending).toEqual((await reference.pendingLlmChunks(1))[0]);
      const graph = {
        entities: [
          { phrase: "phrase 1", label: "PHRASE 1" },
          { phrase: "brand new", label: "Brand New" },
        ],
        facts: [{ subject: "phrase 1", predicate: "replaces", object: "brand new" }],
      };
      const vectors = {
        model: "test-model",
        entityVectors: new Map([["brand new", new Float32Array(8).fill(0.5)]]),
        factVectors: new Map([["phrase 1\u0001replaces\u0001brand new", new Float32Array(8).fill(0.25)]]),
        synonyms: [{ a: "brand new", b: "phrase 2", score: 0.9 }],
      };
      await reference.replaceChunkGraph(pending.id, graph, "llm", vectors);
      await store.replaceChunkGraph(pending.id, graph, "llm", vectors);
      expect(await observed(store)).toEqual(await observed(reference));
      reference.close();
      await store.closeAsync();
    }, 60_000);

    test("a new phrase without a vector fails the whole batch and writes nothing", async () => {
      const store = await open();
      const [batch] = storeBatches(5, 1);
      batch.entityVectors.delete(batch.chunks[0].graph.entities[0].phrase);
      await expect(store.writeBatch(batch)).rejects.toThrow(/no vector for new phrase/);
      expect((await store.status()).chunks).toBe(0);
      expect((await store.state()).generation).toBe(0);
      await store.closeAsync();
    }, 60_000);

    test("the LLM cache, usage and summary edits persist; the chats.jsonl offset is each writer's own", async () => {
      const project = `cache-${++projects}-${Date.now()}`;
      const first = await open(project, "laptop:/home/me/shop, old");
      await fill(first, 6);
      first.set("openie:v1:hash-6-0", '{"triples":[]}');
      first.record({ provider: "openai", model: "m", inputTokens: 10, outputTokens: 3 });
      first.record({ provider: "openai", model: "m", inputTokens: 5, outputTokens: 1 });
      await first.setState({
        offset: 120,
        offsetCheck: "abc",
        lastIndexed: "2025-04-02T00:00:00.000Z",
        reviewSwept: true,
      });
      const [summary] = await first.summaries();
      const line = summary.text.split("\n")[1];
      expect(await first.replaceSummaryLine(summary.sessionId, line, "- Decided: drop it")).toBeGreaterThan(
        0,
      );
      await first.closeAsync();

      const again = await open(project, "laptop:/home/me/shop, old");
      expect(again.get("openie:v1:hash-6-0")).toBe('{"triples":[]}');
      expect(await again.usage()).toEqual([
        { provider: "openai", model: "m", calls: 2, inputTokens: 15, outputTokens: 4 },
      ]);
      expect((await again.status()).llmUsageThisMonth).toEqual(await again.usage());
      expect(await again.state()).toMatchObject({ offset: 120, offsetCheck: "abc", reviewSwept: true });
      expect((await again.summaries()).find((s) => s.sessionId === summary.sessionId)?.text).toContain(
        "- Decided: drop it",
      );
      const other = await open(project, "desktop");
      expect(await other.state()).toMatchObject({
        offset: 0,
        offsetCheck: "",
        lastIndexed: "2025-04-02T00:00:00.000Z",
      });
      expect((await other.status()).chunks).toBe(18);
      // forget takes the session's cached LLM results too.
      await other.forgetSession("s6-0");
      expect(other.get("openie:v1:hash-6-0")).toBeUndefined();
      await again.closeAsync();
      await other.closeAsync();
    }, 60_000);

    test("the schema is versioned: reopening applies nothing, a newer version is refused in one line", async () => {
      const project = `ver-${++projects}-${Date.now()}`;
      const store = await open(project);
      const versions = await client.query<{ version: number }>(
        `SELECT version FROM ${store.schema}.schema_version ORDER BY version`,
      );
      expect(versions.map((v) => v.version)).toEqual([1, 2, 3]);
      await (await open(project)).closeAsync();
      expect((await client.query(`SELECT version FROM ${store.schema}.schema_version`)).length).toBe(3);
      await client.query(`INSERT INTO ${store.schema}.schema_version VALUES (99, 'later')`);
      await expect(open(project)).rejects.toThrow(/schema version 99, newer than this triforge knows/);
      await store.closeAsync();
    }, 60_000);
  });
}
