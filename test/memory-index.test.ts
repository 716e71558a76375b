import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { loadModel } from "../src/embed/source.ts";
import {
  chatLogLockPath,
  headsFilePath,
  indexLockPath,
  projectDataDir,
  recallSnapshotPath,
  snapshotAdditionsPath,
  storePath,
  summaryPath,
} from "../src/home/paths.ts";
import type { ChatRecord } from "../src/memory/chatlog.ts";
import { forgetSession } from "../src/memory/forget.ts";
import { BATCH_CHUNKS, indexProject } from "../src/memory/indexer.ts";
import { isLocked, tryLock } from "../src/memory/lock.ts";
import { closeWarmIndexes, MODES, rankChunks, recall } from "../src/memory/recall/recall.ts";
import { MemoryIndex } from "../src/memory/recall/snapshot.ts";
import {
  persistedIndex,
  readSnapshotFile,
  refreshSnapshotFile,
  snapshotSections,
} from "../src/memory/recall/snapshot-file.ts";
import { memoryStatus } from "../src/memory/status.ts";
import { openStoreForRead, openStoreForWrite } from "../src/store/open.ts";
import type { SqliteMemoryStore } from "../src/store/sqlite.ts";
import {
  BUCKET_LIMIT,
  bandKeys,
  cosine,
  LSH_BITS,
  nearest,
  phraseRank,
  SYNONYM_NEIGHBOURS,
  SYNONYM_THRESHOLD,
} from "../src/store/synonyms.ts";
import { ROOT } from "./support/helpers.ts";
import {
  appendRecords,
  chatLog,
  dumpGraph,
  exchange,
  indexRuns,
  lookAlikes,
  memoryHome,
  syntheticConversation,
} from "./support/memory-helpers.ts";
import { seededRandom } from "./support/random.ts";
import { headRowList } from "./support/synonym-store.ts";

const { project } = memoryHome();
afterAll(closeWarmIndexes);

function chunkCount(root: string): number {
  const db = new Database(storePath(root), { readonly: true });
  try {
    return (db.query("SELECT count(*) AS n FROM chunks").get() as { n: number }).n;
  } catch {
    return 0; // schema not there yet
  } finally {
    db.close();
  }
}

describe("indexing chats.jsonl", () => {
  test("is idempotent: a second run adds nothing, new lines add only themselves", async () => {
    const root = project("idempotent");
    appendRecords(root, syntheticConversation(2, 3));
    const first = await indexProject(root, { llm: null });
    expect(first).toMatchObject({ status: "indexed", records: 12, chunks: 6, sessions: 2 });
    const before = dumpGraph(root);
    const second = await indexProject(root, { llm: null });
    expect(second.chunks).toBe(0);
    expect(dumpGraph(root)).toEqual(before);
    appendRecords(
      root,
      exchange("s9", "Where is renderChart defined?", "In src/ui/chart.tsx, next to the legend code."),
    );
    const third = await indexProject(root, { llm: null });
    expect(third).toMatchObject({ records: 2, chunks: 1 });
    expect(dumpGraph(root).chunks).toHaveLength(7);
  });

  test("a run reports each phase's wall time and CPU time (user and system), the same phases", async () => {
    const root = project("phase-cpu");
    appendRecords(root, syntheticConversation(2, 3));
    const cpu = process.cpuUsage();
    const { timings, phaseCpuMs } = await indexProject(root, { llm: null });
    const spent = process.cpuUsage(cpu);
    expect(Object.keys(phaseCpuMs!).sort()).toEqual(Object.keys(timings).sort());
    expect(Object.keys(timings)).toContain("synonyms");
    let total = 0;
    for (const { user, system } of Object.values(phaseCpuMs!)) {
      expect(Number.isInteger(user) && user >= 0 && Number.isInteger(system) && system >= 0).toBe(true);
      total += user + system;
    }
    // Within what the process spent during the run (each phase rounds to the millisecond).
    expect(total).toBeLessThanOrEqual((spent.user + spent.system) / 1000 + Object.keys(timings).length);
  });

  test("a chunk is a user turn with its reply, turn boundaries and roles kept", async () => {
    const root = project("chunks");
    appendRecords(root, [
      ...exchange("a", "First question about parseUser?", "First answer."),
      {
        ts: "2025-03-01T10:59:00.000Z",
        session_id: "a",
        role: "assistant",
        text: "A second reply paragraph.",
        uuid: "a-extra",
      },
    ]);
    await indexProject(root, { llm: null });
    const { hits } = await recall(root, "parseUser question", { mode: "bm25" });
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ role: "user+assistant", session_id: "a" });
    expect(hits[0].text).toBe(
      "[user] First question about parseUser?\n[assistant] First answer.\n[assistant] A second reply paragraph.",
    );
    expect(hits[0].turns.map((t) => t.role)).toEqual(["user", "assistant", "assistant"]);
  });

  test("a rewritten chats.jsonl (offset no longer matches) is rescanned without duplicates", async () => {
    const root = project("rewritten");
    const records = syntheticConversation(1, 4);
    appendRecords(root, records);
    await indexProject(root, { llm: null });
    // Same records in another order and spacing: the saved offset's fingerprint no longer matches.
    writeFileSync(
      chatLog(root),
      `\n${[...records]
        .reverse()
        .map((r) => JSON.stringify(r))
        .join("\n")}\n`,
    );
    const again = await indexProject(root, { llm: null });
    expect(again.chunks).toBe(0);
    expect(chunkCount(root)).toBe(4);
  });

  test("unreadable lines are skipped and logged; the rest lands", async () => {
    const root = project("bad-lines");
    appendRecords(root, exchange("b", "Is the cache warm?", "Yes, after the first call."));
    writeFileSync(chatLog(root), "{not json\n", { flag: "a" });
    appendRecords(root, exchange("b", "And the index?", "Rebuilt from chats.jsonl."));
    const result = await indexProject(root, { llm: null });
    expect(result).toMatchObject({ chunks: 2, badLines: 1 });
    expect(readFileSync(join(projectDataDir(root), "errors.log"), "utf8")).toContain("1 unreadable line(s)");
  });

  test("a last line without its newline waits for the next run", async () => {
    const root = project("partial-line");
    appendRecords(root, exchange("p", "Complete question?", "Complete answer."));
    const [user] = exchange("p", "Half-written question?", "unused");
    writeFileSync(chatLog(root), JSON.stringify(user), { flag: "a" });
    expect((await indexProject(root, { llm: null })).records).toBe(2);
    writeFileSync(chatLog(root), "\n", { flag: "a" });
    expect((await indexProject(root, { llm: null })).records).toBe(1);
  });

  test("summary.md gets one entry per session, each headed '## <date> · session <id>', never empty", async () => {
    const root = project("summary");
    appendRecords(root, [
      ...exchange(
        "sess-1",
        "The build fails in src/build.ts",
        "We decided to pin bun 1.4.5 and fixed loadConfig in src/build.ts.",
        3,
      ),
      ...exchange("sess-2", "hi", "hello", 4),
    ]);
    await indexProject(root, { llm: null });
    const summary = readFileSync(summaryPath(root), "utf8");
    const headers = summary.split("\n").filter((l) => l.startsWith("## "));
    expect(headers).toEqual(["## 2025-03-03 · session sess-1", "## 2025-03-04 · session sess-2"]);
    expect(summary).toContain("src/build.ts");
    expect(summary).toContain("decided to pin bun 1.4.5");
    expect(summary).toMatch(/session sess-2\nDiscussed: hi/);
  });
});

