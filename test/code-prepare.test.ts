import { beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { workspaceGenerator } from "../benchmark/generated-workspace.ts";
import { openIndex } from "../src/code/code-search.ts";
import { INT8_SCAN_FROM_ROWS } from "../src/code/dense.ts";
import { postingsTurned } from "../src/code/rank/expansion.ts";
import { prepareIndex, searchIndex } from "../src/code/search.ts";
import { type CodeIndex, loadIndex } from "../src/code/store.ts";
import { loadModel } from "../src/embed/source.ts";
import { RagService } from "../src/rag/service.ts";
import { tempDir } from "./support/helpers.ts";

// A workspace past the int8 scan's threshold (ten chunks a file), so every prepared part is built.
const FILES = Math.ceil(INT8_SCAN_FROM_ROWS / 10) + 10;
// Made here, not in beforeAll: the folders must last until the tests have read the saved index.
const home = tempDir("triforge-home-");
const root = tempDir("triforge-prepare-");
let queries: string[];
let built: CodeIndex;
beforeAll(async () => {
  process.env.TRIFORGE_HOME = home;
  workspaceGenerator(3).generate(root, FILES);
  queries = workspaceGenerator(4).queries(40);
  built = await openIndex(root, { refresh: "now" });
});

/** The top 8 of every query, with scores. */
async function answers(index: CodeIndex) {
  const model = await loadModel();
  const out = [];
  for (const query of queries)
    out.push(searchIndex(index, query, await model.embed(query), { topK: 8, content: "all" }));
  return out;
}

test("an index prepared as it loads answers exactly as one whose first queries build the same parts", async () => {
  // Two copies read from disk, neither searched yet.
  const prepared = loadIndex(built.root, built.modelId)!;
  const unprepared = loadIndex(built.root, built.modelId)!;
  expect(prepared.texts.length).toBeGreaterThanOrEqual(INT8_SCAN_FROM_ROWS);
  expect(postingsTurned(prepared)).toBe(false);
  prepareIndex(prepared);
  // The feedback's chunk → terms table is built at load, not by a query (the postings here are
  // under the size a query would turn around itself, so the unprepared index turns them on its first sentence).
  expect(postingsTurned(prepared)).toBe(true);
  expect(postingsTurned(unprepared)).toBe(false);
  const fromPrepared = await answers(prepared);
  expect(fromPrepared).toEqual(await answers(unprepared));
  expect(fromPrepared.every((hits) => hits.length === 8)).toBe(true);
});

test("the HTTP service loads and prepares its indexes on warm(), before any query", async () => {
  // `built` is the loaded index the service will find (openIndex's), not searched yet.
  expect(postingsTurned(built)).toBe(false);
  const rag = new RagService([root], { catalogPath: join(home, "catalog.db") });
  await rag.warm();
  expect(postingsTurned(await openIndex(root, { refresh: "never" }))).toBe(true);
  expect(postingsTurned(built)).toBe(true);
  // Its warm-up searches fill what queries keep across queries (path penalties, chunk terms): the
  // answers after them are an untouched copy's.
  const untouched = loadIndex(built.root, built.modelId)!;
  prepareIndex(untouched);
  expect(await answers(built)).toEqual(await answers(untouched));
});
