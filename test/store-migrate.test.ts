/**
 * `triforge migrate` between the local store and Postgres (PGlite in-process, the server when .ci/run
 * started one): a real indexed store is copied, verified and switched; an interrupted copy leaves the
 * config and the source alone and resumes; the way back rebuilds an equal local store; a target holding
 * another memory is refused before anything is written.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { storePath } from "../src/home/paths.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { readProjectConfig } from "../src/project/config.ts";
import { migrateStore } from "../src/store/migrate.ts";
import { connectPostgres, type SqlClient, StoreUnavailableError } from "../src/store/pg-client.ts";
import { PgMemoryStore } from "../src/store/postgres.ts";
import { storageTarget } from "../src/store/settings.ts";
import { SqliteMemoryStore } from "../src/store/sqlite.ts";
import { failure, spawnCollect } from "./support/helpers.ts";
import { appendRecords, memoryHome, syntheticConversation } from "./support/memory-helpers.ts";
import { expectCopyResumed, fileHash, indexedSource, type SourceSnapshot } from "./support/migrate-source.ts";
import { pgliteClient } from "./support/pglite.ts";

const home = memoryHome();

/** Fails every statement after the first `allowed` inserts: a connection lost half-way through a copy. */
function droppingAfter(client: SqlClient, allowed: number): SqlClient {
  let inserts = 0;
  const query = (async (text: string, params?: unknown[]) => {
    // Rows of the memory only: the schema's own version rows are not the copy.
    if (/^\s*INSERT/i.test(text) && !/schema_version/.test(text) && ++inserts > allowed)
      throw new StoreUnavailableError("postgres at postgres://test@db/x dropped the connection (test)");
    return client.query(text, params);
  }) as SqlClient["query"];
  return {
    query,
    transaction: (work) =>
      work({ query, transaction: (w) => w({ query } as SqlClient), close: async () => {} }),
    close: async () => {},
  };
}

const servers: { name: string; connect: () => Promise<SqlClient> }[] = [
  { name: "PGlite", connect: () => pgliteClient() },
];
const serverUrl = process.env.TRIFORGE_TEST_PG_URL;
if (serverUrl) servers.push({ name: "server", connect: () => connectPostgres(serverUrl) });
else
  console.log(
    "store-migrate: TRIFORGE_TEST_PG_URL is not set, so the copy to a Postgres server is skipped (.ci/run sets it)",
  );

