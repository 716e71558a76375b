/**
 * `storage: postgres` as a team's shared memory: every machine indexes into its own local store and
 * pushes to one database; recall and status read every machine's memory through the local mirror.
 * Run on PGlite in-process and on the server .ci/run starts (TRIFORGE_TEST_PG_URL), where the machines
 * are separate processes with their own data folders. The cases every shared backend passes alike are
 * in test/support/shared-memory-contract.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { errorLogPath, mirrorStorePath, storePath } from "../src/home/paths.ts";
import { forgetSession } from "../src/memory/forget.ts";
import { summaryWithout } from "../src/memory/forget-chunk.ts";
import { claudeSlug } from "../src/memory/import/claude.ts";
import { importHistory } from "../src/memory/import/history.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { closeWarmIndexes, recall } from "../src/memory/recall/recall.ts";
import { refreshMirror } from "../src/memory/shared.ts";
import { connectPostgres, type SqlClient, StoreUnavailableError } from "../src/store/pg-client.ts";
import { lockKey, PG_SCHEMA_VERSION, projectSchema } from "../src/store/pg-schema.ts";
import { PgMemoryStore } from "../src/store/postgres.ts";
import { SqliteMemoryStore } from "../src/store/sqlite.ts";
import { compiledBinary, spawnCollect, tempDir } from "./support/helpers.ts";
import { appendRecords, chatLog, memoryHome, syntheticConversation } from "./support/memory-helpers.ts";
import { pgliteClient } from "./support/pglite.ts";
import {
  expectPushResumed,
  type SharedBackend,
  sessionsOf,
  sharedDump,
  sharedMemoryContract,
} from "./support/shared-memory-contract.ts";
import { storeBatches } from "./support/store-batches.ts";

const home = memoryHome();
const serverUrl = process.env.TRIFORGE_TEST_PG_URL;
if (!serverUrl)
  console.log(
    "store-shared: TRIFORGE_TEST_PG_URL is not set, so the shared store is tested on PGlite only, without separate processes (.ci/run sets it)",
  );

/** A client that fails every statement after the first `allowed` chunk inserts: the connection lost mid-push. */
function droppingAfter(client: SqlClient, allowed: number): SqlClient {
  let inserts = 0;
  const query = (async (text: string, params?: unknown[]) => {
    if (/INSERT INTO \S+\.chunks/.test(text) && ++inserts > allowed)
      throw new StoreUnavailableError("postgres at postgres://test@db/x dropped the connection (test)");
    return client.query(text, params);
  }) as SqlClient["query"];
  const inner: SqlClient = {
    query,
    transaction: (work) => client.transaction((tx) => work({ ...tx, query: wrapQuery(tx) })),
    close: async () => {},
  };
  function wrapQuery(tx: SqlClient): SqlClient["query"] {
    return (async (text: string, params?: unknown[]) => {
      if (/INSERT INTO \S+\.chunks/.test(text) && ++inserts > allowed)
        throw new StoreUnavailableError("postgres at postgres://test@db/x dropped the connection (test)");
      return tx.query(text, params);
    }) as SqlClient["query"];
  }
  return inner;
}

const backends: { name: string; connect: () => Promise<SqlClient>; url?: string }[] = [
  { name: "PGlite", connect: () => pgliteClient() },
];
if (serverUrl) backends.push({ name: "server", connect: () => connectPostgres(serverUrl), url: serverUrl });