describe("graph vectors", () => {
  test("a fact's stored vector is the embedding of its text, pooled from its parts' token ids", async () => {
    const root = project("fact-vectors");
    appendRecords(root, syntheticConversation(2, 3));
    await indexProject(root, { llm: null });
    const db = new Database(storePath(root), { readonly: true });
    const rows = db
      .query(
        "SELECT s.label AS s, f.predicate AS p, o.label AS o, f.vector AS v FROM facts f JOIN entities s ON s.id = f.subject JOIN entities o ON o.id = f.object",
      )
      .all() as { s: string; p: string; o: string; v: Uint8Array }[];
    db.close();
    expect(rows.length).toBeGreaterThan(10);
    const model = await loadModel();
    const expected = await model.embedBatch(rows.map((r) => `${r.s} ${r.p} ${r.o}`));
    rows.forEach((row, i) => {
      const stored = new Float32Array(new Uint8Array(row.v).buffer);
      const want = expected.subarray(i * model.dim, (i + 1) * model.dim);
      let worst = 0;
      for (let d = 0; d < model.dim; d++) worst = Math.max(worst, Math.abs(stored[d] - want[d]));
      expect(worst).toBeLessThan(1e-6);
    });
  });
});

describe("capped synonym edges", () => {
  const a = [...syntheticConversation(2, 3, "alpha"), ...lookAlikes("alpha-ids", 3, 0)];
  const b = [...syntheticConversation(2, 3, "beta"), ...lookAlikes("beta", 3, 12)];
  const synonyms = (root: string) => dumpGraph(root).edges.filter((e) => e.startsWith("2|"));
  /** Indexes `runs` in order, one index run each, into a new project. */
  const indexed = (name: string, ...runs: ChatRecord[][]) => indexRuns(project(name), ...runs);
  /**
   * Whether phrases i and j are candidates: in some band, keys at most one bit apart, and each among
   * its bucket's BUCKET_LIMIT phrases of lowest (rank, text) (`heads`: those of each key).
   */
  function candidates(i: number, j: number, keys: number[][], heads: Map<number, Set<number>>): boolean {
    return keys[i].some((key, band) => {
      const diff = key ^ keys[j][band];
      return (diff & (diff - 1)) === 0 && heads.get(key)!.has(i) && heads.get(keys[j][band])!.has(j);
    });
  }
  /** Each phrase's synonym neighbours, by name. */
  function neighbours(edges: string[]): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const e of edges) {
      const [, x, y] = e.split("|");
      for (const [p, q] of [
        [x, y],
        [y, x],
      ]) {
        if (!out.has(p)) out.set(p, []);
        out.get(p)!.push(q);
      }
    }
    return out;
  }

  test("the same edges whatever order sessions were indexed in, one run or several", async () => {
    const ab = synonyms(await indexed("syn-ab", a, b));
    const ba = synonyms(await indexed("syn-ba", b, a));
    const once = synonyms(await indexed("syn-once", [...b, ...a]));
    expect(ab.length).toBeGreaterThan(20);
    expect(ba).toEqual(ab);
    expect(once).toEqual(ab);
    // The cap bites: some phrase has more neighbours above the threshold than it keeps, yet no phrase
    // has more edges than its own k plus those of phrases keeping it.
    const most = Math.max(...[...neighbours(ab).values()].map((list) => list.length));
    expect(most).toBeGreaterThan(SYNONYM_NEIGHBOURS);
  });

  test("the store's bucket heads: each phrase's vector comes once per source, its rows every time", async () => {
    const root = await indexed("syn-source", a, b);
    const store = openStoreForWrite(root);
    const { phrases, vectors } = await store.entityVectors();
    const dim = vectors.length / phrases.length;
    const stored = new Map(phrases.map((p, i) => [p, vectors.subarray(i * dim, (i + 1) * dim)]));
    const keys = [...new Set(phrases.flatMap((_, i) => bandKeys(vectors.subarray(i * dim, (i + 1) * dim))))];
    const source = store.synonymSource();
    const first = headRowList(source, keys.slice(0, keys.length / 2), BUCKET_LIMIT, dim);
    const second = headRowList(source, keys, BUCKET_LIMIT, dim);
    const again = headRowList(store.synonymSource(), keys, BUCKET_LIMIT, dim);
    store.close();
    const rows = (list: typeof first) => list.map((r) => `${r.key}|${r.phrase}`).sort();
    // The same rows as a new source gives, whatever was asked before.
    expect(rows(second)).toEqual(rows(again));
    // A phrase comes with its stored vector where this source had not returned it before, without it
    // where it had.
    const before = new Set(first.map((r) => r.phrase));
    for (const r of first) expect([...r.vector!]).toEqual([...stored.get(r.phrase)!]);
    // Each head comes with its rank, its name's.
    for (const r of second) expect(r.rank).toBe(phraseRank(r.phrase));
    for (const r of second)
      if (before.has(r.phrase)) expect(r.vector).toBeUndefined();
      else expect([...r.vector!]).toEqual([...stored.get(r.phrase)!]);
    expect(second.some((r) => !before.has(r.phrase))).toBe(true);
    expect(second.some((r) => before.has(r.phrase))).toBe(true);
  });

  test("the synonym source leaves the store file unmapped after each read (its pages count in RSS only while it reads)", async () => {
    const root = await indexed("syn-mapped", a, b);
    const store = openStoreForWrite(root);
    const { phrases, vectors } = await store.entityVectors();
    const dim = vectors.length / phrases.length;
    const keys = [...new Set(phrases.flatMap((_, i) => bandKeys(vectors.subarray(i * dim, (i + 1) * dim))))];
    const mapped = () =>
      ((store as unknown as { db: Database }).db.query("PRAGMA mmap_size").get() as { mmap_size: number })
        .mmap_size;
    const source = store.synonymSource();
    expect(headRowList(source, keys, BUCKET_LIMIT, dim).length).toBeGreaterThan(0);
    expect(mapped()).toBe(0);
    expect(source.phraseVectors(phrases.slice(0, 5)).size).toBe(5);
    expect(mapped()).toBe(0);
    expect(source.synonymNeighbours(phrases).size).toBeGreaterThan(0);
    expect(mapped()).toBe(0);
    store.close();
  });

  test("the store's bucket heads are each bucket's `limit` lowest ranks and the ties of the last, however crowded", async () => {
    const root = await indexed("syn-heads", a, b);
    const db = new Database(storePath(root));
    const keysOf = (blob: Uint8Array) => [...new Int32Array(Uint8Array.from(blob).buffer)];
    const rows = () =>
      (
        db
          .query(
            "SELECT k.entity AS entity, k.rank AS rank, k.keys AS keys, e.phrase AS phrase FROM phrase_keys k JOIN entities e ON e.id = k.entity",
          )
          .all() as { entity: number; rank: number; keys: Uint8Array; phrase: string }[]
      ).flatMap((r) =>
        keysOf(r.keys).map((key) => ({ key, rank: r.rank, phrase: r.phrase, entity: r.entity })),
      );
    // One bucket made crowded: 40 phrases of other buckets moved into it (their key of its band), three
    // of them tied at its second-lowest rank.
    const before = rows();
    const count = new Map<number, number>();
    for (const r of before) count.set(r.key, (count.get(r.key) ?? 0) + 1);
    const crowdedKey = [...count].sort((x, y) => y[1] - x[1])[0][0];
    const band = Math.floor(crowdedKey / 2 ** LSH_BITS);
    const own = before.filter((r) => r.key === crowdedKey).sort((x, y) => x.rank - y.rank);
    const inside = new Set(own.map((r) => r.entity));
    const others = [...new Set(before.map((r) => r.entity))].filter((id) => !inside.has(id)).slice(0, 40);
    const second = own.length > 1 ? own[1].rank : own[0].rank + 1;
    const update = db.query("UPDATE phrase_keys SET rank = ?, keys = ? WHERE entity = ?");
    for (const [i, id] of others.entries()) {
      const { keys } = db.query("SELECT keys FROM phrase_keys WHERE entity = ?").get(id) as {
        keys: Uint8Array;
      };
      const moved = new Int32Array(keysOf(keys));
      moved[band] = crowdedKey;
      update.run(i < 3 ? second : second + 1 + i, new Uint8Array(moved.buffer), id);
    }
    const all = rows();
    db.close();
    const keys = [...new Set(all.map((r) => r.key))];
    const store = openStoreForWrite(root);
    try {
      for (const limit of [1, 2, 3, 16]) {
        const expected: string[] = [];
        for (const key of keys) {
          const bucket = all.filter((r) => r.key === key).sort((x, y) => x.rank - y.rank);
          const last = bucket[Math.min(limit, bucket.length) - 1].rank;
          for (const r of bucket) if (r.rank <= last) expected.push(`${key}|${r.phrase}`);
        }
        const found = headRowList(store.synonymSource(), keys, limit, 0).map((r) => `${r.key}|${r.phrase}`);
        expect(found.sort()).toEqual(expected.sort());
        // The crowded bucket gives its limit-th's ties too (limit 2: the lowest and all four at the second).
        if (limit === 2)
          expect(found.filter((r) => r.startsWith(`${crowdedKey}|`)).length).toBe(own.length > 1 ? 5 : 4);
      }
    } finally {
      store.close();
    }
  });

  test("every edge is among the k nearest of one of its ends, and each phrase keeps its k nearest", async () => {
    const root = await indexed("syn-rule", a, b);
    const store = openStoreForWrite(root);
    const { phrases, vectors } = await store.entityVectors();
    store.close();
    const dim = vectors.length / phrases.length;
    const row = (i: number) => vectors.subarray(i * dim, (i + 1) * dim);
    const kept = new Set(synonyms(root).map((e) => e.split("|").slice(1, 3).join("|")));
    // The rule by brute force over every pair, restricted to pairs the LSH buckets can find.
    const keys = phrases.map((_, i) => bandKeys(row(i)));
    const members = new Map<number, number[]>();
    keys.forEach((list, i) => {
      for (const key of list) members.set(key, [...(members.get(key) ?? []), i]);
    });
    const order = (i: number, j: number) =>
      phraseRank(phrases[i]) - phraseRank(phrases[j]) || (phrases[i] < phrases[j] ? -1 : 1);
    const heads = new Map(
      [...members].map(([key, list]) => [key, new Set(list.sort(order).slice(0, BUCKET_LIMIT))]),
    );
    // The rule bites: some bucket holds more phrases than its heads.
    expect([...members.values()].some((list) => list.length > BUCKET_LIMIT)).toBe(true);
    const nearestOf = new Map<string, string[]>();
    phrases.forEach((p, i) => {
      const found: [string, number][] = [];
      phrases.forEach((q, j) => {
        if (i !== j && cosine(row(i), row(j)) >= SYNONYM_THRESHOLD && candidates(i, j, keys, heads))
          found.push([q, cosine(row(i), row(j))]);
      });
      nearestOf.set(
        p,
        nearest(found).map(([q]) => q),
      );
    });
    const expected = new Set<string>();
    for (const [p, list] of nearestOf) for (const q of list) expected.add([p, q].sort().join("|"));
    expect([...kept].sort()).toEqual([...expected].sort());
  });

  test("status's counts, kept by triggers, equal a count of the rows through indexing, forget and a store made before them", async () => {
    const root = await indexed("syn-counts", a, b);
    const agree = async () => {
      const store = openStoreForWrite(root) as SqliteMemoryStore;
      try {
        const counted = store.countedRows();
        const status = await store.status();
        expect(counted.entities).toBeGreaterThan(0);
        expect(counted["edges:2"]).toBeGreaterThan(0);
        expect({
          entities: status.entities,
          facts: status.facts,
          fact: status.edges.fact,
          context: status.edges.context,
          synonym: status.edges.synonym,
          pending: status.pendingLlm,
        }).toEqual({
          entities: counted.entities,
          facts: counted.facts,
          fact: counted["edges:0"],
          context: counted["edges:1"],
          synonym: counted["edges:2"],
          pending: counted["chunks:llm-pending"],
        });
        // biome-ignore lint/suspicious/noExplicitAny: the test reads the counters' table itself.
        return ((store as any).db as Database).query("SELECT count(*) AS n FROM row_counts").get() as {
          n: number;
        };
      } finally {
        store.close();
      }
    };
    expect((await agree()).n).toBeGreaterThan(0);
    // A forget lowers weights, drops synonym edges to 0 and deletes phrases and facts.
    expect((await forgetSession(root, "beta1")).status).toBe("forgotten");
    await agree();
    // A store made before the counters: status counts by scan, and the next run fills them.
    const db = new Database(storePath(root));
    db.run("DELETE FROM row_counts");
    db.close();
    expect((await agree()).n).toBe(0);
    appendRecords(
      root,
      b
        .filter((r) => r.session_id === "beta1")
        .map((r) => ({ ...r, session_id: "beta1again", uuid: `${r.uuid}-again` })),
    );
    await indexProject(root, { llm: null });
    expect((await agree()).n).toBeGreaterThan(0);
  });

  test("forgetting a session leaves the edges of a store that never saw it", async () => {
    const root = await indexed("syn-forget", a, b);
    expect((await forgetSession(root, "beta1")).status).toBe("forgotten");
    const bWithout = b.filter((r) => r.session_id !== "beta1");
    expect(synonyms(root)).toEqual(synonyms(await indexed("syn-never", a, bWithout)));
    expect(dumpGraph(root)).toEqual(dumpGraph(await indexed("syn-never-all", [...a, ...bWithout])));
  });

  test("a store made before the cap gets its synonym edges recomputed under the rule", async () => {
    const root = await indexed("syn-old", a);
    const expected = synonyms(root);
    const store = openStoreForWrite(root);
    // biome-ignore lint/suspicious/noExplicitAny: the test plays a store written by an older version.
    const db = (store as any).db as import("bun:sqlite").Database;
    db.run("DELETE FROM meta WHERE key = 'synonym_rule'");
    db.run("DELETE FROM phrase_keys");
    db.run(
      "CREATE TABLE phrase_bands(key INTEGER NOT NULL, entity INTEGER NOT NULL, PRIMARY KEY(key, entity)) WITHOUT ROWID",
    );
    db.run("UPDATE edges SET weight = weight + 0.5 WHERE kind = 2");
    db.run(
      "INSERT INTO edges(kind, a, b, weight) SELECT 2, x.id, y.id, 0.81 FROM entities x, entities y WHERE x.id < y.id LIMIT 50 ON CONFLICT DO NOTHING",
    );
    store.close();
    appendRecords(root, b);
    await indexProject(root, { llm: null });
    expect(synonyms(root)).toEqual(synonyms(await indexed("syn-new", a, b)));
    expect(expected.length).toBeGreaterThan(0);
    // The older layout's bucket table is gone.
    const after = new Database(storePath(root), { readonly: true });
    expect(after.query("SELECT name FROM sqlite_master WHERE name = 'phrase_bands'").all()).toEqual([]);
    after.close();
  });

  test("a store from before phrase_keys (bucket rows in phrase_buckets) gets every phrase's keys once, and the same edges", async () => {
    const root = await indexed("syn-keys-old", a);
    const store = openStoreForWrite(root);
    // biome-ignore lint/suspicious/noExplicitAny: the test plays a store written by an older version.
    const db = (store as any).db as import("bun:sqlite").Database;
    const expected = db.query("SELECT entity, rank, keys FROM phrase_keys ORDER BY entity").all();
    db.run("DELETE FROM phrase_keys");
    db.run(
      "CREATE TABLE phrase_buckets(key INTEGER NOT NULL, rank INTEGER NOT NULL, entity INTEGER NOT NULL, PRIMARY KEY(key, rank, entity)) WITHOUT ROWID",
    );
    db.run("INSERT INTO phrase_buckets SELECT id, 0, id FROM entities");
    store.close();
    rmSync(headsFilePath(storePath(root))!, { force: true });
    appendRecords(root, b);
    await indexProject(root, { llm: null });
    expect(synonyms(root)).toEqual(synonyms(await indexed("syn-keys-new", a, b)));
    const after = new Database(storePath(root), { readonly: true });
    try {
      expect(after.query("SELECT name FROM sqlite_master WHERE name = 'phrase_buckets'").all()).toEqual([]);
      const keyed = after.query("SELECT entity, rank, keys FROM phrase_keys ORDER BY entity").all();
      expect(keyed.slice(0, expected.length)).toEqual(expected);
      expect(keyed.length).toBe((after.query("SELECT count(*) AS n FROM entities").get() as { n: number }).n);
    } finally {
      after.close();
    }
  });
});

