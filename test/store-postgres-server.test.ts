/**
 * The postgres backend against a real server (.ci/run starts one and sets TRIFORGE_TEST_PG_URL): several
 * processes writing one project at once, a connection dropped in the middle of a batch, the server down
 * at start, wrong credentials.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { connectPostgres, type SqlClient, StoreUnavailableError } from "../src/store/pg-client.ts";
import { PgMemoryStore } from "../src/store/postgres.ts";
import { storeBatches } from "./support/store-batches.ts";

const url = process.env.TRIFORGE_TEST_PG_URL;
if (!url)
  console.log(
    "store-postgres-server: TRIFORGE_TEST_PG_URL is not set, so these tests are skipped (.ci/run sets it)",
  );

/** A project's rows by natural keys (hashes, uuids, phrases), so stores written in other orders compare. */
async function naturalDump(client: SqlClient, schema: string) {
  const rows = (sql: string) => client.query<{ k: string }>(sql).then((r) => r.map((x) => x.k));
  return {
    chunks: await rows(
      `SELECT hash || '|' || session_id || '|' || graph_source AS k FROM ${schema}.chunks ORDER BY 1`,
    ),
    turns: await rows(
      `SELECT t.uuid || '|' || c.hash || '|' || t.ord AS k FROM ${schema}.turns t JOIN ${schema}.chunks c ON c.id = t.chunk_id ORDER BY 1`,
    ),
    entities: await rows(`SELECT phrase || '|' || label AS k FROM ${schema}.entities ORDER BY 1`),
    facts: await rows(
      `SELECT s.phrase || '|' || f.predicate || '|' || o.phrase AS k FROM ${schema}.facts f
       JOIN ${schema}.entities s ON s.id = f.subject JOIN ${schema}.entities o ON o.id = f.object ORDER BY 1`,
    ),
    edges: await rows(
      // Entity–entity edges are undirected and stored lower id first; ids depend on which writer came
      // first, so the endpoints are compared by name.
      `SELECT e.kind || '|' || CASE WHEN e.kind = 1 THEN c.hash || '|' || y.phrase
         ELSE least(x.phrase, y.phrase) || '|' || greatest(x.phrase, y.phrase) END || '|' || round(e.weight::numeric, 6) AS k
       FROM ${schema}.edges e LEFT JOIN ${schema}.chunks c ON e.kind = 1 AND c.id = e.a
       LEFT JOIN ${schema}.entities x ON e.kind != 1 AND x.id = e.a JOIN ${schema}.entities y ON y.id = e.b ORDER BY 1`,
    ),
    sources: await rows(
      `SELECT count(*) || '|' || coalesce(sum(amount), 0) AS k FROM ${schema}.edge_sources`,
    ),
    summaries: await rows(`SELECT session_id || '|' || text AS k FROM ${schema}.summaries ORDER BY 1`),
  };
}

describe.skipIf(!url)("postgres server", () => {
  let admin: SqlClient;
  beforeAll(async () => {
    admin = await connectPostgres(url as string);
  });
  afterAll(async () => {
    await admin?.close();
  });
  const shared = () => ({ ...admin, close: async () => {} });
  const project = (name: string) => `${name}-${process.pid}-${Date.now()}`;

  test("three processes writing one project at once lose and duplicate nothing", async () => {
    const reference = await PgMemoryStore.open(shared(), { project: project("ref"), writer: "one" });
    for (const batch of storeBatches(7, 6, 6, 3, true)) await reference.writeBatch(batch);
    const name = project("shared");
    // Each process writes every batch, in its own order: each chunk arrives three times, at once.
    const orders = ["0,1,2,3,4,5", "5,4,3,2,1,0", "2,0,4,1,5,3"];
    const children = orders.map((order, i) =>
      Bun.spawn(
        [
          process.execPath,
          join(import.meta.dir, "support", "pg-writer-child.ts"),
          url as string,
          name,
          `w${i}`,
          order,
        ],
        {
          stderr: "pipe",
        },
      ),
    );
    const codes = await Promise.all(children.map((c) => c.exited));
    for (const [i, c] of children.entries())
      expect({ code: codes[i], stderr: await new Response(c.stderr).text() }).toEqual({
        code: 0,
        stderr: "",
      });
    const store = await PgMemoryStore.open(shared(), { project: name, writer: "w0" });
    expect(await naturalDump(admin, store.schema)).toEqual(await naturalDump(admin, reference.schema));
    expect((await store.status()).chunks).toBe(36);
    // Each writer's offset is its own.
    for (const writer of ["w0", "w1", "w2"]) {
      const mine = await PgMemoryStore.open(shared(), { project: name, writer });
      expect((await mine.state()).offsetCheck).toBe(writer);
    }
  }, 120_000);

  test("a connection dropped in the middle of a batch writes nothing of it, and the next run completes", async () => {
    const batches = storeBatches(8, 3);
    const name = project("drop");
    const victimClient = await connectPostgres(url as string);
    const victim = await PgMemoryStore.open(victimClient, { project: name, writer: "w" });
    await victim.writeBatch(batches[0]);
    // Hold the summaries table: the victim's next batch writes its chunks, turns and graph, then waits here.
    const dropped = admin.transaction(async (tx) => {
      await tx.query(`LOCK TABLE ${victim.schema}.summaries IN EXCLUSIVE MODE`);
      for (let i = 0; i < 200; i++) {
        const waiting = await admin.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%summaries%' AND pid != pg_backend_pid()`,
        );
        if (waiting.length) {
          await admin.query("SELECT pg_terminate_backend($1)", [waiting[0].pid]);
          return true;
        }
        await Bun.sleep(25);
      }
      return false;
    });
    const failed = await victim.writeBatch(batches[1]).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(await dropped).toBe(true);
    expect(failed).toBeInstanceOf(StoreUnavailableError);
    expect(failed?.message).toContain("dropped the connection");
    await victimClient.close().catch(() => {});
    const next = await PgMemoryStore.open(await connectPostgres(url as string), {
      project: name,
      writer: "w",
    });
    expect((await next.status()).chunks).toBe(batches[0].chunks.length);
    for (const batch of batches) await next.writeBatch(batch);
    const reference = await PgMemoryStore.open(shared(), { project: project("drop-ref"), writer: "w" });
    for (const batch of batches) await reference.writeBatch(batch);
    expect(await naturalDump(admin, next.schema)).toEqual(await naturalDump(admin, reference.schema));
    await next.closeAsync();
  }, 120_000);

  test("wrong credentials: one line that names the server, never the password", async () => {
    const parsed = new URL(url as string);
    parsed.password = "not-the-Secret-42";
    const error = await connectPostgres(parsed.toString()).catch((e: Error) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toBe(
      `postgres at ${parsed.protocol}//${parsed.username}@${parsed.host}${parsed.pathname}: wrong user name or password`,
    );
    expect((error as Error).message).not.toContain("not-the-Secret-42");
  });
});

// Needs no server: nothing listens on port 1.
test("the server down at start: one clear line", async () => {
  const parsed = new URL("postgres://triforge:pw@127.0.0.1:5432/postgres");
  parsed.port = "1";
  parsed.password = "Secret-Down-7";
  const error = await connectPostgres(parsed.toString()).catch((e: Error) => e);
  expect(error).toBeInstanceOf(StoreUnavailableError);
  expect((error as Error).message).toMatch(
    /^postgres at postgres:\/\/triforge@127\.0\.0\.1:1\/postgres cannot be reached/,
  );
  expect((error as Error).message).not.toContain("Secret-Down-7");
  expect((error as Error).message.split("\n")).toHaveLength(1);
});
