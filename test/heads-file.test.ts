/**
 * The heads file (memory.heads.bin): the indexer's synonym upkeep reads every bucket's heads from its
 * base and the phrases after it (its log's, then phrase_keys' rows past the log). Whatever state it is
 * in (a base of an earlier row, a log, phrases the log lacks, a torn log, a damaged base, another
 * store, a base merged with its log), the heads the synonym source gives must be the table's.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { headsFilePath, storePath } from "../src/home/paths.ts";
import { forgetSession } from "../src/memory/forget.ts";
import { closeWarmIndexes } from "../src/memory/recall/recall.ts";
import { openStoreForWrite } from "../src/store/open.ts";
import type { SqliteMemoryStore } from "../src/store/sqlite.ts";
import { BUCKET_LIMIT, bandKeys, LSH_BANDS, LSH_BITS } from "../src/store/synonyms.ts";
import { indexRuns, lookAlikes, memoryHome, syntheticConversation } from "./support/memory-helpers.ts";
import { headRowList } from "./support/synonym-store.ts";

const { project } = memoryHome();
afterAll(closeWarmIndexes);

/** The store's bucket keys and every key one bit from them (the buckets a session probes), and the vectors' width. */
async function probedKeys(store: SqliteMemoryStore): Promise<{ keys: number[]; dim: number }> {
  const { phrases, vectors } = await store.entityVectors();
  const dim = vectors.length / phrases.length;
  const keys = new Set<number>();
  for (let i = 0; i < phrases.length; i++)
    for (const key of bandKeys(vectors.subarray(i * dim, (i + 1) * dim))) {
      keys.add(key);
      for (let bit = 0; bit < LSH_BITS; bit++) keys.add(key ^ (1 << bit));
    }
  return { keys: [...keys], dim };
}

/** Every bucket's heads as `key|phrase|vector`, with the cache files or from the table alone, up to row `upTo`. */
function heads(
  store: SqliteMemoryStore,
  { keys, dim }: { keys: number[]; dim: number },
  cached: boolean,
  upTo?: number,
) {
  return headRowList(store.synonymSource(upTo, { cacheFiles: cached }), keys, BUCKET_LIMIT, dim)
    .map((r) => `${r.key}|${r.phrase}|${[...(r.vector ?? [])].join(",")}`)
    .sort();
}

/** A store of three runs, its heads file removed. */
async function threeRuns(name: string): Promise<{ root: string; file: string }> {
  const root = await indexRuns(
    project(name),
    lookAlikes("a", 2, 0),
    syntheticConversation(1, 2, `${name}b`),
    lookAlikes("c", 2, 40),
  );
  const file = headsFilePath(storePath(root))!;
  expect(existsSync(file)).toBe(true);
  return { root, file };
}

describe("the heads file", () => {
  test("its base, its log and the phrases its log lacks give the table's heads, at every row", async () => {
    const { root, file } = await threeRuns("hf-same");
    const store = openStoreForWrite(root) as SqliteMemoryStore;
    try {
      const keys = await probedKeys(store);
      const last = store.maxEntityId();
      const early = Math.floor(last / 3);
      const middle = Math.floor((2 * last) / 3);
      // A base of an early row, no log: every phrase after it is keyed from its vector.
      store.refreshHeadsFile({ upTo: early });
      const base = statSync(file).size;
      for (const upTo of [early, middle, last])
        expect(heads(store, keys, true, upTo)).toEqual(heads(store, keys, false, upTo));
      // The log up to the middle row, then to the last: one record a phrase (its id, rank, keys and
      // check), the base kept.
      const record = (4 + LSH_BANDS) * 4;
      store.refreshHeadsFile({ upTo: middle, rebuildShare: Number.POSITIVE_INFINITY });
      expect(statSync(file).size).toBe(base + (middle - early) * record);
      store.refreshHeadsFile({ rebuildShare: Number.POSITIVE_INFINITY });
      expect(statSync(file).size).toBe(base + (last - early) * record);
      for (const upTo of [early, middle, last])
        expect(heads(store, keys, true, upTo)).toEqual(heads(store, keys, false, upTo));
      // Past the share base and log are merged into a new base, no log: the same file as one built
      // from the table alone.
      store.refreshHeadsFile();
      const merged = readFileSync(file);
      expect(merged.length).toBeGreaterThan(base);
      expect(heads(store, keys, true)).toEqual(heads(store, keys, false));
      rmSync(file);
      store.refreshHeadsFile();
      expect(readFileSync(file).equals(merged)).toBe(true);
    } finally {
      store.close();
    }
  });

  test("a torn log and a damaged base read as the table; the next refresh mends them", async () => {
    const { root, file } = await threeRuns("hf-damage");
    const store = openStoreForWrite(root) as SqliteMemoryStore;
    try {
      const keys = await probedKeys(store);
      const expected = heads(store, keys, false);
      const last = store.maxEntityId();
      store.refreshHeadsFile({ upTo: Math.floor(last / 2) });
      store.refreshHeadsFile({ rebuildShare: Number.POSITIVE_INFINITY });
      // The last record torn in half: its phrase and those after are keyed from their vectors.
      const whole = statSync(file).size;
      truncateSync(file, whole - 36);
      expect(heads(store, keys, true)).toEqual(expected);
      // The next refresh writes its record over the torn half.
      store.refreshHeadsFile({ rebuildShare: Number.POSITIVE_INFINITY });
      expect(statSync(file).size).toBe(whole);
      expect(heads(store, keys, true)).toEqual(expected);
      // A byte of the base flipped: the file is not used (its CRC), and the next refresh builds it again.
      store.refreshHeadsFile();
      const good = readFileSync(file);
      const bytes = Buffer.from(good);
      bytes[40] ^= 0xff;
      writeFileSync(file, bytes);
      expect(heads(store, keys, true)).toEqual(expected);
      store.refreshHeadsFile();
      expect(readFileSync(file).equals(good)).toBe(true);
      expect(heads(store, keys, true)).toEqual(expected);
    } finally {
      store.close();
    }
  });

  test("a base is of one store: forget removes it, and a store of other deletions does not read it", async () => {
    const { root, file } = await threeRuns("hf-forget");
    const before = readFileSync(file);
    // A build killed before its rename leaves this; forget takes it too.
    writeFileSync(`${file}.tmp`, before);
    await forgetSession(root, "hf-forgetb0");
    expect(existsSync(file)).toBe(false);
    expect(existsSync(`${file}.tmp`)).toBe(false);
    const store = openStoreForWrite(root) as SqliteMemoryStore;
    try {
      const keys = await probedKeys(store);
      // The old file put back: it names the store before the deletion, so the table is read.
      writeFileSync(file, before);
      expect(heads(store, keys, true)).toEqual(heads(store, keys, false));
    } finally {
      store.close();
    }
  });
});