describe("crash safety", () => {
  test("an indexer killed with kill -9 at several points resumes with no duplicate and no loss", async () => {
    const records = syntheticConversation(24, 25); // 600 chunks: several batches of BATCH_CHUNKS
    expect(records.length / 2).toBeGreaterThan(2 * BATCH_CHUNKS);
    const clean = project("clean");
    appendRecords(clean, records);
    await indexProject(clean, { llm: null });
    const expected = dumpGraph(clean);

    const crashed = project("crashed");
    appendRecords(crashed, records);
    const child = () =>
      Bun.spawn(["bun", join(ROOT, "test/support/memory-index-child.ts"), crashed], {
        env: { ...process.env },
        stdout: "pipe",
        stderr: "pipe",
      });
    let kills = 0;
    // Kill once after the first committed batch, then again later; each time wait for progress first.
    for (const atLeast of [1, BATCH_CHUNKS + 1]) {
      const proc = child();
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && existsSync(storePath(crashed)) === false) await Bun.sleep(5);
      while (Date.now() < deadline && chunkCount(crashed) < atLeast && proc.exitCode === null)
        await Bun.sleep(5);
      if (proc.exitCode === null) {
        proc.kill(9);
        kills++;
      }
      await proc.exited;
    }
    expect(kills).toBeGreaterThan(0);
    const survived = chunkCount(crashed);
    expect(survived).toBeGreaterThan(0);
    expect(survived).toBeLessThan(records.length / 2);
    // The killed process's lock is stale (its pid is gone): the next run takes it over at once.
    expect(isLocked(indexLockPath(crashed))).toBe(false);
    const resumed = await indexProject(crashed, { llm: null });
    expect(resumed.status).toBe("indexed");
    const actual = dumpGraph(crashed);
    expect(actual.chunks).toEqual(expected.chunks);
    expect(actual.turns).toEqual(expected.turns);
    expect(actual.phrases).toEqual(expected.phrases);
    expect(actual.facts).toEqual(expected.facts);
    expect(actual.edges).toEqual(expected.edges);
    expect(new Set(actual.chunks).size).toBe(records.length / 2);
  }, 60_000);

  test("a corrupt store is moved aside by the first recall that meets it and rebuilt from chats.jsonl", async () => {
    const root = project("corrupt");
    appendRecords(root, syntheticConversation(2, 4));
    await indexProject(root, { llm: null });
    const before = dumpGraph(root);
    closeWarmIndexes();
    for (const suffix of ["-wal", "-shm"]) rmSync(storePath(root) + suffix, { force: true });
    writeFileSync(storePath(root), Buffer.alloc(8192, 0x5a));
    const meanwhile = await recall(root, "parseUser");
    expect(meanwhile.hits).toEqual([]);
    expect(meanwhile.reason).toContain("damaged");
    expect(existsSync(`${storePath(root)}.corrupt`)).toBe(true);
    expect((await indexProject(root, { llm: null })).chunks).toBe(8);
    expect(dumpGraph(root)).toEqual(before);
    expect((await recall(root, "parseUser")).hits.length).toBeGreaterThan(0);
    expect(readFileSync(join(projectDataDir(root), "errors.log"), "utf8")).toContain(
      "rebuilding from chats.jsonl",
    );
  });

  test("a deleted store is rebuilt from chats.jsonl", async () => {
    const root = project("deleted");
    appendRecords(root, syntheticConversation(1, 3));
    await indexProject(root, { llm: null });
    closeWarmIndexes();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(storePath(root) + suffix, { force: true });
    expect((await indexProject(root, { llm: null })).chunks).toBe(3);
  });
});

