import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { scoreBm25 } from "../src/code/bm25.ts";
import { openIndex } from "../src/code/code-search.ts";
import { chunkTerms, termsFromPostings, termsFromText } from "../src/code/rank/expansion.ts";
import { setTuning } from "../src/code/rank/tuning.ts";
import { searchIndex } from "../src/code/search.ts";
import type { CodeIndex } from "../src/code/store.ts";
import { pathTokens, queryTokens } from "../src/code/tokens.ts";
import { codeRepository, tempDir } from "./support/helpers.ts";

/** Every file uses the common words; one holds the rare ones a long message is about. */
const COMMON = "value result option config update handler";
const commonFile = (name: string, n: number) =>
  Array.from(
    { length: n },
    (_, i) =>
      `// ${COMMON} for ${name} ${i}\nexport function ${name}Update${i}(value, option) {\n  const result = handler(config, value, option);\n  return update(result);\n}\n`,
  ).join("\n");

/** A chunk's worth of code that mentions the Ledger type and posts amounts to it, without defining it. */
const ledgerCallers = (i: number) =>
  Array.from(
    { length: 8 },
    (_, j) =>
      `// the Ledger posts amounts ${i}.${j}\nfun postToLedger${i}x${j}(l: Ledger) = l.post(${i * 8 + j})`,
  ).join("\n");

const FILES: Record<string, string> = {
  "src/settings/loader.ts": commonFile("loader", 6),
  "src/settings/writer.ts": commonFile("writer", 6),
  "src/events/dispatch.ts": commonFile("dispatch", 6),
  "src/events/queue.ts": `${commonFile("queue", 3)}\nexport function drainBacklog(queue) {\n  // the backlog is flushed with a watermark so a slow consumer cannot starve the rest\n  return flushWatermark(queue.backlog);\n}\n`,
  // The type's file: its name appears in many chunks, once as its definition.
  "src/ledger/Ledger.kt": [
    ...Array.from({ length: 6 }, (_, i) => ledgerCallers(i)),
    `class Ledger(val entries: MutableList<Long>) {\n${Array.from({ length: 24 }, (_, i) => `  val field${i} = entries.size + ${i}`).join("\n")}\n}`,
    ...Array.from({ length: 6 }, (_, i) => ledgerCallers(i + 6)),
  ].join("\n\n"),
};

let index: CodeIndex;
beforeAll(async () => {
  process.env.TRIFORGE_HOME = tempDir("triforge-home-");
  index = await openIndex(codeRepository(FILES), { refresh: "now" });
});
afterEach(() => setTuning({}));

const fileOf = (chunk: number) => index.files[index.chunkFile[chunk]].path;

/** The postings turned around: each chunk's term ids, less its file's path words. */
function invertedTerms(chunk: number): number[] {
  const { bm25 } = index;
  const own = new Set(pathTokens(fileOf(chunk)).map((token) => bm25.termIds.get(token)));
  const terms: number[] = [];
  for (let t = 0; t < bm25.terms.length; t++)
    for (let p = bm25.offsets[t]; p < bm25.offsets[t + 1]; p++)
      if (bm25.docs[p] === chunk && !own.has(t)) terms.push(t);
  return terms;
}

describe("long queries", () => {
  test("a chunk's terms for feedback, from its text or from the postings turned around: the postings' terms less its path words", () => {
    expect(index.texts.length).toBeGreaterThan(5);
    const sorted = (terms: Int32Array) => [...terms].sort((a, b) => a - b);
    for (let chunk = 0; chunk < index.texts.length; chunk++) {
      const expected = invertedTerms(chunk);
      expect(sorted(termsFromText(index, chunk))).toEqual(expected);
      expect(sorted(termsFromText(index, chunk))).toEqual(expected);
      expect(sorted(termsFromPostings(index, chunk))).toEqual(expected);
      // Read once, then remembered.
      expect(sorted(chunkTerms(index, chunk))).toEqual(expected);
      expect(chunkTerms(index, chunk)).toBe(chunkTerms(index, chunk));
    }
  });

  test("BM25 over a long query's terms: the textbook formula for every chunk, and each matched chunk listed once", () => {
    const { bm25 } = index;
    const terms = queryTokens(
      `Update the handler so the backlog is drained with a watermark; ${COMMON} and the Ledger entries stay as they are`,
    );
    const { scores, matched } = scoreBm25(bm25, terms);
    const n = bm25.lengths.length;
    const expected = new Float64Array(n);
    for (const term of terms) {
      const t = bm25.termIds.get(term);
      if (t === undefined) continue;
      const df = bm25.offsets[t + 1] - bm25.offsets[t];
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (let p = bm25.offsets[t]; p < bm25.offsets[t + 1]; p++) {
        const tf = bm25.freqs[p];
        const norm = 1.2 * (0.25 + (0.75 * bm25.lengths[bm25.docs[p]]) / bm25.averageLength);
        expected[bm25.docs[p]] += (idf * tf * 2.2) / (tf + norm);
      }
    }
    for (let chunk = 0; chunk < n; chunk++) expect(scores[chunk]).toBeCloseTo(expected[chunk], 4);
    const listed = [...matched].sort((x, y) => x - y);
    expect(listed).toEqual([...Array(n).keys()].filter((chunk) => expected[chunk] > 0));
  });

  test("a long message naming many capitalised words still finds the type one of them names", () => {
    const message =
      "Fix posting amounts twice. When a Consumer retries, the Ledger received the same Amount again and Reports showed it; Backlog draining now checks the Watermark first so Records stay unique. Tested with Queue and Dispatch.";
    const top = () =>
      index.texts[searchIndex(index, message, undefined, { topK: 3, content: "code" })[0].chunk];
    expect(top()).toContain("class Ledger(");
    setTuning({ definitionBoost: 0 });
    expect(top()).not.toContain("class Ledger(");
  });

  test("a capitalised word of a sentence finds its type's definition among many chunks that mention it", () => {
    const ranked = searchIndex(index, "Where are amounts posted to the Ledger and kept", undefined, {
      topK: 3,
      content: "code",
    });
    expect(index.texts[ranked[0].chunk]).toContain("class Ledger(");
    setTuning({ definitionBoost: 0 });
    const unboosted = searchIndex(index, "Where are amounts posted to the Ledger and kept", undefined, {
      topK: 3,
      content: "code",
    });
    expect(index.texts[unboosted[0].chunk]).not.toContain("class Ledger(");
  });
});
