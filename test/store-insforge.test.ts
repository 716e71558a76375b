/**
 * The InsForge store against InsForge's raw SQL endpoint: the contract server (test/support/fakes/
 * insforge.ts, PGlite behind InsForge's routes, bodies and error shapes), and a real InsForge when
 * INSFORGE_BASE_URL and INSFORGE_API_KEY are set. The SQLite store is the reference: the same batches
 * must give the same snapshot (row ids, vectors, weights), status, summaries and forget results.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { InsforgeMemoryStore } from "../src/store/insforge.ts";
import { connectInsforge, InsforgeClient } from "../src/store/insforge-client.ts";
import { StoreUnavailableError } from "../src/store/pg-client.ts";
import { PG_SCHEMA_VERSION } from "../src/store/pg-schema.ts";
import { SqliteMemoryStore } from "../src/store/sqlite.ts";
import type { MemoryStore } from "../src/store/types.ts";
import { type FakeInsforge, startFakeInsforge } from "./support/fakes/insforge.ts";
import { failure, tempDir } from "./support/helpers.ts";
import { storeBatches } from "./support/store-batches.ts";

const dir = tempDir("triforge-insforge-");
let projects = 0;
const run = `${process.pid}_${Date.now()}`;

async function fill(store: MemoryStore, seed: number): Promise<void> {
  for (const batch of storeBatches(seed)) await store.writeBatch(batch);
}

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

/**
 * What two stores hold but synonym edges: the SQLite store works out a replaced graph's synonym edges
 * itself (graph.ts SynonymGraph), a shared store writes those it is given, as the Postgres store does.
 */
function withoutSynonyms(seen: Awaited<ReturnType<typeof observed>>) {
  const { edges } = seen.snapshot;
  const keep = [...edges.kind].map((k, i) => (k === 2 ? -1 : i)).filter((i) => i >= 0);
  return {
    ...seen,
    status: { ...seen.status, edges: { ...seen.status.edges, synonym: 0 } },
    snapshot: {
      ...seen.snapshot,
      edges: keep.map((i) => [edges.kind[i], edges.a[i], edges.b[i], edges.weight[i]]),
    },
  };
}

function reference(): SqliteMemoryStore {
  return new SqliteMemoryStore(join(dir, `ref-${++projects}.db`));
}

interface Server {
  name: string;
  start(): Promise<{ url: string; apiKey: string; fake?: FakeInsforge }>;
}

const servers: Server[] = [
  {
    name: "the InsForge contract server",
    start: async () => {
      const fake = await startFakeInsforge();
      return { url: fake.url, apiKey: fake.apiKey, fake };
    },
  },
];
const realUrl = process.env.INSFORGE_BASE_URL;
const realKey = process.env.INSFORGE_API_KEY;
if (realUrl && realKey)
  servers.push({
    name: "a real InsForge (INSFORGE_BASE_URL)",
    start: async () => ({ url: realUrl, apiKey: realKey }),
  });
else {
  console.log(
    "store-insforge: INSFORGE_BASE_URL and INSFORGE_API_KEY are not set, so the suite against a real InsForge is skipped (the contract server runs it)",
  );
  test.skip("insforge store on a real InsForge: skipped, INSFORGE_BASE_URL and INSFORGE_API_KEY are not set", () => {});
}