describe("the project lock", () => {
  test("one holder at a time; a second indexer returns 'busy' at once", async () => {
    const root = project("locked");
    appendRecords(root, syntheticConversation(1, 2));
    const lock = tryLock(indexLockPath(root), "test")!;
    expect(lock).toBeDefined();
    expect(tryLock(indexLockPath(root), "test")).toBeUndefined();
    expect((await indexProject(root, { llm: null })).status).toBe("busy");
    lock.release();
    expect((await indexProject(root, { llm: null })).status).toBe("indexed");
  });

  test("a lock whose process is gone, or whose heartbeat is old, is taken over", async () => {
    const root = project("stale");
    const path = indexLockPath(root);
    mkdirSync(dirname(path), { recursive: true });
    const dead = Bun.spawn(["true"]);
    await dead.exited;
    writeFileSync(
      path,
      JSON.stringify({
        pid: dead.pid,
        host: (await import("node:os")).hostname(),
        nonce: "x",
        purpose: "index",
        since: "",
      }),
    );
    const taken = tryLock(path, "test");
    expect(taken).toBeDefined();
    taken!.release();
    // A live pid (ours) but a heartbeat older than a minute: the holder is hung or the pid was reused.
    writeFileSync(
      path,
      JSON.stringify({ pid: process.pid, host: "elsewhere", nonce: "y", purpose: "index", since: "" }),
    );
    expect(tryLock(path, "test")).toBeUndefined();
    const old = new Date(Date.now() - 5 * 60_000);
    utimesSync(path, old, old);
    const again = tryLock(path, "test");
    expect(again).toBeDefined();
    again!.release();
    expect(existsSync(path)).toBe(false);
  });
});