for (const server of servers) {
  describe(`migrate local ⇄ postgres (${server.name})`, () => {
    let client: SqlClient;
    let root: string;
    let original: SourceSnapshot;
    let originalHash: string;
    const name = `migrate-${server.name.toLowerCase()}-${process.pid}-${Date.now()}`;
    const shared = () => ({ ...client, close: async () => {} });
    const env = { TRIFORGE_PG_URL: "postgres://triforge@db.example/memory" };
    const options = (connect = async () => shared()) => ({ connect, writer: "laptop:/p", onTable: () => {} });

    beforeAll(async () => {
      client = await server.connect();
      ({ root, original, originalHash } = await indexedSource(home, name));
    }, 120_000);
    afterAll(async () => {
      await client?.close();
    });

    test("a copy cut off half-way switches nothing and changes no source byte; the next run resumes and verifies", async () => {
      const from = storageTarget("local", readProjectConfig(root), root);
      const to = storageTarget("postgres", readProjectConfig(root), root, env);
      const error = await failure(() =>
        migrateStore(
          root,
          storePath(root),
          from,
          to,
          options(async () => droppingAfter(client, 3)),
        ),
      );
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(readProjectConfig(root).storage).toBe("local");
      expect(fileHash(storePath(root))).toBe(originalHash);

      await expectCopyResumed(
        (onTable) => migrateStore(root, storePath(root), from, to, { ...options(), onTable }),
        { root, original, originalHash },
        "postgres",
        name,
      );

      const store = await PgMemoryStore.open(shared(), { project: name, writer: "laptop:/p" });
      expect(await store.snapshot()).toEqual(original);
      expect((await store.state()).offset).toBeGreaterThan(0);
    }, 120_000);

    test("back to local: the copy replaces the store (the old one kept aside) and equals the original", async () => {
      const config = readProjectConfig(root);
      const from = storageTarget("postgres", config, root, env);
      await migrateStore(root, storePath(root), from, { kind: "local" }, options());
      expect(readProjectConfig(root).storage).toBe("local");
      expect(existsSync(`${storePath(root)}.before-migrate`)).toBe(true);
      expect(fileHash(`${storePath(root)}.before-migrate`)).toBe(originalHash);
      const store = new SqliteMemoryStore(storePath(root));
      const { generation: _g, ...snapshot } = await store.snapshot();
      const { generation: _o, ...expected } = original;
      expect(snapshot).toEqual(expected);
      expect((await store.state()).offset).toBeGreaterThan(0);
      store.close();
      // The indexer carries on from the copied offset: nothing new, nothing added twice.
      const again = await indexProject(root, { llm: null });
      expect(again.chunks).toBe(0);
    }, 120_000);

    test("a target holding another memory for the project is refused before anything is written", async () => {
      const other = home.project(`${name}-other`);
      appendRecords(other, syntheticConversation(2, 3, "other"));
      await indexProject(other, { llm: null });
      const to = { kind: "postgres" as const, url: "postgres://unused", project: name };
      const before = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "triforge_${name.replaceAll("-", "_")}".chunks`,
      );
      const error = await failure(() =>
        migrateStore(other, storePath(other), { kind: "local" }, to, options()),
      );
      expect(error.message).toContain("already holds another memory for this project");
      const after = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "triforge_${name.replaceAll("-", "_")}".chunks`,
      );
      expect(after).toEqual(before);
      expect(readProjectConfig(other).storage).toBe("local");
    }, 120_000);
  });
}

test("triforge migrate without a Postgres URL says what to set, in one line", async () => {
  const root = home.project("no-url");
  const result = await spawnCollect(
    [process.execPath, "src/index.ts", "migrate", "--to=postgres", "--project", root],
    {
      env: { ...process.env, TRIFORGE_PG_URL: "" },
      cwd: `${import.meta.dir}/..`,
    },
  );
  expect(result.code).toBe(1);
  expect(result.stderr.trim()).toBe(
    "triforge migrate: storage postgres needs a connection URL: set TRIFORGE_PG_URL (or postgres.url in .triforge/config.json)",
  );
}, 60_000);

test("migrate copies every table the SQLite store has, column for column (a new table or column fails here)", async () => {
  const { DERIVED_TABLES, TABLES } = await import("../src/store/migrate.ts");
  const store = new SqliteMemoryStore(`${home.home}/fresh.db`);
  store.close();
  const { Database } = await import("bun:sqlite");
  const db = new Database(`${home.home}/fresh.db`, { readonly: true });
  const tables = (
    db.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]
  ).map((t) => ({
    name: t.name,
    columns: (db.query(`PRAGMA table_info(${t.name})`).all() as { name: string }[]).map((c) => c.name),
  }));
  db.close();
  expect(tables.filter((t) => !DERIVED_TABLES.includes(t.name))).toEqual(
    TABLES.map((t) => ({ name: t.name, columns: t.columns.map(([c]) => c) })).sort((a, b) =>
      a.name.localeCompare(b.name),
    ),
  );
});

