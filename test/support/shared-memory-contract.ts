/**
 * A team's shared memory end to end, the cases every shared backend must pass alike (store-shared.test.ts:
 * Postgres on PGlite and on a server; store-insforge-shared.test.ts: InsForge's contract server):
 * machines index into their own local stores and push to one project; recall reads every machine's
 * memory through the local mirror. Call inside a `describe`; backend-only cases stay in their files.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { mirrorStorePath, pushStatePath, storePath } from "../../src/home/paths.ts";
import { forgetChunk } from "../../src/memory/forget-chunk.ts";
import { type IndexResult, indexProject } from "../../src/memory/indexer.ts";
import { MODES } from "../../src/memory/recall/modes.ts";
import { recall } from "../../src/memory/recall/recall.ts";
import { projectSchema } from "../../src/store/pg-schema.ts";
import { SqliteMemoryStore } from "../../src/store/sqlite.ts";
import { appendRecords, chatLog, type memoryHome, syntheticConversation } from "./memory-helpers.ts";

type Query = (sql: string) => Promise<Record<string, unknown>[]>;

/** A project's shared rows by natural keys and the counts that must be exact. */
export async function sharedDump(query: Query, project: string) {
  const s = projectSchema(project);
  const list = async (sql: string) => (await query(sql)).map((r) => r.k as string);
  return {
    chunks: await list(`SELECT hash || '|' || session_id AS k FROM ${s}.chunks ORDER BY 1`),
    turns: await list(`SELECT uuid AS k FROM ${s}.turns ORDER BY 1`),
    summaries: await list(`SELECT session_id || '|' || text AS k FROM ${s}.summaries ORDER BY 1`),
    entities: await list(`SELECT phrase AS k FROM ${s}.entities ORDER BY 1`),
    facts: await list(`SELECT count(*)::text AS k FROM ${s}.facts`),
    edges: await list(
      `SELECT kind || ':' || count(*) || ':' || round(sum(weight)::numeric, 4) AS k FROM ${s}.edges GROUP BY kind ORDER BY 1`,
    ),
  };
}

