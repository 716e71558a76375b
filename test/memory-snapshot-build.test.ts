import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadModel } from "../src/embed/source.ts";
import { COLLECT_EVERY_STEPS } from "../src/home/garbage.ts";
import { recallSnapshotPath } from "../src/home/paths.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { appendDocuments, NO_POSTINGS, type Postings } from "../src/memory/recall/bm25.ts";
import { closeWarmIndexes } from "../src/memory/recall/recall.ts";
import { extendArrays, PostingsBuilder, type SnapshotArrays } from "../src/memory/recall/snapshot-build.ts";
import { arraysOfStore, passageCapacityFor, writeSnapshotFile } from "../src/memory/recall/snapshot-file.ts";
import { openStoreForWrite } from "../src/store/open.ts";
import { NO_MARKS } from "../src/store/types.ts";
import { appendRecords, exchange, memoryHome, syntheticConversation } from "./support/memory-helpers.ts";
import { seededRandom } from "./support/random.ts";

const { project, home } = memoryHome();
afterAll(closeWarmIndexes);

function postingsOf(p: Postings) {
  return {
    terms: Array.from({ length: p.terms.count }, (_, i) => p.terms.at(i)),
    start: Array.from(p.start),
    docs: Array.from(p.docs),
    tfs: Array.from(p.tfs),
    docLength: Array.from(p.docLength),
    totalLength: p.totalLength,
  };
}

describe("the recall snapshot built from the whole store", () => {
  test("postings built entry by entry equal appendDocuments over the same documents", () => {
    const random = seededRandom(11);
    const words = ["parse", "user", "Zeta", "zeta", "é", "a", "b10", "b9", "config", "z"];
    const documents = Array.from({ length: 200 }, () =>
      Array.from({ length: Math.floor(random() * 12) }, () => words[Math.floor(random() * words.length)]),
    );
    const builder = new PostingsBuilder(documents.length);
    documents.forEach((tokens, doc) => {
      builder.add(doc, tokens);
    });
    expect(postingsOf(builder.finish())).toEqual(postingsOf(appendDocuments(NO_POSTINGS, documents)));
  });

  test("read slice by slice, it writes the same file as one delta of every row", async () => {
    const root = project("streamed-build");
    appendRecords(root, [
      ...syntheticConversation(6, 5),
      ...exchange("s-names", "Thanks, Mel. Where is loadConfig?", "Hey Caroline! In src/config.ts."),
    ]);
    await indexProject(root, { llm: null });
    const model = await loadModel();
    const store = openStoreForWrite(root);
    try {
      const delta = store.snapshotDelta({ ...NO_MARKS, deletions: store.deletions() }, model.id)!;
      const whole: SnapshotArrays = extendArrays(undefined, delta, passageCapacityFor(delta.chunks.length));
      expect(whole.chunkIds.length).toBeGreaterThan(20);
      const files: Buffer[] = [];
      // Slices of 3 rows: chunks, facts and the sessions running across slices. One row a slice: more
      // slices than the build's collections are paced at (GarbageBound), so two or more run mid-build.
      expect(whole.chunkIds.length + whole.factIds.length).toBeGreaterThan(2 * COLLECT_EVERY_STEPS);
      for (const [name, arrays] of [
        ["whole", whole],
        ["sliced", arraysOfStore(store, model.id, 3)!],
        ["default", arraysOfStore(store, model.id)!],
        ["one row a slice", arraysOfStore(store, model.id, 1)!],
      ] as const) {
        const path = join(home, `${name}.bin`);
        writeSnapshotFile(path, arrays, model.id);
        files.push(readFileSync(path));
      }
      expect(Buffer.compare(files[1], files[0])).toBe(0);
      expect(Buffer.compare(files[2], files[0])).toBe(0);
      expect(Buffer.compare(files[3], files[0])).toBe(0);
      // The indexer's own file (built the same way at its first run) is that file too.
      expect(Buffer.compare(readFileSync(recallSnapshotPath(root)), files[0])).toBe(0);
      // Vectors of another model: nothing to build from (recall re-embeds from the store).
      expect(arraysOfStore(store, "another-model")).toBeUndefined();
    } finally {
      store.close();
    }
  });
});
