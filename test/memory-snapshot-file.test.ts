import { afterAll, describe, expect, test } from "bun:test";
import { closeSync, existsSync, openSync, readFileSync, truncateSync, writeSync } from "node:fs";
import { join } from "node:path";
import { loadModel } from "../src/embed/source.ts";
import { projectDataDir, recallSnapshotPath, snapshotDamagePath } from "../src/home/paths.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { closeWarmIndexes, rankChunks, recall } from "../src/memory/recall/recall.ts";
import {
  persistedIndex,
  readSnapshotFile,
  refreshSnapshotFile,
  snapshotSections,
} from "../src/memory/recall/snapshot-file.ts";
import {
  guardOf,
  PAGE_BYTES,
  PageGuard,
  pageCrcs,
  SnapshotFileError,
} from "../src/memory/recall/snapshot-pages.ts";
import { openStoreForRead, openStoreForWrite } from "../src/store/open.ts";
import { appendRecords, exchange, memoryHome, syntheticConversation } from "./support/memory-helpers.ts";

const { project } = memoryHome();
afterAll(closeWarmIndexes);

/** Flips one byte of section `name` of the project's recall.bin. */
function damageSection(root: string, name: string): void {
  const path = recallSnapshotPath(root);
  const section = snapshotSections(path).get(name)!;
  expect(section.bytes).toBeGreaterThan(0);
  const at = section.start + Math.floor(section.bytes / 2);
  const byte = readFileSync(path).subarray(at, at + 1);
  const fd = openSync(path, "r+");
  try {
    writeSync(fd, Buffer.from([byte[0] ^ 0xff]), 0, 1, at);
  } finally {
    closeSync(fd);
  }
}

const errorsLog = (root: string) => join(projectDataDir(root), "errors.log");

async function indexedProject(name: string): Promise<string> {
  const root = project(name);
  appendRecords(root, syntheticConversation(4, 4));
  await indexProject(root, { llm: null });
  return root;
}

describe("PageGuard", () => {
  test("checks a page when an element on it is first read, and names the damaged page", () => {
    const data = new Float32Array((3 * PAGE_BYTES) / 4);
    data.fill(1.5);
    const bytes = new Uint8Array(data.buffer);
    const crcs = pageCrcs(bytes);
    bytes[2 * PAGE_BYTES + 7] ^= 1;
    const guard = new PageGuard(bytes, crcs, 4, (page) => `page ${page} damaged`);
    guard.range(0, PAGE_BYTES / 4 + 1);
    expect([...guard.checked]).toEqual([1, 1, 0]);
    expect(() => guard.at((2 * PAGE_BYTES) / 4)).toThrow(new SnapshotFileError("page 2 damaged"));
    expect(() => guard.all()).toThrow(SnapshotFileError);
    expect(guard.checked[2]).toBe(0);
  });
});