describe("forget", () => {
  test("removes exactly what a session contributed: the store equals one that never saw it", async () => {
    const kept = syntheticConversation(3, 4, "keep");
    const dropped = syntheticConversation(2, 4, "drop");
    const both = project("forget-both");
    appendRecords(both, [...dropped, ...kept]);
    await indexProject(both, { llm: null });
    const only = project("forget-only");
    appendRecords(only, kept);
    await indexProject(only, { llm: null });
    const graphBefore = dumpGraph(both);

    const report = await forgetSession(both, "drop0");
    expect(report).toMatchObject({ status: "forgotten", chunks: 4, lines: 8 });
    expect(report.edgesRemoved + report.edgesLowered).toBeGreaterThan(0);
    await forgetSession(both, "drop1");
    const after = dumpGraph(both);
    const expected = dumpGraph(only);
    expect(after.phrases).toEqual(expected.phrases);
    expect(after.facts).toEqual(expected.facts);
    expect(after.edges).toEqual(expected.edges);
    expect(after.chunks).toEqual(expected.chunks);
    expect(graphBefore.edges.length).toBeGreaterThan(after.edges.length);

    // Gone from the source of truth and the summary too, and a rebuild does not bring it back.
    expect(readFileSync(chatLog(both), "utf8")).not.toContain('"drop0"');
    expect(readFileSync(summaryPath(both), "utf8")).not.toContain("session drop0");
    appendRecords(both, exchange("drop0", "late capture of a forgotten session", "still forgotten"));
    await indexProject(both, { llm: null });
    expect(dumpGraph(both).chunks).toEqual(expected.chunks);
  });

  test("waits for the chat-log lock before rewriting chats.jsonl, so a capture append in flight is kept", async () => {
    const root = project("forget-waits-for-capture");
    appendRecords(root, [...syntheticConversation(1, 2, "gone"), ...syntheticConversation(1, 2, "stay")]);
    await indexProject(root, { llm: null });
    // This test plays a capture that holds the chat-log lock while forget runs in another process.
    const capture = tryLock(chatLogLockPath(root), "capture")!;
    const forget = Bun.spawn(
      ["bun", join(ROOT, "test/support/memory-race-child.ts"), "forget", root, "gone0"],
      {
        env: process.env,
        stdout: "pipe",
      },
    );
    for (let i = 0; i < 200 && !isLocked(indexLockPath(root)); i++) await Bun.sleep(25);
    await Bun.sleep(300);
    expect(readFileSync(chatLog(root), "utf8")).toContain('"gone0"');
    appendRecords(root, exchange("stay0", "appended by capture under the lock", "kept"));
    capture.release();
    expect(await forget.exited).toBe(0);
    expect(JSON.parse(await new Response(forget.stdout).text())).toMatchObject({
      status: "forgotten",
      lines: 4,
    });
    const log = readFileSync(chatLog(root), "utf8");
    expect(log).not.toContain('"gone0"');
    expect(log).toContain("appended by capture under the lock");
  });

  test("a capture appending while sessions are forgotten loses no line", async () => {
    const root = project("forget-race");
    const sessions = ["r0", "r1", "r2", "r3"];
    appendRecords(
      root,
      sessions.flatMap((s) => syntheticConversation(1, 3, s)),
    );
    await indexProject(root, { llm: null });
    const appender = Bun.spawn(
      ["bun", join(ROOT, "test/support/memory-race-child.ts"), "append", root, "live", "150"],
      { env: process.env },
    );
    // Start forgetting once the appender is writing, and spread the forgets over its run.
    while (!readFileSync(chatLog(root), "utf8").includes("live-race-0")) await Bun.sleep(5);
    for (const s of sessions) {
      await forgetSession(root, `${s}0`);
      await Bun.sleep(20);
    }
    expect(await appender.exited).toBe(0);
    const uuids = readFileSync(chatLog(root), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line).uuid as string);
    expect(uuids.filter((u) => u.startsWith("live-race-")).sort()).toEqual(
      Array.from({ length: 150 }, (_, i) => `live-race-${i}`).sort(),
    );
    expect(uuids.filter((u) => !u.startsWith("live-race-"))).toEqual([]);
  });

  test("an unknown session is refused and not blocked; with force it is forgotten for good", async () => {
    const root = project("forget-unknown");
    appendRecords(root, syntheticConversation(1, 2));
    await indexProject(root, { llm: null });
    expect(await forgetSession(root, "nope")).toMatchObject({ status: "unknown", chunks: 0, lines: 0 });
    expect((await memoryStatus(root)).chunks).toBe(2);
    // Not blocked: a session that later appears under that id is indexed.
    appendRecords(root, exchange("nope", "A later session under that id", "Indexed."));
    expect(await indexProject(root, { llm: null })).toMatchObject({ chunks: 1 });
    // Known ones: stored, only in chats.jsonl (not indexed yet), or forgotten earlier.
    appendRecords(root, exchange("fresh", "Captured, not indexed yet", "Still known."));
    expect(await forgetSession(root, "fresh")).toMatchObject({ status: "forgotten", lines: 2 });
    expect(await forgetSession(root, "fresh")).toMatchObject({ status: "forgotten", lines: 0 });
    expect(await forgetSession(root, "nope")).toMatchObject({ status: "forgotten", chunks: 1 });
    expect(await forgetSession(root, "upcoming", { force: true })).toMatchObject({ status: "forgotten" });
    appendRecords(root, exchange("upcoming", "Captured after a forced forget", "Never indexed."));
    expect(await indexProject(root, { llm: null })).toMatchObject({ chunks: 0 });
  });
});

