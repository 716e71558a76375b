/**
 * The InsForge store against InsForge's raw SQL endpoint: the contract server (test/support/fakes/
 * insforge.ts, PGlite behind InsForge's routes, bodies and error shapes), and a real InsForge when
 * INSFORGE_BASE_URL and INSFORGE_API_KEY are set. The shared store's suite (test/support/store-contract.ts,
 * the SQLite store as reference) runs on each, then what only InsForge has: writers racing through planned
 * scripts, a refused key, a dropped connection, a lost answer.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { InsforgeMemoryStore } from "../src/store/insforge.ts";
import { connectInsforge, InsforgeClient } from "../src/store/insforge-client.ts";
import { StoreUnavailableError } from "../src/store/pg-client.ts";
import { type FakeInsforge, startFakeInsforge } from "./support/fakes/insforge.ts";
import { failure, tempDir } from "./support/helpers.ts";
import { storeBatches } from "./support/store-batches.ts";
import { observed, referenceStore as reference, storeContract } from "./support/store-contract.ts";

const dir = tempDir("triforge-insforge-");
let projects = 0;
const run = `${process.pid}_${Date.now()}`;

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

    storeContract(() => ({
      open,
      project: (tag) => `tf_${tag}_${run}_${++projects}`,
      sql: (text) => client().sql(text),
      openPaged: (project, rows) =>
        InsforgeMemoryStore.open(client(), { project, writer: "w", pageRows: rows }),
      schemaReloads: fake ? () => (fake as FakeInsforge).schemaReloads : undefined,
    }));

    test("several writers pushing the same batches at once store each chunk once, as one writer would", async () => {
      const project = `tf_many_${run}_${++projects}`;
      const ref = reference(dir);
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
    const ref = reference(dir);
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
    const ref = reference(dir);
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