describe("recall.bin pages checked as queries read them", () => {
  test("opening checks no section; a bm25 query checks its postings, not the vectors or the graph", async () => {
    const root = await indexedProject("pages-lazy");
    const store = openStoreForRead(root)!;
    try {
      const index = persistedIndex(recallSnapshotPath(root), store, (await loadModel()).id, false, root)!;
      const { arrays } = index;
      const checked = (data: ArrayBufferView) => guardOf(data)!.checked.reduce((a, b) => a + b, 0);
      for (const data of [
        arrays.vectors,
        arrays.chunkPostings.docs,
        arrays.graph.column,
        arrays.edges.weight,
      ])
        expect(checked(data)).toBe(0);
      expect((await rankChunks(index, "parseUser", "bm25", 5)).length).toBeGreaterThan(0);
      expect(checked(arrays.chunkPostings.docs)).toBeGreaterThan(0);
      expect(checked(arrays.vectors)).toBe(0);
      expect(checked(arrays.graph.column)).toBe(0);
      await rankChunks(index, "parseUser", "hybrid", 5);
      expect(checked(arrays.vectors)).toBe(guardOf(arrays.vectors)!.checked.length);
      expect(checked(arrays.graph.column)).toBeGreaterThan(0);
      // Only the indexer reads the stored edges.
      expect(checked(arrays.edges.weight)).toBe(0);
    } finally {
      store.close();
    }
  });

  test("a damaged page a query reads: the same answer from the store, logged, and the next run rebuilds the file", async () => {
    const root = await indexedProject("pages-read");
    const before = await recall(root, "parseUser", { topK: 3 });
    expect(before.hits.length).toBeGreaterThan(0);
    closeWarmIndexes();
    damageSection(root, "vectors");
    const path = recallSnapshotPath(root);
    expect(() => readSnapshotFile(path)).not.toThrow();
    expect(() => readSnapshotFile(path, { all: true })).toThrow(/page 0 of section vectors damaged/);
    expect(await recall(root, "parseUser", { topK: 3 })).toEqual(before);
    expect(readFileSync(errorsLog(root), "utf8")).toContain("section vectors damaged");
    // The same process keeps answering from the store, without another error.
    const logged = readFileSync(errorsLog(root), "utf8");
    expect((await recall(root, "parseUser", { topK: 3, mode: "dense" })).hits.length).toBeGreaterThan(0);
    expect(readFileSync(errorsLog(root), "utf8")).toBe(logged);
    appendRecords(root, exchange("later", "One more question?", "One more answer."));
    await indexProject(root, { llm: null });
    expect(readSnapshotFile(path, { all: true }).arrays.chunkIds.length).toBe(17);
    closeWarmIndexes();
    expect((await recall(root, "parseUser", { topK: 3 })).hits.length).toBe(3);
    expect(readFileSync(errorsLog(root), "utf8")).toBe(logged);
  });

  test("a damaged page no query reads: recall answers from the file, the indexer's full check rebuilds it", async () => {
    const root = await indexedProject("pages-unread");
    const before = await recall(root, "parseUser", { topK: 3 });
    closeWarmIndexes();
    damageSection(root, "edgeWeight");
    const path = recallSnapshotPath(root);
    for (const mode of ["hybrid", "graph", "dense", "bm25"] as const)
      expect((await recall(root, "parseUser", { topK: 3, mode })).hits.length).toBeGreaterThan(0);
    expect(await recall(root, "parseUser", { topK: 3 })).toEqual(before);
    expect(existsSync(errorsLog(root))).toBe(false);
    expect(() => readSnapshotFile(path, { all: true })).toThrow(/section edgeWeight damaged/);
    const store = openStoreForWrite(root);
    try {
      const model = await loadModel();
      expect(await refreshSnapshotFile(path, store, async () => model.id)).toBe("rebuilt");
    } finally {
      store.close();
    }
    expect(readSnapshotFile(path, { all: true }).arrays.chunkIds.length).toBe(16);
  });

  test("a larger file is checked a window of pages a run, each run on from the last: a damaged page no query reads is found on the run that reaches it", async () => {
    const root = await indexedProject("pages-window");
    const path = recallSnapshotPath(root);
    const { pages } = readSnapshotFile(path);
    const section = snapshotSections(path).get("factObject")!;
    // damageSection flips the section's middle byte.
    const damagedPage = section.firstPage + Math.floor(Math.floor(section.bytes / 2) / PAGE_BYTES);
    const window = 2;
    expect(damagedPage).toBeGreaterThanOrEqual(2 * window);
    expect(pages).toBeGreaterThan(window);
    damageSection(root, "factObject");
    const model = await loadModel();
    const store = openStoreForWrite(root);
    const outcomes: string[] = [];
    try {
      for (let run = 0; run < pages && !outcomes.includes("rebuilt"); run++)
        outcomes.push(await refreshSnapshotFile(path, store, async () => model.id, { pagesChecked: window }));
    } finally {
      store.close();
    }
    const reaching = Math.floor(damagedPage / window);
    expect(outcomes).toEqual([...Array(reaching).fill("current"), "rebuilt"]);
    expect(() => readSnapshotFile(path, { all: true })).not.toThrow();
  });

  test("a reader that meets a damaged page marks the file, and the next run checks it whole and rebuilds it", async () => {
    const root = await indexedProject("pages-marked");
    const before = await recall(root, "parseUser", { topK: 3 });
    closeWarmIndexes();
    const path = recallSnapshotPath(root);
    const section = snapshotSections(path).get("vectors")!;
    // Past the first window: only the reader's mark makes this run look there.
    expect(section.firstPage).toBeGreaterThanOrEqual(1);
    damageSection(root, "vectors");
    expect((await recall(root, "parseUser", { topK: 3, mode: "dense" })).hits.length).toBeGreaterThan(0);
    expect(existsSync(snapshotDamagePath(path))).toBe(true);
    expect(readFileSync(errorsLog(root), "utf8")).toContain("section vectors damaged");
    closeWarmIndexes();
    const model = await loadModel();
    const store = openStoreForWrite(root);
    try {
      expect(await refreshSnapshotFile(path, store, async () => model.id, { pagesChecked: 1 })).toBe(
        "rebuilt",
      );
      expect(await refreshSnapshotFile(path, store, async () => model.id, { pagesChecked: 1 })).toBe(
        "current",
      );
    } finally {
      store.close();
    }
    expect(existsSync(snapshotDamagePath(path))).toBe(false);
    expect(() => readSnapshotFile(path, { all: true })).not.toThrow();
    expect(await recall(root, "parseUser", { topK: 3 })).toEqual(before);
  });

  test("a damaged page of the row ids is found at open: browsing reads them all, outside any query", async () => {
    const root = await indexedProject("pages-ids");
    const before = await recall(root, "parseUser", { topK: 3 });
    closeWarmIndexes();
    damageSection(root, "chunkIds");
    const store = openStoreForRead(root)!;
    try {
      const model = await loadModel();
      expect(persistedIndex(recallSnapshotPath(root), store, model.id, false, root)).toBeUndefined();
    } finally {
      store.close();
    }
    expect(readFileSync(errorsLog(root), "utf8")).toContain("section chunkIds damaged");
    expect(await recall(root, "parseUser", { topK: 3 })).toEqual(before);
  });

  test("a truncated file is refused at open, and recall answers from the store", async () => {
    const root = await indexedProject("pages-truncated");
    const before = await recall(root, "parseUser", { topK: 3 });
    closeWarmIndexes();
    const path = recallSnapshotPath(root);
    const sections = snapshotSections(path);
    truncateSync(path, sections.get("graphColumn")!.start + 1);
    expect(() => readSnapshotFile(path)).toThrow(/out of bounds/);
    expect(await recall(root, "parseUser", { topK: 3 })).toEqual(before);
    expect(readFileSync(errorsLog(root), "utf8")).toContain("snapshot file unusable");
  });
});