/** Overwrites one 4 KiB page of a file with random bytes (what `dd … seek=N count=1 conv=notrunc` does). */
function garblePage(path: string, page: number, random: () => number): void {
  const bytes = Buffer.alloc(4096);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
  const fd = openSync(path, "r+");
  try {
    writeSync(fd, bytes, 0, bytes.length, page * 4096);
  } finally {
    closeSync(fd);
  }
}

describe("a damaged memory.db", () => {
  test("one random page overwritten anywhere past the header: recall and status answer, the store is rebuilt from chats.jsonl", async () => {
    const root = project("garbled");
    appendRecords(root, syntheticConversation(30, 8));
    await indexProject(root, { llm: null });
    closeWarmIndexes();
    const expected = dumpGraph(root);
    const original = readFileSync(storePath(root));
    const pages = Math.floor(original.length / 4096);
    expect(pages).toBeGreaterThan(40);
    const random = seededRandom(18);
    const positions = [1, 2, 5, 10, 20, 30, Math.floor(pages / 2), pages - 2];
    for (const page of positions) {
      closeWarmIndexes();
      for (const suffix of ["-wal", "-shm"]) rmSync(storePath(root) + suffix, { force: true });
      // Without the recall snapshot, recall reads the store itself.
      rmSync(recallSnapshotPath(root), { force: true });
      writeFileSync(storePath(root), original);
      garblePage(storePath(root), page, random);
      const answer = await recall(root, "parseUser");
      expect(answer.hits.length > 0 || /damaged/.test(answer.reason ?? "")).toBe(true);
      await memoryStatus(root);
      await indexProject(root, { llm: null });
      closeWarmIndexes();
      expect(dumpGraph(root)).toEqual(expected);
      expect((await recall(root, "parseUser")).hits.length).toBeGreaterThan(0);
    }
    // Each damage found (by recall's read or by the indexer's check) is one line of errors.log.
    const log = readFileSync(join(projectDataDir(root), "errors.log"), "utf8");
    const rebuilds = log.split("\n").filter((line) => line.includes("rebuilding from chats.jsonl"));
    expect(rebuilds.length).toBeGreaterThanOrEqual(positions.length - 2);
  }, 120_000);

  test("a directory where memory.db or recall.bin should be: recall and status name it, the next index moves it aside and rebuilds", async () => {
    const root = project("directory");
    appendRecords(root, syntheticConversation(2, 3));
    mkdirSync(join(storePath(root), "inside"), { recursive: true });
    mkdirSync(recallSnapshotPath(root), { recursive: true });
    await expect(recall(root, "parseUser")).rejects.toThrow("is a directory, not a memory store");
    await expect(memoryStatus(root)).rejects.toThrow("is a directory, not a memory store");
    expect((await indexProject(root, { llm: null })).chunks).toBe(6);
    expect(statSync(storePath(root)).isFile()).toBe(true);
    expect(statSync(recallSnapshotPath(root)).isFile()).toBe(true);
    expect((await recall(root, "parseUser")).hits.length).toBeGreaterThan(0);
  });

  test("a directory in memory.db's place met by the indexer first: rebuilt, the reason logged", async () => {
    const root = project("directory-index");
    appendRecords(root, syntheticConversation(2, 3));
    mkdirSync(join(storePath(root), "inside"), { recursive: true });
    expect(await indexProject(root, { llm: null })).toMatchObject({ rebuilt: true, chunks: 6 });
    expect(readFileSync(join(projectDataDir(root), "errors.log"), "utf8")).toContain("is a directory");
  });
});