for (const server of servers) {
  describe(`insforge store on ${server.name}`, () => {
    let url: string;
    let apiKey: string;
    let fake: FakeInsforge | undefined;
    beforeAll(async () => {
      ({ url, apiKey, fake } = await server.start());
    }, 60_000);
    const made: string[] = [];
    afterAll(async () => {
      // A real InsForge keeps what the suite made: each test's project schema is dropped.
      if (url && !fake)
        for (const project of made)
          await client().script([`DROP SCHEMA IF EXISTS "triforge_${project}" CASCADE`]);
      await fake?.close();
    });
    const client = (options = {}) =>
      new InsforgeClient({ baseUrl: url, apiKey }, { backoffMs: 20, ...options });
    const open = (project = `tf_test_${run}_${++projects}`, writer = "host:/a,b path") => {
      made.push(project);
      return InsforgeMemoryStore.open(client(), { project, writer });
    };

    test("the same batches give the same snapshot, status, summaries and vectors as SQLite", async () => {
      const ref = reference();
      const store = await open();
      await fill(ref, 1);
      await fill(store, 1);
      expect(await observed(store)).toEqual(await observed(ref));
      expect((await store.snapshot()).chunks.length).toBe(18);
      ref.close();
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
      const ref = reference();
      const store = await open();
      await fill(ref, 3);
      await fill(store, 3);
      const forgotten = await ref.forgetSession("s3-1");
      expect(await store.forgetSession("s3-1")).toEqual(forgotten);
      expect(forgotten.chunks).toBeGreaterThan(0);
      expect(await store.hasSession("s3-1")).toBe(false);
      expect(await store.hasSession("s3-0")).toBe(true);
      expect(await observed(store)).toEqual(await observed(ref));
      // A second session after the first: the removal plans from what the first left.
      expect(await store.forgetSession("s3-2")).toEqual(await ref.forgetSession("s3-2"));
      expect(await observed(store)).toEqual(await observed(ref));
      ref.close();
      await store.closeAsync();
    }, 60_000);

    test("a retried LLM graph replaces the chunk's contribution as in SQLite", async () => {
      const ref = reference();
      const store = await open();
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
      expect(withoutSynonyms(await observed(store))).toEqual(withoutSynonyms(await observed(ref)));
      ref.close();
      await store.closeAsync();
    }, 60_000);

    test("records deleted one by one go as SQLite's forgetChunk takes them, and are never stored again", async () => {
      const ref = reference();
      const store = await open();
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
      const store = await open();
      const [batch] = storeBatches(5, 1);
      batch.entityVectors.delete(batch.chunks[0].graph.entities[0].phrase);
      await expect(store.writeBatch(batch)).rejects.toThrow(/no vector for new phrase/);
      expect((await store.status()).chunks).toBe(0);
      expect((await store.state()).generation).toBe(0);
      await store.closeAsync();
    }, 60_000);

    test("the LLM cache, usage and summary edits persist; the chats.jsonl offset is each writer's own", async () => {
      const project = `tf_cache_${run}_${++projects}`;
      const first = await open(project, "laptop:/home/me/shop, old");
      await fill(first, 6);
      first.set("openie:v1:hash-6-0", '{"triples":[]}');
      first.record({ provider: "openai", model: "m", inputTokens: 10, outputTokens: 3 });
      first.record({ provider: "openai", model: "m", inputTokens: 5, outputTokens: 1 });
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
      await other.forgetSession("s6-0");
      expect(other.get("openie:v1:hash-6-0")).toBeUndefined();
      await again.closeAsync();
      await other.closeAsync();
    }, 60_000);

    test("a mirror pulled in steps (changesSince) holds what one whole pull holds", async () => {
      const project = `tf_pull_${run}_${++projects}`;
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
      // In pages of 4 rows (windows of 4 chunks for turns and sources): the same rows, the same marks.
      const paged = await InsforgeMemoryStore.open(client(), {
        project,
        writer: "w",
        pageRows: 4,
      });
      expect(await paged.changesSince(undefined)).toEqual(whole);
      expect(await paged.changesSince(first.marks)).toEqual(next);
      await store.forgetSession("s7-0");
      expect((await store.changesSince(next.marks)).whole).toBe(true);
      expect(await store.schemaVersion()).toBe(PG_SCHEMA_VERSION);
      await store.closeAsync();
    }, 60_000);

    test("several writers pushing the same batches at once store each chunk once, as one writer would", async () => {
      const project = `tf_many_${run}_${++projects}`;
      const ref = reference();
      for (const batch of storeBatches(8, 3, 6, 3, true)) await ref.writeBatch(batch);
      const writers = await Promise.all([0, 1, 2].map((w) => open(project, `machine-${w}`)));
      const scripts = () => fake?.calls.filter((c) => c.query.includes("pg_advisory_xact_lock")).length ?? 0;
      const before = scripts();
      const orders = [
        [0, 1, 2],
        [2, 1, 0],
        [1, 2, 0],
      ];
      await Promise.all(
        writers.map(async (store, w) => {
          const batches = storeBatches(8, 3, 6, 3, true);
          for (const i of orders[w]) await store.writeBatch(batches[i]);
        }),
      );
      const snapshot = await writers[0].snapshot();
      const expected = await ref.snapshot();
      const byKey = (s: typeof snapshot) => ({
        chunks: s.chunks.map((c) => c.text).sort(),
        entities: s.entities.map((e) => e.phrase).sort(),
        facts: s.facts.length,
        edges: s.edges.kind.length,
        weight: [...s.edges.weight].reduce((a, b) => a + b, 0).toFixed(6),
      });
      expect(byKey(snapshot)).toEqual(byKey(expected));
      // The writers came in between each other: some scripts were refused by their guard and planned again.
      if (fake) expect(scripts() - before).toBeGreaterThan(9);
      ref.close();
      for (const store of writers) await store.closeAsync();
    }, 120_000);

    test("the schema is versioned: reopening sends no DDL (no PostgREST reload), a newer version is refused in one line", async () => {
      const project = `tf_ver_${run}_${++projects}`;
      const store = await open(project);
      const reloads = fake?.schemaReloads ?? 0;
      const raw = client();
      const versions = await raw.sql<{ version: number }>(
        `SELECT version FROM ${store.schema}.schema_version ORDER BY version`,
      );
      expect(versions.map((v) => v.version)).toEqual(
        Array.from({ length: PG_SCHEMA_VERSION }, (_, i) => i + 1),
      );
      await (await open(project)).closeAsync();
      if (fake) expect(fake.schemaReloads).toBe(reloads);
      await raw.sql(`INSERT INTO ${store.schema}.schema_version VALUES (99, 'later')`);
      await expect(open(project)).rejects.toThrow(/schema version 99, newer than this triforge knows/);
      await store.closeAsync();
    }, 60_000);

    test("a wrong key is one line that names the server and never the key", async () => {
      const wrong = `ik_${"0".repeat(32)}`;
      const error = await failure(() => connectInsforge({ baseUrl: url, apiKey: wrong }));
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(error.message).toContain(`insforge at ${url}: the API key was refused`);
      expect(error.message).not.toContain(wrong);
      expect(error.message).not.toContain(apiKey);
      expect(error.message.split("\n")).toHaveLength(1);
    });
  });
}

