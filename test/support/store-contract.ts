/**
 * The shared store's behaviour suite, run against each backend (store-backends.test.ts: Postgres on PGlite
 * and on a server; store-insforge.test.ts: InsForge's contract server and a real InsForge). The SQLite
 * store is the reference: the same batches must give the same snapshot (row ids, vectors, weights),
 * status, summaries and forget results. Call inside a `describe`; backend-only cases stay in their files.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { PG_SCHEMA_VERSION } from "../../src/store/pg-schema.ts";
import type { RemoteStore } from "../../src/store/remote.ts";
import { SqliteMemoryStore } from "../../src/store/sqlite.ts";
import type { MemoryStore } from "../../src/store/types.ts";
import { tempDir } from "./helpers.ts";
import { storeBatches } from "./store-batches.ts";

let references = 0;

/** A new SQLite store in `dir`, the reference a backend is compared with. */
export function referenceStore(dir: string): SqliteMemoryStore {
  return new SqliteMemoryStore(join(dir, `ref-${++references}.db`));
}

export async function fill(store: MemoryStore, seed: number): Promise<void> {
  for (const batch of storeBatches(seed)) await store.writeBatch(batch);
}

/** What two stores must agree on, read through the interface. */
export async function observed(store: MemoryStore) {
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

/** A shared store over one Postgres schema (PgMemoryStore, InsforgeMemoryStore). */
export type SchemaStore = RemoteStore &
  Required<Pick<RemoteStore, "forgetRecords" | "forgottenRecords">> & { readonly schema: string };

export interface ContractBackend {
  /** A store in a project of its own (a new name each call), or in `project` as `writer`. */
  open(project?: string, writer?: string): Promise<SchemaStore>;
  /** A new project name with `tag` in it. */
  project(tag: string): string;
  /** One statement on the backend's database, outside any store. */
  sql(text: string): Promise<Record<string, unknown>[]>;
  /** The same project read in pages of `rows` rows, where the backend pages its pulls. */
  openPaged?(project: string, rows: number): Promise<SchemaStore>;
  /** How often the backend reloaded its schema cache (InsForge's PostgREST): an open at the current version causes none. */
  schemaReloads?(): number;
}

export function storeContract(backend: () => ContractBackend): void {
  // Made (and removed) with the describe that calls this: a bun process may run several test files.
  const dir = tempDir("triforge-store-contract-");
  test("the same batches give the same snapshot, status, summaries and vectors as SQLite", async () => {
    const ref = referenceStore(dir);
    const store = await backend().open();
    await fill(ref, 1);
    await fill(store, 1);
    expect(await observed(store)).toEqual(await observed(ref));
    expect((await store.snapshot()).chunks.length).toBe(18);
    ref.close();
    await store.closeAsync();
  }, 60_000);

  test("writing a batch again adds nothing (idempotent by chunk hash and turn uuid)", async () => {
    const store = await backend().open();
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
    const ref = referenceStore(dir);
    const store = await backend().open();
    await fill(ref, 3);
    await fill(store, 3);
    const forgotten = await ref.forgetSession("s3-1");
    expect(await store.forgetSession("s3-1")).toEqual(forgotten);
    expect(forgotten.chunks).toBeGreaterThan(0);
    expect(await store.hasSession("s3-1")).toBe(false);
    expect(await store.hasSession("s3-0")).toBe(true);
    expect(await observed(store)).toEqual(await observed(ref));
    // A second session after the first: the removal works from what the first left.
    expect(await store.forgetSession("s3-2")).toEqual(await ref.forgetSession("s3-2"));
    expect(await observed(store)).toEqual(await observed(ref));
    ref.close();
    await store.closeAsync();
  }, 60_000);

  test("a retried LLM graph replaces the chunk's contribution as in SQLite", async () => {
    const ref = referenceStore(dir);
    const store = await backend().open();
    await fill(ref, 4);
    await fill(store, 4);
    const [pending] = await store.pendingLlmChunks(1);
    expect(pending).toEqual((await ref.pendingLlmChunks(1))[0]);
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
    await ref.replaceChunkGraph(pending.id, graph, "llm", vectors);
    await store.replaceChunkGraph(pending.id, graph, "llm", vectors);
    expect(await observed(store)).toEqual(await observed(ref));
    ref.close();
    await store.closeAsync();
  }, 60_000);

  test("records deleted one by one go as SQLite's forgetChunk takes them, and are never stored again", async () => {
    const ref = referenceStore(dir);
    const store = await backend().open();
    await fill(ref, 11);
    await fill(store, 11);
    const snapshot = await ref.snapshot();
    const decided = (line: string) => line.replace("- Decided: keep ", "");
    const summaries = await ref.summaries();
    // A chunk that names a phrase its session's summary decided on, so the rewrite has work to do.
    const chunk = snapshot.chunks.find((c) =>
      summaries.some(
        (e) =>
          e.sessionId === c.sessionId &&
          e.text
            .split("\n")
            .slice(1)
            .some((l) => c.text.includes(decided(l))),
      ),
    ) as (typeof snapshot.chunks)[number];
    const uuids = chunk.turns.map((t) => t.uuid);
    // A decision goes when the removed chunk names its phrase; an entry left with its title alone goes
    // whole (a rewrite both stores run alike).
    const rewrite = (entry: string, removed: string) => {
      const lines = entry.split("\n").filter((line, i) => i === 0 || !removed.includes(decided(line)));
      return lines.length > 1 ? lines.join("\n") : "";
    };
    const forgot = await ref.forgetChunk(chunk.id, rewrite);
    expect(forgot?.summaryLines).toBeGreaterThan(0);
    expect(await store.forgetRecords([uuids[0]], rewrite)).toBe(1);
    expect(await observed(store)).toEqual(await observed(ref));
    expect(await store.forgottenRecords()).toEqual(new Set(uuids));
    expect((await store.indexedRecords(uuids)).size).toBe(uuids.length);
    // Pushed again by a machine that never saw the delete: the chunk is not stored again.
    for (const batch of storeBatches(11)) await store.writeBatch(batch);
    expect((await store.status()).chunks).toBe(snapshot.chunks.length - 1);
    expect(await store.forgetRecords(["never-seen"], rewrite)).toBe(0);
    ref.close();
    await store.closeAsync();
  }, 60_000);

  test("a new phrase without a vector fails the whole batch and writes nothing", async () => {
    const store = await backend().open();
    const [batch] = storeBatches(5, 1);
    batch.entityVectors.delete(batch.chunks[0].graph.entities[0].phrase);
    await expect(store.writeBatch(batch)).rejects.toThrow(/no vector for new phrase/);
    expect((await store.status()).chunks).toBe(0);
    expect((await store.state()).generation).toBe(0);
    await store.closeAsync();
  }, 60_000);

  test("the LLM cache, usage and summary edits persist; the chats.jsonl offset is each writer's own", async () => {
    const { open, project: name } = backend();
    const project = name("cache");
    const first = await open(project, "laptop:/home/me/shop, old");
    await fill(first, 6);
    first.set("openie:v1:hash-6-0", '{"triples":[]}');
    first.record({ provider: "openai", model: "m", inputTokens: 10, outputTokens: 3 });
    first.record({ provider: "openai", model: "m", inputTokens: 5, outputTokens: 1 });
    // Quotes in the values: InsForge's scripts carry them as literals.
    await first.setState({
      offset: 120,
      offsetCheck: "it's",
      lastIndexed: "2025-04-02T00:00:00.000Z",
      reviewSwept: true,
    });
    const [summary] = await first.summaries();
    const line = summary.text.split("\n")[1];
    expect(
      await first.replaceSummaryLine(summary.sessionId, line, "- Decided: don't drop it"),
    ).toBeGreaterThan(0);
    await first.closeAsync();

    const again = await open(project, "laptop:/home/me/shop, old");
    expect(again.get("openie:v1:hash-6-0")).toBe('{"triples":[]}');
    expect(await again.usage()).toEqual([
      { provider: "openai", model: "m", calls: 2, inputTokens: 15, outputTokens: 4 },
    ]);
    expect((await again.status()).llmUsageThisMonth).toEqual(await again.usage());
    expect(await again.state()).toMatchObject({ offset: 120, offsetCheck: "it's", reviewSwept: true });
    expect((await again.summaries()).find((s) => s.sessionId === summary.sessionId)?.text).toContain(
      "- Decided: don't drop it",
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

  test("a mirror pulled in steps (changesSince) holds what one whole pull holds", async () => {
    const { open, project: name, openPaged } = backend();
    const project = name("pull");
    const store = await open(project);
    const batches = storeBatches(7);
    await store.writeBatch(batches[0]);
    const first = await store.changesSince(undefined);
    expect(first.whole).toBe(true);
    await store.writeBatch(batches[1]);
    await store.writeBatch(batches[2]);
    const next = await store.changesSince(first.marks);
    expect(next.whole).toBe(false);
    const whole = await store.changesSince(undefined);
    const ids = (rows: Record<string, unknown>[]) => rows.map((r) => r.id);
    expect([...ids(first.rows.chunks), ...ids(next.rows.chunks)]).toEqual(ids(whole.rows.chunks));
    expect([...ids(first.rows.edges), ...ids(next.rows.edges)]).toEqual(ids(whole.rows.edges));
    expect(next.rows.turns.length + first.rows.turns.length).toBe(whole.rows.turns.length);
    // Earlier edges the later chunks added weight to come back with their new weights.
    const weight = new Map(whole.rows.edges.map((e) => [e.id, e.weight]));
    expect(next.weights.length).toBeGreaterThan(0);
    for (const w of next.weights) expect(w.weight).toBe(weight.get(w.id) as number);
    expect(whole.marks).toMatchObject({ chunk: next.marks.chunk, edge: next.marks.edge });
    if (openPaged) {
      // In pages of 4 rows (windows of 4 chunks for turns and sources): the same rows, the same marks.
      const paged = await openPaged(project, 4);
      expect(await paged.changesSince(undefined)).toEqual(whole);
      expect(await paged.changesSince(first.marks)).toEqual(next);
    }
    await store.forgetSession("s7-0");
    expect((await store.changesSince(next.marks)).whole).toBe(true);
    expect(await store.schemaVersion()).toBe(PG_SCHEMA_VERSION);
    await store.closeAsync();
  }, 60_000);

  test("the schema is versioned: reopening applies nothing, a newer version is refused in one line", async () => {
    const { open, project: name, sql, schemaReloads } = backend();
    const project = name("ver");
    const store = await open(project);
    const reloads = schemaReloads?.();
    const versions = await sql(`SELECT version FROM ${store.schema}.schema_version ORDER BY version`);
    expect(versions.map((v) => v.version)).toEqual(
      Array.from({ length: PG_SCHEMA_VERSION }, (_, i) => i + 1),
    );
    await (await open(project)).closeAsync();
    expect(await sql(`SELECT version FROM ${store.schema}.schema_version`)).toHaveLength(PG_SCHEMA_VERSION);
    // No DDL text either (after which InsForge reloads PostgREST's schema).
    if (schemaReloads) expect(schemaReloads()).toBe(reloads as number);
    await sql(`INSERT INTO ${store.schema}.schema_version VALUES (99, 'later')`);
    await expect(open(project)).rejects.toThrow(/schema version 99, newer than this triforge knows/);
    await store.closeAsync();
  }, 60_000);
}
