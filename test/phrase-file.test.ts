/**
 * The phrase file (memory.phrases.bin): the indexer's synonym upkeep reads the bucket heads' vectors and
 * names from it instead of the entities table. It must give exactly what the store gives, follow the
 * store as it grows, and never outlive what it caches: a damaged record, a forgotten phrase, a store
 * swapped beneath it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { headsFilePath, phraseFilePath, storePath } from "../src/home/paths.ts";
import type { ChatRecord } from "../src/memory/chatlog.ts";
import { forgetSession } from "../src/memory/forget.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { closeWarmIndexes } from "../src/memory/recall/recall.ts";
import { discardStore, openStoreForWrite } from "../src/store/open.ts";
import type { SqliteMemoryStore } from "../src/store/sqlite.ts";
import { BUCKET_LIMIT, bandKeys } from "../src/store/synonyms.ts";
import {
  appendRecords,
  dumpGraph,
  exchange,
  indexRuns,
  lookAlikes,
  memoryHome,
  syntheticConversation,
} from "./support/memory-helpers.ts";
import { headRowList } from "./support/synonym-store.ts";

const { project } = memoryHome();
afterAll(closeWarmIndexes);

const indexed = (name: string, ...runs: ChatRecord[][]) => indexRuns(project(name), ...runs);

/** Every bucket key of the store's phrases, and the vectors' width. */
async function allKeys(store: SqliteMemoryStore): Promise<{ keys: number[]; dim: number }> {
  const { phrases, vectors } = await store.entityVectors();
  const dim = vectors.length / phrases.length;
  return {
    keys: [...new Set(phrases.flatMap((_, i) => bandKeys(vectors.subarray(i * dim, (i + 1) * dim))))],
    dim,
  };
}

/** The heads of every bucket as `key|phrase|vector`, read through the phrase file or the table. */
function heads(
  store: SqliteMemoryStore,
  { keys, dim }: { keys: number[]; dim: number },
  phraseFile: boolean,
  upTo?: number,
): string[] {
  return headRowList(store.synonymSource(upTo, { cacheFiles: phraseFile }), keys, BUCKET_LIMIT, dim)
    .map((r) => `${r.key}|${r.phrase}|${[...(r.vector ?? [])].join(",")}`)
    .sort();
}

const maxId = (store: SqliteMemoryStore) => store.maxEntityId();