/** Indexes `records` up to `cut`, then (after `between`) the rest: a second run extends the first. */
async function indexInTwoRuns(root: string, records: ChatRecord[], cut: number, between = () => {}) {
  appendRecords(root, records.slice(0, cut));
  await indexProject(root, { llm: null });
  between();
  appendFileSync(
    chatLog(root),
    `${records
      .slice(cut)
      .map((r) => JSON.stringify(r))
      .join("\n")}\n`,
  );
  await indexProject(root, { llm: null });
}

describe("the recall snapshot (recall.bin)", () => {
  test("extended run by run, it equals one rebuilt from nothing, and recall answers from it exactly as from the store", async () => {
    const root = project("snapshot");
    const records = syntheticConversation(12, 6);
    // The cut falls inside a session: its later chunks extend it across runs (sequence edges).
    const cut = records.length / 2 + 3;
    await indexInTwoRuns(root, records, cut);
    const extended = readFileSync(recallSnapshotPath(root));
    rmSync(recallSnapshotPath(root));
    const store = openStoreForWrite(root);
    const model = await loadModel();
    try {
      expect(await refreshSnapshotFile(recallSnapshotPath(root), store, async () => model.id)).toBe(
        "rebuilt",
      );
    } finally {
      store.close();
    }
    expect(Buffer.compare(readFileSync(recallSnapshotPath(root)), extended)).toBe(0);
    const reader = openStoreForRead(root)!;
    try {
      const fromFile = persistedIndex(recallSnapshotPath(root), reader, model.id, false, root)!;
      expect(fromFile).toBeDefined();
      const fromStore = await MemoryIndex.build(await reader.snapshot(), model);
      expect(fromFile.chunkCount).toBe(fromStore.chunkCount);
      for (const query of [
        "parseUser",
        "where is the config loaded",
        "renderChart legend",
        "session 3 decision",
      ])
        for (const mode of MODES)
          expect(await rankChunks(fromFile, query, mode, 10)).toEqual(
            await rankChunks(fromStore, query, mode, 10),
          );
    } finally {
      reader.close();
    }
  });

  test("a large base keeps what later runs add beside it (recall.add.bin): the same graph and rankings as one file rebuilt from nothing, folded in past its share", async () => {
    const root = project("snapshot-additions");
    const records = syntheticConversation(12, 6);
    const cut = records.length / 2 + 3; // inside a session: its later chunks continue it across the base
    const path = recallSnapshotPath(root);
    let base = Buffer.alloc(0);
    await indexInTwoRuns(root, records, cut, () => {
      base = readFileSync(path);
    });
    const model = await loadModel();
    const refresh = async (options: Parameters<typeof refreshSnapshotFile>[3] = {}) => {
      const store = openStoreForWrite(root);
      try {
        return await refreshSnapshotFile(path, store, async () => model.id, options);
      } finally {
        store.close();
      }
    };
    // The base as the first run left it, the rest of the store kept beside it.
    writeFileSync(path, base);
    expect(await refresh({ additionsFrom: 0, additionsShare: 1 })).toBe("added");
    expect(readFileSync(path).equals(base)).toBe(true);
    expect(existsSync(snapshotAdditionsPath(path))).toBe(true);
    expect(await refresh({ additionsFrom: 0, additionsShare: 1 })).toBe("current");
    const reader = openStoreForRead(root)!;
    try {
      const layered = persistedIndex(path, reader, model.id, false, root)!;
      expect(layered.additions).toBeDefined();
      const rebuiltPath = join(dirname(path), "rebuilt.bin");
      const writer = openStoreForWrite(root);
      try {
        expect(await refreshSnapshotFile(rebuiltPath, writer, async () => model.id)).toBe("rebuilt");
      } finally {
        writer.close();
      }
      const whole = persistedIndex(rebuiltPath, reader, model.id, false, root)!;
      for (const key of ["chunkCount", "entityCount", "factCount", "edgeCount", "llmGraphShare"] as const)
        expect(layered[key]).toBe(whole[key]);
      // The graph, node by node: each pair's summed weight and each node's strength, phrases named by
      // position (the two files leave different room for passages before them).
      const pairs = (index: MemoryIndex) => {
        const name = (node: number) =>
          node < index.chunkCount ? `p${node}` : `e${node - index.passageCapacity}`;
        const sums = new Map<string, number>();
        const strengths = new Map<string, number>();
        const { graph } = index;
        for (let u = 0; u < graph.nodes; u++) {
          if (graph.strength[u] !== 0) strengths.set(name(u), graph.strength[u]);
          for (const rows of [graph, ...(graph.added ? [graph.added] : [])]) {
            if (u + 1 >= rows.offsets.length) continue;
            for (let k = rows.offsets[u]; k < rows.offsets[u + 1]; k++) {
              const key = `${name(u)}-${name(rows.column[k])}`;
              sums.set(key, (sums.get(key) ?? 0) + rows.weight[k]);
            }
          }
        }
        for (const [key, sum] of sums) if (Math.abs(sum) < 1e-12) sums.delete(key);
        return { sums, strengths };
      };
      const fromLayers = pairs(layered);
      const fromWhole = pairs(whole);
      expect(fromLayers.sums.size).toBe(fromWhole.sums.size);
      for (const [key, sum] of fromWhole.sums) expect(fromLayers.sums.get(key)).toBeCloseTo(sum, 9);
      expect(fromLayers.strengths.size).toBe(fromWhole.strengths.size);
      for (const [key, sum] of fromWhole.strengths) expect(fromLayers.strengths.get(key)).toBeCloseTo(sum, 9);
      for (const query of [
        "parseUser",
        "where is the config loaded",
        "renderChart legend",
        "session 3 decision",
      ])
        for (const mode of MODES) {
          const [a, b] = [
            await rankChunks(layered, query, mode, 10),
            await rankChunks(whole, query, mode, 10),
          ];
          // BM25 and dense read the same numbers in the same order. The graph's push meets a node's
          // edges in another order (its base row, then its added row): scores agree within its tolerance.
          if (mode === "bm25" || mode === "dense") expect(a).toEqual(b);
          expect(a.map((r) => r.chunk)).toEqual(b.map((r) => r.chunk));
          for (let n = 0; n < a.length; n++) expect(a[n].score).toBeCloseTo(b[n].score, 4);
        }
      // Additions that do not check out are not used: recall reads the store.
      writeFileSync(snapshotAdditionsPath(path), readFileSync(snapshotAdditionsPath(path)).subarray(0, 100));
      expect(persistedIndex(path, reader, model.id, false, root)).toBeUndefined();
      expect(readFileSync(join(projectDataDir(root), "errors.log"), "utf8")).toContain(
        "snapshot file unusable",
      );
    } finally {
      reader.close();
    }
    // Past its share the rows are folded into the base: the file a rebuild writes, nothing beside it.
    expect(await refresh({ additionsFrom: 0 })).toBe("extended");
    expect(existsSync(snapshotAdditionsPath(path))).toBe(false);
    expect(readFileSync(path).equals(readFileSync(join(dirname(path), "rebuilt.bin")))).toBe(true);
  });

  test("additions are not made from a damaged page of the base they copy, however little of it the run's window checks: the base is rebuilt", async () => {
    const root = project("snapshot-additions-damaged");
    const records = syntheticConversation(12, 6);
    const path = recallSnapshotPath(root);
    let base = Buffer.alloc(0);
    await indexInTwoRuns(root, records, records.length / 2, () => {
      base = readFileSync(path);
    });
    const model = await loadModel();
    const refresh = async (additionsShare = 1) => {
      const store = openStoreForWrite(root);
      try {
        return await refreshSnapshotFile(path, store, async () => model.id, {
          additionsFrom: 0,
          additionsShare,
          pagesChecked: 1,
        });
      } finally {
        store.close();
      }
    };
    // The first run's base, its nodes' strengths (which additions copy) damaged past page 0.
    writeFileSync(path, base);
    const strength = snapshotSections(path).get("graphStrength")!;
    expect(strength.firstPage).toBeGreaterThan(0);
    const damaged = Buffer.from(base);
    damaged[strength.start + 3] ^= 0xff;
    writeFileSync(path, damaged);
    expect(await refresh()).toBe("rebuilt");
    expect(existsSync(snapshotAdditionsPath(path))).toBe(false);
    expect(() => readSnapshotFile(path, { all: true })).not.toThrow();
    // The same base undamaged keeps the rows beside it.
    writeFileSync(path, base);
    expect(await refresh()).toBe("added");
    // Folding them into a new base copies every page of the old one: all of them are checked first.
    rmSync(snapshotAdditionsPath(path));
    writeFileSync(path, damaged);
    expect(await refresh(1 / 16)).toBe("rebuilt");
    writeFileSync(path, base);
    expect(await refresh(1 / 16)).toBe("extended");
  });

  test("a damaged recall.bin is not used: recall answers from the store and logs it, the next run rebuilds it", async () => {
    const root = project("snapshot-garbled");
    appendRecords(root, syntheticConversation(4, 4));
    await indexProject(root, { llm: null });
    const before = await recall(root, "parseUser", { topK: 3 });
    expect(before.hits.length).toBeGreaterThan(0);
    closeWarmIndexes();
    // The head and header, which opening checks (damaged pages: test/memory-snapshot-file.test.ts).
    garblePage(recallSnapshotPath(root), 0, seededRandom(7));
    expect(() => readSnapshotFile(recallSnapshotPath(root))).toThrow(
      /damaged|not a recall snapshot|unreadable/,
    );
    expect(await recall(root, "parseUser", { topK: 3 })).toEqual(before);
    expect(readFileSync(join(projectDataDir(root), "errors.log"), "utf8")).toContain(
      "snapshot file unusable",
    );
    appendRecords(root, exchange("later", "One more question?", "One more answer."));
    await indexProject(root, { llm: null });
    expect(readSnapshotFile(recallSnapshotPath(root)).arrays.chunkIds.length).toBe(17);
  });

  test("forget rebuilds it without the session: none of its words stay in the file", async () => {
    const root = project("snapshot-forget");
    appendRecords(root, [
      ...syntheticConversation(2, 2),
      ...exchange("secret-session", "Remember zebracorn4417 for me.", "Noted: zebracorn4417."),
    ]);
    await indexProject(root, { llm: null });
    expect(readFileSync(recallSnapshotPath(root)).includes("zebracorn4417")).toBe(true);
    expect((await forgetSession(root, "secret-session")).status).toBe("forgotten");
    expect(readFileSync(recallSnapshotPath(root)).includes("zebracorn4417")).toBe(false);
    expect((await recall(root, "zebracorn4417")).hits).toEqual([]);
  });
});