for (const backend of backends) {
  describe(`shared memory in postgres (${backend.name})`, () => {
    let client: SqlClient;
    const connection = { connect: async () => ({ ...client, close: async () => {} }) };
    const name = (what: string) => `${what}-${backend.name.toLowerCase()}-${process.pid}-${Date.now()}`;
    // PGlite is reached only through `connection`; the URL (a closed port) is what recall's own pull and
    // status try, and fail at once on. The server is named by TRIFORGE_PG_URL.
    const url = backend.url ? {} : { url: "postgres://pglite@127.0.0.1:9/pglite" };
    const config = (project: string) => ({ llm: "none", storage: "postgres", postgres: { project, ...url } });
    const index = (root: string, shared = connection) => indexProject(root, { llm: null, shared });

    const dump = (project: string) => sharedDump((sql) => client.query(sql), project);

    const sharedBackend = (): SharedBackend => ({
      home,
      name,
      config,
      index: (root) => index(root),
      refresh: (root) => refreshMirror(root, connection),
      query: (sql) => client.query(sql),
      forgetReaches: Boolean(backend.url),
    });
    sharedMemoryContract(sharedBackend);

    beforeAll(async () => {
      client = await backend.connect();
      // The server runs recall's own pull (the URL); PGlite is reached only through `connection`.
      if (backend.url) process.env.TRIFORGE_PG_URL = backend.url;
      else delete process.env.TRIFORGE_PG_URL;
    }, 60_000);
    const previousUrl = process.env.TRIFORGE_PG_URL;
    afterAll(async () => {
      closeWarmIndexes();
      await client?.close();
      // Test files share the process: the next one sees the environment it started with.
      if (previousUrl === undefined) delete process.env.TRIFORGE_PG_URL;
      else process.env.TRIFORGE_PG_URL = previousUrl;
    });

    test("the database down at start, then the connection dropped mid-push: the local index completes, the next run pushes the rest, nothing lost or doubled", async () => {
      const project = name("faults");
      const root = home.project(name("faults"), config(project));
      // 3 sessions of 100 exchanges: 300 chunks, two pushed batches.
      const records = syntheticConversation(3, 100, "f");
      appendRecords(root, records);
      const down = await index(root, {
        connect: async () => {
          throw new StoreUnavailableError(
            "postgres at postgres://u@127.0.0.1:9/db cannot be reached (Connection refused)",
          );
        },
      });
      expect(down.status).toBe("indexed");
      expect(down.chunks).toBe(300);
      expect(down.shared?.error).toContain("cannot be reached");
      const log = readFileSync(errorLogPath(root), "utf8").trim().split("\n");
      expect(log.filter((l) => l.includes("shared store not updated")).length).toBe(1);

      const cut = await index(root, { connect: async () => droppingAfter(client, 1) });
      expect(cut.shared?.error).toContain("dropped the connection");
      await expectPushResumed(sharedBackend(), root, project, records);
    }, 180_000);

    test("forget on one machine removes the session from the shared store, both mirrors and the other machine's own store", async () => {
      const project = name("forget");
      const one = home.project(name("f1"), config(project));
      const two = home.project(name("f2"), config(project));
      appendRecords(one, syntheticConversation(3, 3, "mine"));
      appendRecords(two, syntheticConversation(2, 3, "yours"));
      await index(one);
      await index(two);
      await refreshMirror(one, connection);
      // Machine two forgets a session only machine one captured.
      const report = await forgetSession(two, "mine1", { shared: connection });
      expect(report.status).toBe("forgotten");
      expect(report.shared).toBe("forgotten");
      const shared = await dump(project);
      expect(shared.chunks.some((c) => c.endsWith("|mine1"))).toBe(false);
      expect(shared.chunks.length).toBe(12);
      const mirrorTwo = new SqliteMemoryStore(mirrorStorePath(two), { readonly: true });
      expect(await mirrorTwo.hasSession("mine1")).toBe(false);
      mirrorTwo.close();
      // Machine one learns it at its next index: gone from its store, its chat log and its mirror.
      const next = await index(one);
      expect(next.shared?.push?.forgottenHere).toBe(1);
      const local = new SqliteMemoryStore(storePath(one), { readonly: true });
      expect(await local.hasSession("mine1")).toBe(false);
      expect(await local.hasSession("mine0")).toBe(true);
      local.close();
      expect(readFileSync(chatLog(one), "utf8")).not.toContain('"mine1"');
      const { hits } = await recall(one, "mine1 Session 1 step 0", { topK: 20, mode: "bm25" });
      expect(hits.some((h) => h.session_id === "mine1")).toBe(false);
      // The shared store is not pushed the session again, and a rebuilt store would not index it either.
      expect((await dump(project)).chunks.length).toBe(12);
    }, 120_000);

    test("forget while the database is down: gone from this machine's mirror at once, from the shared store at the next index", async () => {
      const project = name("offline");
      const root = home.project(name("offline"), config(project));
      appendRecords(root, syntheticConversation(2, 3, "off"));
      await index(root);
      const down = {
        connect: async (): Promise<SqlClient> => {
          throw new StoreUnavailableError("postgres at postgres://u@127.0.0.1:9/db cannot be reached (test)");
        },
      };
      const report = await forgetSession(root, "off0", { shared: down });
      expect(report.shared).toBe("pending");
      const mirror = new SqliteMemoryStore(mirrorStorePath(root), { readonly: true });
      expect(await mirror.hasSession("off0")).toBe(false);
      expect(await mirror.hasSession("off1")).toBe(true);
      mirror.close();
      expect((await dump(project)).chunks.some((c) => c.endsWith("|off0"))).toBe(true);
      const next = await index(root);
      expect(next.shared?.push?.forgottenThere).toBe(1);
      const after = await dump(project);
      expect(after.chunks.some((c) => c.endsWith("|off0"))).toBe(false);
      expect(after.chunks.length).toBe(3);
    }, 120_000);

    test("import on one machine leaves out a session another machine forgot in the shared store", async () => {
      const project = name("import");
      const one = home.project(name("i1"), config(project));
      const two = home.project(name("i2"), config(project));
      const session = "8c2f4e61-1d3b-4a5c-9e7f-0a1b2c3d4e5f";
      appendRecords(one, syntheticConversation(1, 2, "seed"));
      await index(one);
      // Machine one forgets the session (it never saw it: --force), in the shared store too.
      expect((await forgetSession(one, session, { force: true, shared: connection })).shared).toBe(
        "forgotten",
      );
      await refreshMirror(two, connection);
      // Machine two's Claude Code history holds that session.
      const agentHomeDir = tempDir("triforge-agent-home-");
      const transcript = readFileSync(
        join(import.meta.dir, "fixtures", "agents", "claude", `${session}.jsonl`),
        "utf8",
      ).replaceAll("/home/user/acme-shop", two);
      const dir = join(agentHomeDir, ".claude", "projects", claudeSlug(two));
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${session}.jsonl`), transcript);
      const report = await importHistory(two, { home: agentHomeDir, env: {} }, { agents: ["claude"] });
      expect(report.forgotten).toBe(1);
      expect(report.sessions).toBe(0);
      expect(existsSync(chatLog(two)) ? readFileSync(chatLog(two), "utf8") : "").not.toContain(session);
    }, 120_000);

    test("a record deleted in the shared store is refused by every later writer", async () => {
      const store = await PgMemoryStore.open(
        { ...client, close: async () => {} },
        { project: name("refused"), writer: "w" },
      );
      const [batch] = storeBatches(5, 1, 4, 2, true);
      await store.writeBatch(batch);
      const gone = batch.chunks[1];
      expect(await store.forgetRecords([gone.turns[0].uuid], summaryWithout)).toBe(1);
      await store.writeBatch(batch);
      const { chunks } = await store.snapshot();
      expect(chunks.map((c) => c.text).sort()).toEqual(
        batch.chunks
          .filter((c) => c !== gone)
          .map((c) => c.text)
          .sort(),
      );
      expect([...(await store.forgottenRecords())].sort()).toEqual(gone.turns.map((t) => t.uuid).sort());
      await store.closeAsync();
    }, 60_000);
  });
}

test("status and doctor with the database down: one line each, the password never shown, what is left to push", async () => {
  const root = home.project(`down-${process.pid}`, {
    llm: "none",
    storage: "postgres",
    postgres: { project: "down", url: "postgres://team:hunter2@127.0.0.1:9/memory" },
  });
  appendRecords(root, syntheticConversation(2, 2, "d"));
  const binary = process.env.TRIFORGE_TEST_BINARY ? [await compiledBinary()] : ["bun", "src/index.ts"];
  const run = (args: string[]) =>
    spawnCollect([...binary, ...args, "--project", root], { env: { ...process.env, TRIFORGE_PG_URL: "" } });
  const indexed = await run(["index"]);
  expect(indexed.code).toBe(0);
  expect(indexed.stdout).toContain(
    "Shared store not updated: postgres at postgres://team@127.0.0.1:9/memory cannot be reached",
  );
  const status = await run(["status"]);
  expect(status.code).toBe(0);
  expect(status.stdout).toContain("Shared     postgres at postgres://team@127.0.0.1:9/memory not reached");
  expect(status.stdout).toContain("this machine: 4 chunks, 0 pushed, 4 to push");
  const doctor = await run(["doctor", "--json"]);
  const check = (JSON.parse(doctor.stdout) as { name: string; ok: boolean; detail: string }[]).find(
    (c) => c.name === "shared store",
  );
  expect(check?.ok).toBe(false);
  expect(check?.detail).toContain("cannot be reached");
  expect(check?.detail).toContain("4 of its 4 chunks still to push");
  for (const out of [indexed, status, doctor]) expect(out.stdout + out.stderr).not.toContain("hunter2");
  expect(readFileSync(errorLogPath(root), "utf8")).not.toContain("hunter2");
}, 120_000);

describe.skipIf(!serverUrl)("shared memory in postgres: machines as processes (server)", () => {
  let admin: SqlClient;
  beforeAll(async () => {
    admin = await connectPostgres(serverUrl as string);
  });
  afterAll(async () => {
    await admin?.close();
  });

  /** The CLI (the compiled binary when TRIFORGE_TEST_BINARY names one) with its own data folder. */
  async function triforge(args: string[], dataHome: string) {
    const binary = process.env.TRIFORGE_TEST_BINARY ? [await compiledBinary()] : ["bun", "src/index.ts"];
    return spawnCollect([...binary, ...args], {
      env: { ...process.env, TRIFORGE_HOME: dataHome, TRIFORGE_PG_URL: serverUrl },
    });
  }

  test("two machines (two data folders) indexing at once as processes: recall and status on either see both; pushed again, nothing doubles", async () => {
    const project = `procs-${process.pid}-${Date.now()}`;
    const machines = [0, 1].map((i) => {
      const dataHome = tempDir("triforge-machine-");
      const previous = process.env.TRIFORGE_HOME;
      process.env.TRIFORGE_HOME = dataHome;
      const root = home.project(`proc-${i}-${project}`, {
        llm: "none",
        storage: "postgres",
        postgres: { project },
      });
      appendRecords(root, syntheticConversation(4 + i, 6, `m${i}-`));
      process.env.TRIFORGE_HOME = previous;
      return { dataHome, root };
    });
    const runs = await Promise.all(machines.map((m) => triforge(["index", "--project", m.root], m.dataHome)));
    for (const run of runs) {
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("to the shared store");
    }
    for (const m of machines) {
      const result = await triforge(
        ["recall", "queueWorker redis billing", "--project", m.root, "-k", "30", "--json"],
        m.dataHome,
      );
      expect(result.code).toBe(0);
      const sessions = sessionsOf(JSON.parse(result.stdout).hits);
      expect(sessions.some((s) => s.startsWith("m0-"))).toBe(true);
      expect(sessions.some((s) => s.startsWith("m1-"))).toBe(true);
      const status = JSON.parse(
        (await triforge(["status", "--project", m.root, "--json"], m.dataHome)).stdout,
      );
      expect(status.chunks).toBe(24 + 30);
      expect(status.shared.reachable).toBe(true);
      expect(status.shared.pending).toBe(0);
      expect(status.shared.location).not.toContain(":triforge@");
    }
    const checks = JSON.parse(
      (await triforge(["doctor", "--project", machines[0].root, "--json"], machines[0].dataHome)).stdout,
    ) as { name: string; ok: boolean; detail: string }[];
    const shared = checks.find((c) => c.name === "shared store");
    expect(shared?.ok).toBe(true);
    expect(shared?.detail).toContain(`schema version ${PG_SCHEMA_VERSION}: 54 chunks from 9 sessions`);
    expect(shared?.detail).not.toContain(":triforge@");
    const before = await sharedDump((sql) => admin.query(sql), project);
    expect(before.chunks.length).toBe(54);
    const reruns = await Promise.all(
      machines.map((m) => triforge(["index", "--project", m.root], m.dataHome)),
    );
    for (const run of reruns) expect(run.code).toBe(0);
    expect(await sharedDump((sql) => admin.query(sql), project)).toEqual(before);
  }, 180_000);

  test("an indexer killed (SIGKILL) in the middle of its push: the next run pushes the rest, nothing lost or doubled", async () => {
    const project = `killed-${process.pid}-${Date.now()}`;
    const dataHome = tempDir("triforge-machine-");
    const previous = process.env.TRIFORGE_HOME;
    process.env.TRIFORGE_HOME = dataHome;
    const root = home.project(`killed-${project}`, {
      llm: "none",
      storage: "postgres",
      postgres: { project },
    });
    appendRecords(root, syntheticConversation(4, 250, "k"));
    process.env.TRIFORGE_HOME = previous;
    const schema = projectSchema(project);
    const count = async () => {
      try {
        return Number((await admin.query<{ n: number }>(`SELECT count(*) AS n FROM ${schema}.chunks`))[0].n);
      } catch {
        return 0; // not created yet
      }
    };
    const binary = process.env.TRIFORGE_TEST_BINARY ? [await compiledBinary()] : ["bun", "src/index.ts"];
    const child = Bun.spawn([...binary, "index", "--project", root], {
      env: { ...process.env, TRIFORGE_HOME: dataHome, TRIFORGE_PG_URL: serverUrl },
      stdout: "ignore",
      stderr: "ignore",
    });
    // Once the first batch is in, this test holds the project's write lock: the push waits on its next batch.
    const holder = await connectPostgres(serverUrl as string);
    let held = false;
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline && !held) {
      if ((await count()) > 0) {
        const [row] = await holder.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1) AS ok", [
          lockKey(schema),
        ]);
        held = Boolean(row.ok);
      } else await Bun.sleep(20);
    }
    expect(held).toBe(true);
    await Bun.sleep(300);
    const partial = await count();
    child.kill("SIGKILL");
    await child.exited;
    await holder.query("SELECT pg_advisory_unlock_all()");
    await holder.close();
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(1000);
    const rerun = await triforge(["index", "--project", root], dataHome);
    expect(rerun.code).toBe(0);
    const dump = await sharedDump((sql) => admin.query(sql), project);
    expect(dump.chunks.length).toBe(1000);
    expect(dump.turns.length).toBe(2000);
    expect(new Set(dump.chunks).size).toBe(1000);
  }, 240_000);
});