/** How many chunks a machine's own store holds. */
export function localChunks(root: string): number {
  const db = new Database(storePath(root), { readonly: true });
  try {
    return (db.query("SELECT count(*) AS n FROM chunks").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

export const sessionsOf = (hits: { session_id: string }[]) =>
  [...new Set(hits.map((h) => h.session_id))].sort();

export interface SharedBackend {
  home: ReturnType<typeof memoryHome>;
  /** A new name with `what` in it (projects and machines). */
  name(what: string): string;
  /** A machine's config for the shared `project`. */
  config(project: string): object;
  /** One index run on a machine, pushing to the shared store. */
  index(root: string): Promise<IndexResult>;
  /** Pulls the shared store into the machine's mirror (as recall does). */
  refresh(root: string): Promise<unknown>;
  /** One statement on the database behind the shared store. */
  query: Query;
  /** Whether forget reaches the shared store itself (false: PGlite, reached only by the tests' index runs). */
  forgetReaches: boolean;
}

/**
 * After a push cut off once 256 of the 300 chunks of `records` were in: the next run pushes the other 44,
 * and the shared rows equal those of a machine that pushed the same records in one go.
 */
export async function expectPushResumed(
  backend: SharedBackend,
  root: string,
  project: string,
  records: ReturnType<typeof syntheticConversation>,
): Promise<void> {
  const { home, name, config, index, query } = backend;
  expect((await sharedDump(query, project)).chunks.length).toBe(256);
  const resumed = await index(root);
  expect(resumed.shared?.error).toBeUndefined();
  expect(resumed.shared?.push?.chunks).toBe(44);
  const after = await sharedDump(query, project);
  expect(after.chunks.length).toBe(300);
  expect(after.turns.length).toBe(600);
  // The same memory pushed in one go by a machine that never failed: the same rows.
  const clean = name("clean");
  const reference = home.project(name("clean"), config(clean));
  appendRecords(reference, records);
  await index(reference);
  expect(after).toEqual(await sharedDump(query, clean));
}

export function sharedMemoryContract(backend: () => SharedBackend): void {
  test("two machines index one project's memory at once: recall on either sees both, counts exact, a second push adds nothing", async () => {
    const { home, name, config, index, refresh, query } = backend();
    const project = name("team");
    const one = home.project(name("one"), config(project));
    const two = home.project(name("two"), config(project));
    const twoRecords = syntheticConversation(2, 5, "two");
    appendRecords(one, syntheticConversation(3, 4, "one"));
    appendRecords(two, twoRecords);
    const [a, b] = await Promise.all([index(one), index(two)]);
    expect(a.shared?.error).toBeUndefined();
    expect(b.shared?.error).toBeUndefined();
    expect(a.shared?.push?.chunks).toBe(12);
    expect(b.shared?.push?.chunks).toBe(10);
    // The machine that finished first pulled before the other pushed: its next recall pulls the rest.
    for (const root of [one, two]) await refresh(root);
    for (const root of [one, two]) {
      const { hits } = await recall(root, "queueWorker redis billing retries", { topK: 20 });
      expect(sessionsOf(hits).some((s) => s.startsWith("one"))).toBe(true);
      expect(sessionsOf(hits).some((s) => s.startsWith("two"))).toBe(true);
    }
    const before = await sharedDump(query, project);
    expect(before.chunks.length).toBe(localChunks(one) + localChunks(two));
    expect(before.chunks.length).toBe(22);
    expect(before.turns.length).toBe(44);
    expect(new Set(before.chunks.map((c) => c.split("|")[1])).size).toBe(5);
    const mirror = new SqliteMemoryStore(mirrorStorePath(one), { readonly: true });
    expect((await mirror.status()).chunks).toBe(22);
    mirror.close();

    // Nothing new: nothing pushed again; the same records appended again add nothing anywhere.
    const again = await index(one);
    expect(again.shared?.push?.chunks).toBe(0);
    appendRecords(two, twoRecords);
    expect((await index(two)).chunks).toBe(0);
    expect(await sharedDump(query, project)).toEqual(before);
    // A new session on one machine: only its chunks go.
    appendRecords(one, syntheticConversation(1, 3, "late"));
    const late = await index(one);
    expect(late.shared?.push?.chunks).toBe(3);
    expect((await sharedDump(query, project)).chunks.length).toBe(25);
  }, 120_000);

  test("a chunk deleted on the web page leaves the shared store and every mirror, and no machine pushes it again", async () => {
    const { home, name, config, index, query, forgetReaches } = backend();
    const project = name("chunk");
    const one = home.project(name("c1"), config(project));
    const two = home.project(name("c2"), config(project));
    appendRecords(one, syntheticConversation(2, 3, "own"));
    appendRecords(two, syntheticConversation(2, 3, "other"));
    await index(one);
    await index(two);
    const inMirror = (root: string, session: string) => {
      const db = new Database(mirrorStorePath(root), { readonly: true });
      try {
        return db
          .query("SELECT id, hash FROM chunks WHERE session_id = ? ORDER BY id LIMIT 1")
          .get(session) as { id: number; hash: string };
      } finally {
        db.close();
      }
    };
    // Machine two deletes a chunk machine one captured, by the id its page shows (the mirror's).
    const target = inMirror(two, "own1");
    const report = await forgetChunk(two, target.id);
    expect(report.status).toBe("forgotten");
    // Where forget cannot reach the shared store, the delete waits for the next index run.
    expect(report.shared).toBe(forgetReaches ? "forgotten" : "pending");
    const mirrorTwo = new Database(mirrorStorePath(two), { readonly: true });
    expect(mirrorTwo.query("SELECT 1 FROM chunks WHERE hash = ?").get(target.hash)).toBeNull();
    mirrorTwo.close();
    await index(two);
    const held = async () => (await sharedDump(query, project)).chunks.map((c) => c.split("|")[0]);
    expect(await held()).not.toContain(target.hash);
    expect((await held()).length).toBe(11);
    // Machine one, which captured it, deletes it from its own store and chat log at its next index.
    const uuids = (() => {
      const db = new Database(storePath(one), { readonly: true });
      try {
        return (
          db
            .query("SELECT t.uuid FROM turns t JOIN chunks c ON c.id = t.chunk_id WHERE c.hash = ?")
            .all(target.hash) as { uuid: string }[]
        ).map((r) => r.uuid);
      } finally {
        db.close();
      }
    })();
    expect(uuids.length).toBe(2);
    const next = await index(one);
    expect(next.shared?.push?.chunksForgottenHere).toBe(1);
    expect(inMirror(one, "own1").hash).not.toBe(target.hash);
    const localOne = new Database(storePath(one), { readonly: true });
    expect(localOne.query("SELECT 1 FROM chunks WHERE hash = ?").get(target.hash)).toBeNull();
    localOne.close();
    for (const uuid of uuids) expect(readFileSync(chatLog(one), "utf8")).not.toContain(uuid);
    // Rebuilt from its chat log and pushed whole, machine one brings nothing back.
    for (const file of [storePath(one), pushStatePath(one)]) rmSync(file, { force: true });
    expect((await index(one)).shared?.error).toBeUndefined();
    expect(await held()).not.toContain(target.hash);
    expect((await held()).length).toBe(11);
    // A chunk deleted on its own machine leaves that machine's store too.
    const own = inMirror(two, "other0");
    expect((await forgetChunk(two, own.id)).chunks).toBe(1);
    await index(two);
    expect(await held()).not.toContain(own.hash);
    expect((await held()).length).toBe(10);
  }, 180_000);

  test("one machine indexing in several runs: the shared graph is its local graph, synonym edges revived and dropped included", async () => {
    const { home, name, config, index, query } = backend();
    const project = name("runs");
    const root = home.project(name("runs"), config(project));
    const records = syntheticConversation(8, 8, "run");
    for (let part = 0; part < 4; part++) {
      appendRecords(root, records.slice(part * 32, (part + 1) * 32));
      expect((await index(root)).shared?.error).toBeUndefined();
    }
    const db = new Database(storePath(root), { readonly: true });
    // The capped synonym graph changed earlier edges on later runs: what the push must carry over.
    expect((db.query("SELECT count(*) AS n FROM synonym_changes").get() as { n: number }).n).toBeGreaterThan(
      0,
    );
    const named = (rows: Record<string, unknown>[]) =>
      rows.map((r) => `${r.k}|${Number(r.w).toFixed(6)}`).sort();
    const local = named(
      db
        .query(
          `SELECT e.kind || '|' || CASE WHEN e.kind = 1 THEN c.hash || '|' || y.phrase
             ELSE min(x.phrase, y.phrase) || '|' || max(x.phrase, y.phrase) END AS k, e.weight AS w
           FROM edges e LEFT JOIN chunks c ON e.kind = 1 AND c.id = e.a
           LEFT JOIN entities x ON e.kind != 1 AND x.id = e.a JOIN entities y ON y.id = e.b`,
        )
        .all() as Record<string, unknown>[],
    );
    db.close();
    const sc = projectSchema(project);
    const shared = named(
      await query(
        `SELECT e.kind || '|' || CASE WHEN e.kind = 1 THEN c.hash || '|' || y.phrase
           ELSE least(x.phrase, y.phrase) || '|' || greatest(x.phrase, y.phrase) END AS k, e.weight AS w
         FROM ${sc}.edges e LEFT JOIN ${sc}.chunks c ON e.kind = 1 AND c.id = e.a
         LEFT JOIN ${sc}.entities x ON e.kind != 1 AND x.id = e.a JOIN ${sc}.entities y ON y.id = e.b`,
      ),
    );
    expect(shared.length).toBe(local.length);
    expect(shared).toEqual(local);
    // And the mirror recall reads holds the same weights.
    const groups =
      "SELECT kind, count(*) AS n, round(sum(weight), 4) AS w FROM edges GROUP BY kind ORDER BY kind";
    const mirror = new Database(mirrorStorePath(root), { readonly: true });
    const mirrored = mirror.query(groups).all();
    mirror.close();
    const again = new Database(storePath(root), { readonly: true });
    expect(mirrored).toEqual(again.query(groups).all());
    again.close();
  }, 180_000);

  test("recall ranks the same from the shared store as from the local store on the same data, in every mode", async () => {
    const { home, name, config, index } = backend();
    const records = syntheticConversation(6, 6, "r");
    const localRoot = home.project(name("rank-local"));
    const sharedRoot = home.project(name("rank-shared"), config(name("rank")));
    appendRecords(localRoot, records);
    appendRecords(sharedRoot, records);
    await indexProject(localRoot, { llm: null });
    await index(sharedRoot);
    expect(existsSync(mirrorStorePath(sharedRoot))).toBe(true);
    const queries = [
      "why does renderChart fail with d3",
      "redis billing retries queueWorker",
      "which version of sqlite did we keep for the search ranking",
      "Release 4 migrations orders table",
    ];
    for (const mode of MODES)
      for (const query of queries) {
        const expected = await recall(localRoot, query, { topK: 8, mode });
        const got = await recall(sharedRoot, query, { topK: 8, mode });
        expect(expected.hits.length).toBeGreaterThan(0);
        expect(got.hits.map((h) => [h.session_id, h.text, h.score])).toEqual(
          expected.hits.map((h) => [h.session_id, h.text, h.score]),
        );
      }
  }, 120_000);
}