describe("insforge store faults (contract server)", () => {
  let fake: FakeInsforge;
  beforeAll(async () => {
    fake = await startFakeInsforge();
  }, 60_000);
  afterAll(async () => {
    await fake?.close();
  });
  const client = () =>
    new InsforgeClient({ baseUrl: fake.url, apiKey: fake.apiKey }, { backoffMs: 20, retries: 2 });
  const open = (project = `tf_fault_${run}_${++projects}`) =>
    InsforgeMemoryStore.open(client(), { project, writer: "w" });

  test("no server: one line, nothing else", async () => {
    const error = await failure(() =>
      connectInsforge({ baseUrl: "http://127.0.0.1:9", apiKey: "ik_x" }, { backoffMs: 5 }),
    );
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error.message).toMatch(/^insforge at http:\/\/127\.0\.0\.1:9 cannot be reached \(/);
  });

  test("a server that does not answer, or is not InsForge: one line each", async () => {
    fake.hangNext();
    const slow = new InsforgeClient(
      { baseUrl: fake.url, apiKey: fake.apiKey },
      { timeoutMs: 300, retries: 0 },
    );
    expect((await failure(() => slow.sql("SELECT 1"))).message).toBe(
      `insforge at ${fake.url} did not answer within 0.3 s`,
    );
    const elsewhere = new InsforgeClient({ baseUrl: `${fake.url}/not-insforge`, apiKey: fake.apiKey });
    expect((await failure(() => elsewhere.sql("SELECT 1"))).message).toBe(
      `insforge at ${fake.url}/not-insforge has no /api/database/advance/rawsql endpoint (404): is INSFORGE_BASE_URL an InsForge backend?`,
    );
  });

  test("the statements InsForge refuses are refused by the contract server too", async () => {
    const raw = client();
    for (const query of [
      "BEGIN; SELECT 1; COMMIT",
      "SELECT set_config('a.b', 'c', false)",
      "SET search_path = x",
    ])
      expect((await failure(() => raw.sql(query))).message).toMatch(/refused the statement \(.*not allowed/);
    // One call without params is one transaction: a failing statement takes back the ones before it.
    const project = `"tf_tx_${run}"`;
    await raw.script([`CREATE SCHEMA ${project}`, `CREATE TABLE ${project}.t(x int)`]);
    await failure(() => raw.script([`INSERT INTO ${project}.t VALUES (1)`, "SELECT 'no'::int"]));
    expect(await raw.sql(`SELECT count(*) AS n FROM ${project}.t`)).toEqual([{ n: "0" }]);
  });

  test("a connection dropped mid-batch writes none of it; the next run writes it whole", async () => {
    const ref = reference();
    const store = await open();
    const batches = storeBatches(9);
    await ref.writeBatch(batches[0]);
    await ref.writeBatch(batches[1]);
    await store.writeBatch(batches[0]);
    // The server dies while the script arrives and stays down: the writer gives up with one line.
    fake.dropNext({ ran: false, when: (q) => q.includes("pg_advisory_xact_lock") });
    const error = await failure(() => store.writeBatch(batches[1]));
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error.message).toMatch(/dropped the connection|cannot be reached/);
    fake.restart();
    expect((await store.status()).chunks).toBe(batches[0].chunks.length);
    await store.writeBatch(batches[1]);
    expect(await observed(store)).toEqual(await observed(ref));
    ref.close();
    await store.closeAsync();
  }, 60_000);

  test("a batch that ran but whose answer was lost is sent again and adds nothing twice", async () => {
    const ref = reference();
    const store = await open();
    const batches = storeBatches(10);
    for (const batch of batches) await ref.writeBatch(batch);
    await store.writeBatch(batches[0]);
    fake.dropNext({ ran: true, restart: true, when: (q) => q.includes("pg_advisory_xact_lock") });
    await store.writeBatch(batches[1]);
    await store.writeBatch(batches[2]);
    const { generation: _a, ...got } = await store.snapshot();
    const { generation: _b, ...want } = await ref.snapshot();
    expect(got).toEqual(want);
    ref.close();
    await store.closeAsync();
  }, 60_000);
});