test("openConfiguredStore opens the backend the config names: postgres with its project name, else the local file", async () => {
  const { openConfiguredStore } = await import("../src/store/open.ts");
  const local = await openConfiguredStore(home.project("opens-local"));
  expect(local.backend).toBe("sqlite");
  local.close();
  const root = home.project("opens-pg", {
    storage: "postgres",
    llm: "none",
    postgres: { project: "team-shop" },
  });
  const missing = await failure(() => openConfiguredStore(root, async () => pgliteClient()));
  expect(missing.message).toContain("set TRIFORGE_PG_URL");
  process.env.TRIFORGE_PG_URL = "postgres://triforge@db.example/memory";
  try {
    const client = await pgliteClient();
    const store = (await openConfiguredStore(root, async (target) => {
      expect(target).toEqual({
        kind: "postgres",
        url: "postgres://triforge@db.example/memory",
        project: "team-shop",
      });
      return client;
    })) as PgMemoryStore;
    expect(store.backend).toBe("postgres");
    expect(store.schema).toBe('"triforge_team_shop"');
    await store.closeAsync();
  } finally {
    delete process.env.TRIFORGE_PG_URL;
  }
}, 60_000);

test("triforge migrate with the server down: one line without the password, the config unchanged", async () => {
  const root = home.project("server-down");
  appendRecords(root, syntheticConversation(1, 2, "down"));
  await indexProject(root, { llm: null });
  const result = await spawnCollect(
    [process.execPath, "src/index.ts", "migrate", "--to=postgres", "--project", root],
    {
      env: { ...process.env, TRIFORGE_PG_URL: "postgres://triforge:Secret-Pw-9@127.0.0.1:1/memory" },
      cwd: `${import.meta.dir}/..`,
    },
  );
  expect(result.code).toBe(1);
  expect(result.stderr).not.toContain("Secret-Pw-9");
  expect(result.stderr.trim().split("\n")).toEqual([
    expect.stringMatching(
      /^triforge migrate: postgres at postgres:\/\/triforge@127\.0\.0\.1:1\/memory cannot be reached \(.*\)\. Nothing was switched; run it again to resume\.$/,
    ),
  ]);
  expect(readProjectConfig(root).storage).toBe("local");
}, 60_000);

describe.skipIf(!serverUrl)("migrate to the server, connection dropped", () => {
  test("a connection terminated in the middle of the copy: a clear error, nothing switched; the next run completes", async () => {
    const root = home.project(`dropped-${process.pid}-${Date.now()}`);
    appendRecords(root, syntheticConversation(3, 4, "drop"));
    await indexProject(root, { llm: null });
    const admin = await connectPostgres(serverUrl as string);
    const to = storageTarget("postgres", readProjectConfig(root), root, { TRIFORGE_PG_URL: serverUrl });
    const schema = `"triforge_${(to as { project: string }).project.replaceAll("-", "_")}"`;
    const options = { connect: () => connectPostgres(serverUrl as string), writer: "w" };
    // Create the schema first, then hold the edges table: the copy writes chunks, turns, phrases, facts, then waits.
    const setup = await connectPostgres(serverUrl as string);
    const { migrateSchema } = await import("../src/store/pg-schema.ts");
    await migrateSchema(setup, schema);
    await setup.close();
    const dropped = admin.transaction(async (tx) => {
      await tx.query(`LOCK TABLE ${schema}.edges IN EXCLUSIVE MODE`);
      for (let i = 0; i < 400; i++) {
        const waiting = await admin.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%edges%' AND pid != pg_backend_pid()",
        );
        if (waiting.length) {
          await admin.query("SELECT pg_terminate_backend($1)", [waiting[0].pid]);
          return true;
        }
        await Bun.sleep(25);
      }
      return false;
    });
    const error = await failure(() => migrateStore(root, storePath(root), { kind: "local" }, to, options));
    expect(await dropped).toBe(true);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error.message).toContain("dropped the connection");
    expect(readProjectConfig(root).storage).toBe("local");
    const report = await migrateStore(root, storePath(root), { kind: "local" }, to, options);
    expect(report.tables.find((t) => t.name === "edges")?.copied).toBeGreaterThan(0);
    expect(report.tables.find((t) => t.name === "chunks")?.copied).toBe(0);
    expect(readProjectConfig(root).storage).toBe("postgres");
    await admin.close();
  }, 120_000);
});