describe("the phrase file", () => {
  test("gives the heads and vectors the store gives; it is written on the first read and appended to after", async () => {
    const long = "ConfigurationLoaderForTheDistributedSchedulerOfNightlyBuildsV2";
    const root = await indexed(
      "pf-same",
      lookAlikes("a", 2, 0),
      exchange("long", `Why does ${long} retry?`, `${long} waits for RetryHandler3.`),
      syntheticConversation(1, 2, "b"),
    );
    const file = phraseFilePath(storePath(root))!;
    const store = openStoreForWrite(root) as SqliteMemoryStore;
    try {
      const keys = await allKeys(store);
      const last = maxId(store);
      expect(last).toBeGreaterThan(20);
      rmSync(file, { force: true });
      // Up to an earlier row first: only those rows are in the file, and what it gives is the store's.
      const early = Math.floor(last / 2);
      expect(heads(store, keys, true, early)).toEqual(heads(store, keys, false, early));
      const { ino, size } = statSync(file);
      expect(heads(store, keys, true, last)).toEqual(heads(store, keys, false, last));
      // The rows since were appended to the same file: it grew by their records, nothing rewritten.
      const after = statSync(file);
      expect(after.ino).toBe(ino);
      expect(after.size - 32).toBe(((size - 32) / early) * last);
      const all = heads(store, keys, true);
      expect(all).toEqual(heads(store, keys, false));
      // A name too long for its record: its row comes from the store.
      expect(Buffer.byteLength(long)).toBeGreaterThan(56);
      expect(all.some((r) => r.split("|")[1].includes(long))).toBe(true);
    } finally {
      store.close();
    }
  });

  test("the indexer keeps it as runs add phrases, and its edges are those of a store indexed in one run", async () => {
    const runs = [lookAlikes("a", 2, 0), lookAlikes("b", 2, 20), lookAlikes("c", 1, 40)];
    const several = await indexed("pf-runs", ...runs);
    const once = await indexed("pf-once", runs.flat());
    const file = phraseFilePath(storePath(several))!;
    expect(existsSync(file)).toBe(true);
    const synonyms = (root: string) => dumpGraph(root).edges.filter((e) => e.startsWith("2|"));
    expect(synonyms(several).length).toBeGreaterThan(10);
    expect(synonyms(several)).toEqual(synonyms(once));
    const store = openStoreForWrite(several) as SqliteMemoryStore;
    try {
      // Each run leaves it holding every phrase, its own included: the next run appends nothing.
      const { size, mtimeMs } = statSync(file);
      const record = 8 + (4 * (await store.entityVectors()).vectors.length) / maxId(store) + 56;
      expect(size).toBe(32 + maxId(store) * record);
      const keys = await allKeys(store);
      expect(heads(store, keys, true)).toEqual(heads(store, keys, false));
      expect(statSync(file)).toMatchObject({ size, mtimeMs });
    } finally {
      store.close();
    }
  });

  test("a damaged record: that row comes from the store, and the file is rewritten on the next read", async () => {
    const root = await indexed("pf-damage", lookAlikes("a", 2, 0), lookAlikes("b", 1, 30));
    const file = phraseFilePath(storePath(root))!;
    const store = openStoreForWrite(root) as SqliteMemoryStore;
    try {
      const keys = await allKeys(store);
      const expected = heads(store, keys, false);
      expect(heads(store, keys, true)).toEqual(expected);
      // Every record but the first, middle and last (those opening checks) gets one byte flipped.
      const bytes = readFileSync(file);
      const last = maxId(store);
      const record = (bytes.length - 32) / last;
      const fd = openSync(file, "r+");
      for (let id = 2; id < last; id++)
        if (id !== Math.ceil(last / 2)) {
          const at = 32 + (id - 1) * record + 12;
          writeSync(fd, Buffer.from([bytes[at] ^ 0x40]), 0, 1, at);
        }
      closeSync(fd);
      expect(heads(store, keys, true)).toEqual(expected);
      expect(existsSync(file)).toBe(false);
      expect(heads(store, keys, true)).toEqual(expected);
      expect(readFileSync(file).subarray(32).equals(bytes.subarray(32))).toBe(true);
    } finally {
      store.close();
    }
  });

  test("forget removes it with the phrases it held; the next run writes it without them", async () => {
    const root = await indexed(
      "pf-forget",
      exchange("keep", "Where does ParseConfig live?", "In src/config.ts beside RetryHandler."),
      exchange("gone", "Is ZanzibarSecretProject late?", "ZanzibarSecretProject ships after QuokkaLedger."),
      syntheticConversation(1, 1, "later"),
    );
    const file = phraseFilePath(storePath(root))!;
    expect(readFileSync(file).includes("ZanzibarSecretProject")).toBe(true);
    await forgetSession(root, "gone");
    expect(existsSync(file)).toBe(false);
    // Runs that bring new phrases (the upkeep reads the file for those).
    appendRecords(
      root,
      exchange("after", "Does KestrelQueue drain?", "KestrelQueue drains into OspreyCache."),
    );
    await indexProject(root, { llm: null });
    appendRecords(root, exchange("again", "Who owns HeronPool?", "HeronPool belongs to PelicanTeam."));
    await indexProject(root, { llm: null });
    expect(existsSync(file)).toBe(true);
    const text = readFileSync(file);
    expect(text.includes("ParseConfig")).toBe(true);
    expect(text.includes("ZanzibarSecretProject")).toBe(false);
    expect(text.includes("QuokkaLedger")).toBe(false);
  });

  test("forget's repair reads the phrases that stay and the heads of the buckets none left from the files as they were: the same graph as a forget without them", async () => {
    const runs = [lookAlikes("a", 2, 0), lookAlikes("b", 2, 3), syntheticConversation(1, 2, "c")];
    const withFiles = await indexed("pf-repair-file", ...runs);
    const without = await indexed("pf-repair-table", ...runs);
    const synonyms = (r: string) => dumpGraph(r).edges.filter((e) => e.startsWith("2|"));
    expect(synonyms(withFiles)).toEqual(synonyms(without));
    const files = (root: string) => [phraseFilePath(storePath(root))!, headsFilePath(storePath(root))!];
    for (const file of files(withFiles)) expect(existsSync(file)).toBe(true);
    for (const file of files(without)) rmSync(file);
    for (const root of [withFiles, without])
      expect((await forgetSession(root, "b1")).status).toBe("forgotten");
    expect(synonyms(withFiles).length).toBeGreaterThan(10);
    expect(dumpGraph(withFiles)).toEqual(dumpGraph(without));
    for (const file of files(withFiles)) expect(existsSync(file)).toBe(false);
  });

  test("where it cannot be written (a directory in its place) the upkeep reads the store, and the edges are the same", async () => {
    const runs = [lookAlikes("a", 2, 0), lookAlikes("b", 2, 20)];
    const root = project("pf-blocked");
    mkdirSync(phraseFilePath(storePath(root))!, { recursive: true });
    for (const records of runs) {
      appendRecords(root, records);
      await indexProject(root, { llm: null });
    }
    const once = await indexed("pf-blocked-once", runs.flat());
    const synonyms = (r: string) => dumpGraph(r).edges.filter((e) => e.startsWith("2|"));
    expect(synonyms(root).length).toBeGreaterThan(10);
    expect(synonyms(root)).toEqual(synonyms(once));
    expect(statSync(phraseFilePath(storePath(root))!).isDirectory()).toBe(true);
  });

  test("a damaged store moved aside takes it along; the rebuilt store's next run writes its own", async () => {
    const root = await indexed("pf-discard", lookAlikes("a", 2, 0), syntheticConversation(1, 1, "x"));
    const file = phraseFilePath(storePath(root))!;
    expect(existsSync(file)).toBe(true);
    discardStore(root);
    expect(existsSync(file)).toBe(false);
    await indexProject(root, { llm: null });
    const store = openStoreForWrite(root) as SqliteMemoryStore;
    try {
      const keys = await allKeys(store);
      expect(heads(store, keys, true)).toEqual(heads(store, keys, false));
      expect(existsSync(file)).toBe(true);
    } finally {
      store.close();
    }
  });

  test("a store swapped beneath it: the file is rewritten from the store in its place", async () => {
    const first = await indexed("pf-swap-a", lookAlikes("a", 2, 0), syntheticConversation(1, 1, "x"));
    const second = await indexed(
      "pf-swap-b",
      lookAlikes("q", 2, 60),
      exchange("q-own", "Where is QuillStore?", "QuillStore sits beside RetryHandler."),
      syntheticConversation(1, 2, "y"),
    );
    const file = phraseFilePath(storePath(second))!;
    // The second project's file, then the first project's store copied over the second's.
    expect(existsSync(file)).toBe(true);
    for (const suffix of ["", "-wal", "-shm"]) {
      rmSync(storePath(second) + suffix, { force: true });
      if (existsSync(storePath(first) + suffix))
        copyFileSync(storePath(first) + suffix, storePath(second) + suffix);
    }
    const store = openStoreForWrite(second) as SqliteMemoryStore;
    try {
      const keys = await allKeys(store);
      expect(heads(store, keys, true)).toEqual(heads(store, keys, false));
      expect(readFileSync(file).includes("QuillStore")).toBe(false);
    } finally {
      store.close();
    }
  });
});
